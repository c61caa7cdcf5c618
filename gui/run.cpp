#include "gui/run.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/program/program.hpp"
#include "sim/step.hpp"
#include "sim/trace.hpp"

namespace ringsim::gui {

using models::InputError;

namespace {

models::ScenarioSpec with_layout(const models::ScenarioSpec& base, const models::LayoutSpec& layout) {
  auto s = base;
  s.layout = layout;
  return s;
}

// The layouts compared side by side run on one implementation (models::Catalog::choose_implementation).
models::ScenarioSpec with_impl(const models::ScenarioSpec& base, const std::vector<models::LayoutSpec>& layouts,
                               const models::Catalog& catalog) {
  auto s = base;
  const auto hw = s.hardware_file.empty() ? catalog.hardware(s.hardware) : models::Hardware::load_file(s.hardware_file);
  s.impl = catalog.choose_implementation(s, hw, layouts);
  return s;
}

// n_seq values around the chosen one, each still divisible by the ring size.
std::vector<std::int64_t> sweep_points(std::int64_t n_seq) {
  std::vector<std::int64_t> out;
  for (int e = -4; e <= 4; ++e) {
    const double v = std::ldexp(static_cast<double>(n_seq), e);
    if (v >= 1 && v <= 1e8 && std::floor(v) == v) out.push_back(static_cast<std::int64_t>(v));
  }
  return out;
}

}  // namespace

void validate(const models::ScenarioSpec& base_in, const std::vector<models::LayoutSpec>& layouts,
              const models::Catalog& catalog) {
  const auto base = with_impl(base_in, layouts, catalog);
  for (const auto& l : layouts) (void)models::resolve(with_layout(base, l), catalog);
}

std::optional<RunResult> compute_run(const models::ScenarioSpec& base_in, const std::vector<models::LayoutSpec>& layouts,
                                     const models::Catalog& catalog, const std::atomic<bool>& cancel,
                                     const std::function<void(double)>& progress) {
  const auto base = with_impl(base_in, layouts, catalog);
  RunResult result;
  result.sweep_n_seq = sweep_points(base.n_seq);
  const double n_layouts = static_cast<double>(layouts.size());
  // Work units: the matrix rounds of each layout count 1, the sweep the other half.
  for (std::size_t li = 0; li < layouts.size(); ++li) {
    LayoutRun run;
    run.layout = layouts[li].text();
    run.scenario = std::make_unique<models::ResolvedScenario>(models::resolve(with_layout(base, layouts[li]), catalog));
    // The ring's (device, round) blocks, in the strategy's schedule (usp: its ring part); a
    // strategy without a ring fills each device's row with its kernels' work per round.
    const auto& rs = run.scenario->ring_scenario();
    const auto& prog = *run.scenario->program;
    const auto& w = *rs.workload;
    const std::int64_t n = prog.has_ring() ? w.devices() : run.scenario->spec.sp;
    run.n = n;
    const auto cells = static_cast<std::size_t>(n * n);
    run.area.resize(cells);
    run.pairs.resize(cells);
    run.tiles.resize(cells);
    const auto c = static_cast<double>(rs.layout->block());
    const auto t = rs.tile;
    const double full_tiles = static_cast<double>(((rs.layout->block() + t.q - 1) / t.q) *
                                                  ((rs.layout->block() + t.k - 1) / t.k)) *
                              static_cast<double>(rs.mask->heads());
    const double full_area = c * c * static_cast<double>(rs.mask->heads());
    if (!prog.has_ring()) {
      const auto pairs = models::device_pairs(*run.scenario);
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i) {
          const auto k = static_cast<std::size_t>(j * n + i);
          const float v = static_cast<float>(static_cast<double>(pairs[static_cast<std::size_t>(j)]) /
                                             static_cast<double>(n) / full_area);
          run.area[k] = run.pairs[k] = run.tiles[k] = v;
        }
    }
    for (std::int64_t i = 0; prog.has_ring() && i < n; ++i) {
      if (cancel.load(std::memory_order_relaxed)) return std::nullopt;
      for (std::int64_t j = 0; j < n; ++j) {
        const auto kv = prog.kv_position(j, i);
        const auto& b = w.block(((j - kv) % n + n) % n, j);
        const auto k = static_cast<std::size_t>(j * n + i);
        run.area[k] = static_cast<float>(static_cast<double>(b.visited_area) / full_area);
        run.pairs[k] = static_cast<float>(static_cast<double>(b.allowed_pairs) / full_area);
        run.tiles[k] = static_cast<float>(static_cast<double>(b.tiles_visited) / full_tiles);
      }
      if (progress && (i % 16 == 0 || i + 1 == n))
        progress((static_cast<double>(li) + 0.5 * static_cast<double>(i + 1) / static_cast<double>(n)) / n_layouts);
    }
    run.prediction = models::predict(*run.scenario);
    if (cancel.load(std::memory_order_relaxed)) return std::nullopt;
    const std::int64_t devices = run.scenario->spec.mp * run.scenario->spec.sp;
    if (devices <= kMaxSimulatedDevices) {
      run.timeline = timeline_from_simulation(*run.scenario);
    } else {
      run.timeline = timeline_from_prediction(run);
      run.timeline.note = "one layer's forward ring, analytic lock-step rounds (" + std::to_string(devices) +
                          " devices: more than the " + std::to_string(kMaxSimulatedDevices) +
                          " the simulator runs interactively)";
      if (run.n > 64) run.timeline.note += "; first 64 of " + std::to_string(run.n) + " devices";
    }
    for (std::size_t s = 0; s < result.sweep_n_seq.size(); ++s) {
      if (cancel.load(std::memory_order_relaxed)) return std::nullopt;
      auto spec = with_layout(base, layouts[li]);
      spec.n_seq = result.sweep_n_seq[s];
      double step = std::numeric_limits<double>::quiet_NaN();
      try {
        step = models::predict(models::resolve(spec, catalog)).step_s;
      } catch (const InputError&) {
        // Not every neighbouring n_seq is possible (divisibility, tile > block): a gap.
      }
      run.sweep_step_s.push_back(step);
      if (progress)
        progress((static_cast<double>(li) + 0.5 + 0.5 * static_cast<double>(s + 1) /
                                                    static_cast<double>(result.sweep_n_seq.size())) /
                 n_layouts);
    }
    result.layouts.push_back(std::move(run));
  }
  return result;
}

