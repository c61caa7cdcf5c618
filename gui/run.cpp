#include "gui/run.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "models/error.hpp"

namespace ringsim::gui {

using models::InputError;

namespace {

models::ScenarioSpec with_layout(const models::ScenarioSpec& base, const std::string& layout) {
  auto s = base;
  s.layout = layout;
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

void validate(const models::ScenarioSpec& base, const std::vector<std::string>& layouts,
              const models::Catalog& catalog) {
  for (const auto& l : layouts) (void)models::resolve(with_layout(base, l), catalog);
}

std::optional<RunResult> compute_run(const models::ScenarioSpec& base, const std::vector<std::string>& layouts,
                                     const models::Catalog& catalog, const std::atomic<bool>& cancel,
                                     const std::function<void(double)>& progress) {
  RunResult result;
  result.sweep_n_seq = sweep_points(base.n_seq);
  const double n_layouts = static_cast<double>(layouts.size());
  // Work units: the matrix rounds of each layout count 1, the sweep the other half.
  for (std::size_t li = 0; li < layouts.size(); ++li) {
    LayoutRun run;
    run.layout = layouts[li];
    run.scenario = std::make_unique<models::ResolvedScenario>(models::resolve(with_layout(base, run.layout), catalog));
    const auto& w = *run.scenario->workload;
    const std::int64_t n = w.devices();
    run.n = n;
    const auto cells = static_cast<std::size_t>(n * n);
    run.area.resize(cells);
    run.pairs.resize(cells);
    run.tiles.resize(cells);
    const auto c = static_cast<double>(run.scenario->layout->block());
    const auto t = run.scenario->tile;
    const double full_tiles = static_cast<double>(((run.scenario->layout->block() + t.q - 1) / t.q) *
                                                  ((run.scenario->layout->block() + t.k - 1) / t.k)) *
                              static_cast<double>(run.scenario->mask->heads());
    const double full_area = c * c * static_cast<double>(run.scenario->mask->heads());
    for (std::int64_t i = 0; i < n; ++i) {
      if (cancel.load(std::memory_order_relaxed)) return std::nullopt;
      for (std::int64_t j = 0; j < n; ++j) {
        const auto& b = w.block(i, j);
        const auto k = static_cast<std::size_t>(j * n + i);
        run.area[k] = static_cast<float>(static_cast<double>(b.visited_area) / full_area);
        run.pairs[k] = static_cast<float>(static_cast<double>(b.allowed_pairs) / full_area);
        run.tiles[k] = static_cast<float>(static_cast<double>(b.tiles_visited) / full_tiles);
      }
      if (progress && (i % 16 == 0 || i + 1 == n))
        progress((static_cast<double>(li) + 0.5 * static_cast<double>(i + 1) / static_cast<double>(n)) / n_layouts);
    }
    run.prediction = models::predict(*run.scenario);
    for (std::size_t s = 0; s < result.sweep_n_seq.size(); ++s) {
      if (cancel.load(std::memory_order_relaxed)) return std::nullopt;
      auto spec = with_layout(base, run.layout);
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
  const auto& s = *run.scenario;
  const std::int64_t lanes = std::min(run.n, max_devices);
  for (std::int64_t j = 0; j < lanes; ++j) tl.lanes.push_back("device " + std::to_string(j));
  tl.lanes.emplace_back("link");
  const int link = static_cast<int>(lanes);
  double t = 0;
  for (const auto& r : run.prediction.rounds_fwd) {
    for (std::int64_t j = 0; j < lanes; ++j) {
      const double comp = s.cost->attention_fwd_s(s.workload->block(r.round, j));
      const int lane = static_cast<int>(j);
      if (comp > 0) tl.spans.push_back({lane, t, t + comp, SpanKind::Compute});
      if (r.round_s > comp) tl.spans.push_back({lane, t + comp, t + r.round_s, SpanKind::Wait});
    }
    if (r.transfer_s > 0) tl.spans.push_back({link, t, t + r.transfer_s, SpanKind::Transfer});
    t += r.round_s;
  }
  tl.end_s = t;
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