Timeline timeline_from_prediction(const LayoutRun& run, std::int64_t max_devices) {
  Timeline tl;
  const auto& s = run.scenario->ring_scenario();
  const std::int64_t lanes = std::min(run.n, max_devices);
  for (std::int64_t j = 0; j < lanes; ++j) tl.lanes.push_back("device " + std::to_string(j));
  tl.lanes.emplace_back("link");
  const int link = static_cast<int>(lanes);
  double t = 0;
  for (const auto& r : run.prediction.rounds_fwd) {
    for (std::int64_t j = 0; j < lanes; ++j) {
      const double comp = s.cost->attention_fwd_s(s.workload->block(r.round, j));
      const int lane = static_cast<int>(j);
      if (comp > 0) tl.spans.push_back({lane, t, t + comp, SpanKind::Compute, r.round, "attention fwd"});
      if (r.round_s > comp) tl.spans.push_back({lane, t + comp, t + r.round_s, SpanKind::Wait, -1, {}});
    }
    if (r.transfer_s > 0) tl.spans.push_back({link, t, t + r.transfer_s, SpanKind::Transfer, r.round, "K/V"});
    t += r.round_s;
  }
  tl.end_s = t;
  // The analytic rounds' lanes are the workload's devices: the ring stage's positions.
  tl.ring_devices = run.n;
  return tl;
}

namespace {

// One layer of the step, traced: the model cut to one layer (restored before returning, also when
// the simulation throws), since the whole step repeats the same layer and its trace would be layers
// times larger.
sim::StepResult simulate_one_layer(models::ResolvedScenario& scenario, const sim::StepOptions& opt) {
  struct Restore {
    models::ResolvedScenario& s;
    std::int64_t layers;
    ~Restore() { s.model.layers = layers; }
  } restore{scenario, scenario.model.layers};
  scenario.model.layers = 1;
  return sim::simulate_step(scenario, opt);
}

}  // namespace

std::string chrome_trace_of(models::ResolvedScenario& scenario) {
  sim::StepOptions opt;
  opt.record_trace = true;
  return sim::chrome_trace_json(simulate_one_layer(scenario, opt));
}

Timeline timeline_from_simulation(models::ResolvedScenario& scenario, std::int64_t max_devices) {
  sim::StepOptions opt;
  opt.record_trace = true;
  const sim::StepResult r = simulate_one_layer(scenario, opt);
  Timeline tl;
  tl.simulated = true;
  tl.end_s = r.step_s;
  const std::int64_t shown = std::min(r.devices, max_devices);
  // The simulator's lanes are 2d (compute stream of device d in ring order) and 2d + 1 (its
  // copy engine); the GUI keeps that order under shorter names.
  for (std::int64_t d = 0; d < shown; ++d) {
    tl.lanes.push_back("dev " + std::to_string(d));
    tl.lanes.push_back("dev " + std::to_string(d) + " copy");
  }
  std::vector<std::vector<std::pair<double, double>>> busy(static_cast<std::size_t>(shown));
  for (const auto& sp : r.trace) {
    if (sp.lane >= 2 * shown) continue;
    const int lane = static_cast<int>(sp.lane);
    const double end = sp.start_s + sp.duration_s;
    SpanKind kind = SpanKind::Other;
    if (sp.lane % 2 == 1)
      kind = sp.name == "dK/dV" ? SpanKind::GradTransfer : SpanKind::Transfer;
    else if (sp.name.starts_with("attn"))
      kind = SpanKind::Compute;
    if (sp.lane % 2 == 0) busy[static_cast<std::size_t>(sp.lane / 2)].emplace_back(sp.start_s, end);
    tl.spans.push_back({lane, sp.start_s, end, kind, sp.round, sp.name});
  }
  if (scenario.strategy.kind == models::StrategyKind::Ring && scenario.spec.mp == 1) tl.ring_devices = r.devices;
  // Idle time is what the simulator does not record: the gaps between a compute stream's
  // spans, up to the end of the step.
  for (std::size_t d = 0; d < busy.size(); ++d) {
    auto& b = busy[d];
    std::sort(b.begin(), b.end());
    double t = 0;
    const double eps = 1e-12 * r.step_s;  // rounding of tick -> second conversions, not waiting
    for (const auto& [start, end] : b) {
      if (start - t > eps) tl.spans.push_back({static_cast<int>(2 * d), t, start, SpanKind::Wait, -1, {}});
      t = std::max(t, end);
    }
    if (r.step_s - t > eps) tl.spans.push_back({static_cast<int>(2 * d), t, r.step_s, SpanKind::Wait, -1, {}});
  }
  tl.note = "one layer, discrete-event simulation (" + r.topology + ", " +
            (opt.sync == sim::Sync::Barrier ? "lock-step" : "asynchronous") + ", " + std::to_string(opt.buffers) +
            " K/V buffer" + (opt.buffers == 1 ? "" : "s") + ")";
  if (r.devices > shown)
    tl.note += "; first " + std::to_string(shown) + " of " + std::to_string(r.devices) + " devices";
  if (r.trace_truncated) tl.note += "; trace truncated";
  return tl;
}

std::pair<std::int64_t, std::int64_t> parse_pair(const std::string& text, const std::string& field) {
  const auto x = text.find_first_of("xX");
  auto num = [&](std::string_view v) {
    std::int64_t out = 0;
    const auto* end = v.data() + v.size();
    const auto [p, ec] = std::from_chars(v.data(), end, out);
    if (v.empty() || ec != std::errc() || p != end || out <= 0)
      throw InputError({}, 0, field, "expected AxB with positive integers, got '" + text + "'");
    return out;
  };
  if (x == std::string::npos) throw InputError({}, 0, field, "expected AxB (e.g. 1x8), got '" + text + "'");
  const std::string_view v(text);
  return {num(v.substr(0, x)), num(v.substr(x + 1))};
}

}  // namespace ringsim::gui
