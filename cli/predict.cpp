// `ringsim predict`: one scenario (several layouts side by side) or a batch from a CSV.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/tables.hpp"
#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/long_run.hpp"
#include "cli/progress.hpp"
#include "cli/scenario_options.hpp"
#include "io/output_file.hpp"
#include "models/catalog/resolve.hpp"
#include "models/analytic/analytic.hpp"
#include "models/workload/documents.hpp"
#include "models/program/program.hpp"
#include "models/io/error.hpp"
#include "models/analytic/interval.hpp"
#include "models/io/parse.hpp"
#include "sim/step.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

// Which model times the step: the closed-form lock-step rounds, or the discrete-event
// simulation of the same scenario (asynchronous rounds, shared links; sim::simulate_step).
using calibration::Engine;

const char* engine_name(Engine e) { return e == Engine::Des ? "des" : "analytic"; }

struct LayoutResult {
  std::string layout;
  models::ResolvedScenario scenario;
  models::Prediction prediction;
  models::Interval step;     // of prediction.step_s (quantity "time")
  models::Interval speedup;  // of the first row's step / this one's (quantity "ratio"), set by with_speedups
  [[nodiscard]] std::string label(bool with_strategy) const {
    return with_strategy ? scenario.strategy.spec + " " + layout : layout;
  }
};

// The analytic step of the scenario under another profile.
double analytic_step(models::ResolvedScenario& s, const models::Profile& p) {
  return models::under_profile(s, p, [](const models::ResolvedScenario& r) { return models::predict(r).step_s; });
}

// Intervals come from the profile's fitted uncertainty carried through the analytic model; a
// simulated step keeps the analytic interval's relative width. `analytic`: the row's analytic step.
models::Interval step_interval(LayoutResult& r, double analytic) {
  auto i = models::step_interval_around(r.scenario, analytic);
  if (i.available) {
    i.lo *= r.prediction.step_s / analytic;
    i.hi *= r.prediction.step_s / analytic;
  }
  return i;
}

// The speedup of every layout over the first (first.step / this.step) and its interval.
void with_speedups(std::vector<LayoutResult>& results) {
  auto& first = results.front();
  first.speedup = {1.0, 1.0, !first.scenario.profile.uncertainty.empty()};  // the first over itself: exactly 1
  for (std::size_t k = 1; k < results.size(); ++k) {
    auto& r = results[k];
    const double value = first.prediction.step_s / r.prediction.step_s;
    // One profile's uncertainty carries both steps; rows of other implementations (another
    // strategy) have none in common with the first.
    if (r.scenario.profile.name != first.scenario.profile.name) {
      r.speedup = {};
      continue;
    }
    const double analytic = models::predict(first.scenario).step_s / models::predict(r.scenario).step_s;
    r.speedup = models::prediction_interval(r.scenario.profile, "ratio", analytic, [&](const models::Profile& p) {
      return analytic_step(first.scenario, p) / analytic_step(r.scenario, p);
    });
    if (r.speedup.available) {
      r.speedup.lo *= value / analytic;
      r.speedup.hi *= value / analytic;
    }
  }
}

std::string fmt_opt(bool available, double v, const char* spec = "{:.6g}") {
  return available ? fmt::format(fmt::runtime(spec), v) : std::string();
}

nlohmann::json json_opt(bool available, double v) { return available ? nlohmann::json(v) : nlohmann::json(); }

// With the DES only the step-level figures are replaced (step, tokens/s, MFU): the breakdown
// (attention, other, collectives) is the cost model's either way, and the analytic `exposed`
// and `imbalance` keep their lock-step meaning rather than mixing two definitions.
// The prediction of a resolved row (its step, the simulator's with --engine des, and interval).
void predict_row(LayoutResult& r, Engine engine) {
  r.prediction = models::predict(r.scenario);
  const double analytic = r.prediction.step_s;
  if (engine == Engine::Des) {
    sim::StepOptions options;
    announce_simulation("ringsim predict --engine des", r.scenario, options, kDefaultMaxEvents,
                        "ringsim simulate --max-events runs larger steps");
    ProgressBar progress("passes", "ringsim predict: simulating " + r.layout);
    options.progress = [&](std::int64_t done, std::int64_t total) { progress.update(done, total); };
    const auto sim = sim::simulate_step(r.scenario, options);
    r.prediction.step_s = sim.step_s;
    r.prediction.tokens_per_s = sim.tokens_per_s;
    r.prediction.mfu = sim.mfu;
  }
  r.step = step_interval(r, analytic);
}

LayoutResult run_one(models::ScenarioSpec spec, const std::string& layout, const models::Catalog& catalog,
                     Engine engine) {
  spec.layout = layout;
  LayoutResult r{layout, models::resolve(spec, catalog), {}, {}, {}};
  predict_row(r, engine);
  return r;
}

std::string profile_label(const models::Profile& p) {
  return p.name + (p.provenance.calibrated ? " (calibrated)" : " (uncalibrated)");
}

nlohmann::json prediction_json(const LayoutResult& r) {
  const auto& p = r.prediction;
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& rt : p.rounds_fwd)
    rounds.push_back({{"round", rt.round}, {"compute_max_s", rt.compute_max_s}, {"compute_mean_s", rt.compute_mean_s},
                      {"transfer_s", rt.transfer_s}, {"round_s", rt.round_s}});
  const double tokens = p.tokens_per_s * p.step_s;
  return {{"layout", r.layout},
          {"cp", r.scenario.strategy.spec},
          {"impl", r.scenario.impl.name},
          {"why", models::why(p)},
          {"step_s", p.step_s},
          {"step_s_lo", json_opt(r.step.available, r.step.lo)},
          {"step_s_hi", json_opt(r.step.available, r.step.hi)},
          {"tokens_per_s", p.tokens_per_s},
          {"tokens_per_s_lo", json_opt(r.step.available, tokens / r.step.hi)},
          {"tokens_per_s_hi", json_opt(r.step.available, tokens / r.step.lo)},
          {"speedup_vs_first_lo", json_opt(r.speedup.available, r.speedup.lo)},
          {"speedup_vs_first_hi", json_opt(r.speedup.available, r.speedup.hi)},
          {"mfu", p.mfu},
          {"attention_fwd_s", p.attention_fwd_s},
          {"attention_bwd_s", p.attention_bwd_s},
          {"other_compute_s", p.other_compute_s},
          {"collective_s", p.collective_s},
          {"exposed_transfer_s", p.exposed_transfer_s},
          {"exposed_allgather_s", p.exposed_allgather_s},
          {"exposed_reduce_scatter_s", p.exposed_reduce_scatter_s},
          {"exposed_all_to_all_s", p.exposed_all_to_all_s},
          {"imbalance", p.imbalance},
          {"model_flops", p.model_flops},
          {"memory_bytes", p.memory_bytes},
          {"fits_memory", p.fits_memory},
          {"hide_threshold_tokens", p.hide_threshold_tokens},
          {"rounds_fwd_one_layer", rounds}};
}

// Several strategies compared: rows are labelled "strategy layout".
bool several_strategies(const std::vector<LayoutResult>& results) {
  return std::any_of(results.begin(), results.end(),
                     [&](const LayoutResult& r) { return r.scenario.strategy.spec != results.front().scenario.strategy.spec; });
}

// Width of the row label column: 12, or the longest label (bucket-striped, perm:FILE, usp:2x4 zigzag).
std::size_t layout_width(const std::vector<LayoutResult>& results) {
  const bool with_cp = several_strategies(results);
  std::size_t w = 12;
  for (const auto& r : results) w = std::max(w, r.label(with_cp).size());
  return w;
}

void print_table(const std::vector<LayoutResult>& results, double tms, Engine engine, std::string& out) {
  const std::size_t lw = layout_width(results);
  const bool with_cp = several_strategies(results);
  const auto& s0 = results.front().scenario;
  const auto& spec = s0.spec;
  out += fmt::format("ringsim predict: {} on {} ({}), mesh {}x{} (mp x sp), n_seq {} ({} tokens per device), batch {}\n",
                     s0.model.name, s0.hardware.name, s0.hardware.description, spec.mp, spec.sp, spec.n_seq,
                     s0.layout->block(), spec.batch);
  if (s0.documents)
    out += fmt::format("packed documents {}: {} documents, mask causal within each\n", s0.documents->spec,
                       s0.documents->lengths.size());
  if (with_cp) {
    out += "strategies and implementations:";
    std::string last;
    for (const auto& r : results) {
      const auto item = r.scenario.strategy.spec + " = " + r.scenario.impl.name;
      if (item == last) continue;
      out += (last.empty() ? " " : "; ") + item;
      last = item;
    }
    out += "\n";
  } else {
    out += fmt::format("implementation {} ({} @ {}); strategy {}\n", s0.impl.name, s0.impl.sources.front().repo,
                       s0.impl.sources.front().commit.substr(0, 7), s0.strategy.spec);
  }
  out += fmt::format("engine {}{}\n", engine_name(engine),
                     engine == Engine::Des ? " (step, tokens/s, MFU and speedup from the discrete-event simulator; the "
                                             "other columns from the cost model)"
                                           : " (lock-step closed form)");
  out += fmt::format("profile {} [{}]; mask {}; tile {}x{}{}\n\n", profile_label(s0.profile), s0.profile.provenance.method,
                     s0.mask->name(), s0.tile.q, s0.tile.k,
                     s0.tile_clamped ? fmt::format(" (profile default {}x{} clamped to the block)",
                                                   s0.profile.default_tile.q, s0.profile.default_tile.k)
                                     : (spec.tile ? "" : " (profile default)"));
  out += fmt::format("{:<{}} {:>10} {:>6} {:>12} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>10} {:>6}\n",
                     with_cp ? "strategy layout" : "layout", lw, "step", "+-", "tokens/s", "MFU", "attn fwd", "attn bwd",
                     "other", "tp comm", "exposed", "imbalance", "speedup", "+-");
  const double base = results.front().prediction.step_s;
  bool any_interval = false;
  for (const auto& r : results) {
    const auto& p = r.prediction;
    // +-: half the 90 % interval's width, relative for the step, absolute for the speedup.
    const std::string step_pm =
        r.step.available ? fmt::format("{:.0f}%", 50 * (r.step.hi - r.step.lo) / p.step_s) : std::string("-");
    const std::string speed_pm =
        r.speedup.available ? fmt::format("{:.2f}", 0.5 * (r.speedup.hi - r.speedup.lo)) : std::string("-");
    any_interval = any_interval || r.step.available || r.speedup.available;
    out += fmt::format("{:<{}} {:>10} {:>6} {:>12} {:>5.1f}% {:>10} {:>10} {:>10} {:>10} {:>10} {:>9.2f} {:>9.2f}x {:>6}\n",
                       r.label(with_cp), lw, human_seconds(p.step_s), step_pm, human_count(p.tokens_per_s), 100 * p.mfu,
                       human_seconds(p.attention_fwd_s), human_seconds(p.attention_bwd_s),
                       human_seconds(p.other_compute_s), human_seconds(p.collective_s),
                       human_seconds(p.exposed_transfer_s + p.exposed_collectives_s()), p.imbalance, base / p.step_s,
                       speed_pm);
  }
  out += "\nwhy:\n";
  for (const auto& r : results) out += fmt::format("  {:<{}} {}\n", r.label(with_cp), lw, models::why(r.prediction));
  out += any_interval ? "\n+-: half width of the 90 % prediction interval (the profile's fitted parameters' covariance and "
                        "its held-out residual spread); - where the profile has none for that quantity.\n"
                      : fmt::format("\n+-: no prediction interval: profile {} has no fitted uncertainty ({}).\n",
                                    s0.profile.name, s0.profile.provenance.calibrated ? "fitted without one" : "uncalibrated");
  out += fmt::format("speedup is relative to the first row ({}); imbalance = busiest device's attention work / mean\n"
                     "(rings: averaged over rounds; 1.00 = perfectly balanced); exposed = ring transfers and collectives\n"
                     "(all-gather, reduce-scatter, all-to-all) not hidden by compute.\n",
                     results.front().label(with_cp));
  out += fmt::format("Theoretical maximum speedup of striped over ring (the Striped Attention paper's TMS): {:.2f}\n", tms);
  const auto& p0 = results.front().prediction;
  if (s0.program->has_ring())
    out += fmt::format("K/V transfer hides behind compute from a block of ~{:.0f} tokens ({}: {} tokens per device now)\n",
                       p0.hide_threshold_tokens, results.front().label(with_cp), s0.ring_scenario().layout->block());
  out += fmt::format("memory per device ~{} of {} ({}; {}; model states sharded over sp, {} recomputation: docs/memory.md)\n",
                     human_bytes(p0.memory_bytes), human_bytes(s0.hardware.hbm_bytes), p0.fits_memory ? "fits" : "DOES NOT FIT",
                     results.front().label(with_cp), s0.profile.recompute ? "full" : "no");
  for (const auto& r : results) {
    if (r.scenario.strategy.kind == models::StrategyKind::Ring && (r.layout == "contiguous" || r.layout == "ring")) {
      if (r.prediction.imbalance > 1.2)
        out += fmt::format("note: with contiguous blocks, after round 0 some devices hold fully visible K/V blocks while others'"
                           " are fully masked; every round waits for the busiest device.\n");
      break;
    }
  }
}

// The same scenario under a baseline mask (SCFA's comparison: the sparse kernel against dense
// causal flash attention at the same tile size), attention only: forward and forward+backward.
void print_comparison(const std::vector<LayoutResult>& results, const models::ScenarioSpec& base,
                      const std::string& baseline_mask, const models::Catalog& catalog, Engine engine,
                      std::string& out) {
  models::ScenarioSpec spec = base;
  // The baseline runs on the same token permutation, even where the layout is derived from
  // the sparse mask's buckets.
  if (spec.layout_mask.empty()) spec.layout_mask = spec.mask;
  spec.mask = baseline_mask;
  out += fmt::format("attention per step: mask {} against {} (same tile, profile, layout)\n",
                     results.front().scenario.mask->name(), baseline_mask);
  const std::size_t lw = layout_width(results);
  out += fmt::format("{:<{}} {:>11} {:>11} {:>9} {:>11} {:>11} {:>9}\n", "layout", lw, "fwd", "base fwd", "speedup",
                     "fwd+bwd", "base f+b", "speedup");
  for (const auto& x : results) {
    const auto b = run_one(spec, x.layout, catalog, engine);
    const auto& p = x.prediction;
    const auto& q = b.prediction;
    const double fb = p.attention_fwd_s + p.attention_bwd_s, qb = q.attention_fwd_s + q.attention_bwd_s;
    out += fmt::format("{:<{}} {:>11} {:>11} {:>8.2f}x {:>11} {:>11} {:>8.2f}x\n", x.layout, lw,
                       human_seconds(p.attention_fwd_s), human_seconds(q.attention_fwd_s),
                       q.attention_fwd_s / p.attention_fwd_s, human_seconds(fb), human_seconds(qb), qb / fb);
  }
  out += "speedup = baseline time / this mask's time; sparse masks include the gather/sort/scatter around the kernel.\n";
}

// Batch mode: one output row per input row, input columns untouched, then predictions.
std::string run_batch(const std::string& path, const std::string& format, const models::Catalog& catalog,
                      const cxxopts::ParseResult& args, Engine engine) {
  const CsvTable t = read_csv(path);
  const ScenarioColumns cols(t);
  const auto c_tq = t.column("tile_q");
  const auto c_tk = t.column("tile_k");
  const auto c_layout = t.column("layout");
  const auto c_mask = t.column("mask");
  const auto c_profile = t.column("profile");
  const auto c_batch = t.column("batch");
  if (c_tq.has_value() != c_tk.has_value())
    throw InputError(path, 1, c_tq ? "tile_k" : "tile_q", "tile_q and tile_k must be given together");

  const std::vector<std::string> extra = {"pred_tms",
                                          "pred_speedup",
                                          "pred_speedup_lo",
                                          "pred_speedup_hi",
                                          "pred_ring_step_s",
                                          "pred_ring_step_s_lo",
                                          "pred_ring_step_s_hi",
                                          "pred_striped_step_s",
                                          "pred_striped_step_s_lo",
                                          "pred_striped_step_s_hi",
                                          "pred_ring_tokens_per_s",
                                          "pred_striped_tokens_per_s",
                                          "pred_layout_step_s",
                                          "pred_tile",
                                          "pred_profile",
                                          "pred_profile_calibrated",
                                          "pred_engine",
                                          "pred_impl"};
  std::string out;
  nlohmann::json rows = nlohmann::json::array();
  if (format == "csv") {
    auto h = t.header;
    h.insert(h.end(), extra.begin(), extra.end());
    out += csv_line(h);
  }
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    std::vector<std::string> values;
    models::ScenarioSpec spec = cols.spec(t, i);
    if (c_batch) spec.batch = t.positive_int(i, *c_batch);
    if (c_tq) spec.tile = models::TileShape{t.positive_int(i, *c_tq), t.positive_int(i, *c_tk)};
    if (c_mask) spec.mask = t.text(i, *c_mask);
    spec.profile = t.text_or(i, c_profile, "");
    if (!args["profile"].as<std::string>().empty()) spec.profile = args["profile"].as<std::string>();
    if (!args["impl"].as<std::string>().empty()) spec.impl = args["impl"].as<std::string>();
    if (args.count("cp")) {
      if (args["cp"].as<std::string>().find(',') != std::string::npos)
        throw InputError({}, 0, "cp", "with --scenarios, --cp names one strategy (use a cp column to vary it)");
      spec.cp = args["cp"].as<std::string>();
    }
    if (args.count("docs")) spec.docs = args["docs"].as<std::string>();
    const auto layout = t.text_or(i, c_layout, "");
    try {
      const auto hw = spec.hardware_file.empty() ? catalog.hardware(spec.hardware) : models::Hardware::load_file(spec.hardware_file);
      // Ring and striped run on one implementation, as the contract's speedup defines them; a
      // row of another strategy gets its own step (pred_layout_step_s) from its implementation
      // beside that ring baseline.
      auto ring_spec = spec;
      const bool ring_row = models::Strategy::parse(spec.cp).kind == models::StrategyKind::Ring;
      if (!ring_row) {
        ring_spec.cp = "ring";
        if (!spec.impl.empty() && !catalog.implementation(spec.impl).offers_strategy("ring")) ring_spec.impl.clear();
      }
      std::vector<std::string> compared = {"contiguous", "striped"};
      if (!layout.empty() && ring_row) compared.push_back(layout);
      ring_spec.impl = catalog.choose_implementation(ring_spec, hw, compared);
      std::vector<LayoutResult> pair;
      pair.push_back(run_one(ring_spec, "contiguous", catalog, engine));
      pair.push_back(run_one(ring_spec, "striped", catalog, engine));
      with_speedups(pair);
      const auto& ring = pair[0];
      const auto& striped = pair[1];
      // pred_speedup is ring / striped: the interval of striped's speedup over the first layout.
      const auto& sp_i = striped.speedup;
      double layout_step = striped.prediction.step_s;
      if (!layout.empty() || !ring_row) {
        auto row_spec = ring_row ? ring_spec : spec;
        const auto row_layout = layout.empty() ? std::string("zigzag") : layout;
        if (!ring_row) row_spec.impl = catalog.choose_implementation(row_spec, hw, {row_layout});
        const auto own = run_one(row_spec, row_layout, catalog, engine);
        layout_step = own.prediction.step_s;
      }
      const double tms = models::theoretical_max_speedup(ring.scenario);
      const double speedup = ring.prediction.step_s / striped.prediction.step_s;
      values = {fmt::format("{:.4f}", tms),
                fmt::format("{:.4f}", speedup),
                fmt_opt(sp_i.available, sp_i.lo, "{:.4f}"),
                fmt_opt(sp_i.available, sp_i.hi, "{:.4f}"),
                fmt::format("{:.6g}", ring.prediction.step_s),
                fmt_opt(ring.step.available, ring.step.lo),
                fmt_opt(ring.step.available, ring.step.hi),
                fmt::format("{:.6g}", striped.prediction.step_s),
                fmt_opt(striped.step.available, striped.step.lo),
                fmt_opt(striped.step.available, striped.step.hi),
                fmt::format("{:.6g}", ring.prediction.tokens_per_s),
                fmt::format("{:.6g}", striped.prediction.tokens_per_s),
                fmt::format("{:.6g}", layout_step),
                fmt::format("{}x{}", ring.scenario.tile.q, ring.scenario.tile.k),
                ring.scenario.profile.name,
                ring.scenario.profile.provenance.calibrated ? "true" : "false",
                engine_name(engine),
                ring.scenario.impl.name};
    } catch (const InputError& e) {
      throw InputError(path, t.lines[i], e.field(), e.message());
    }
    if (format == "csv") {
      auto r = row;
      r.insert(r.end(), values.begin(), values.end());
      out += csv_line(r);
    } else {
      nlohmann::json j;
      for (std::size_t c = 0; c < t.header.size(); ++c) j[t.header[c]] = row[c];
      for (std::size_t c = 0; c < extra.size(); ++c) j[extra[c]] = values[c];
      rows.push_back(j);
    }
  }
  if (format == "json") return rows.dump(2) + "\n";
  if (format == "table") {
    // A readable view of the same rows.
    std::string s;
    for (std::size_t c = 0; c < t.header.size(); ++c) s += fmt::format("{:>12} ", t.header[c]);
    s += fmt::format("{:>9} {:>13} {:>11}\n", "pred_tms", "pred_speedup", "pred_engine");
    for (const auto& r : rows) {
      for (std::size_t c = 0; c < t.header.size(); ++c) s += fmt::format("{:>12} ", r[t.header[c]].get<std::string>());
      s += fmt::format("{:>9} {:>13} {:>11}\n", r["pred_tms"].get<std::string>(), r["pred_speedup"].get<std::string>(),
                       r["pred_engine"].get<std::string>());
    }
    return s;
  }
  return out;
}

}  // namespace

int run_predict(int argc, char** argv) {
  cxxopts::Options o("ringsim predict", "Prediction of a training step for ring, striped and other layouts");
  add_scenario_options(o, "contiguous,striped,zigzag");
  o.add_options()("scenarios", "CSV of scenarios (columns hardware,model,mp,sp,n_seq; optional tile_q,tile_k,layout,mask,profile,batch,impl,cp,docs)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("engine", "analytic (lock-step closed form) | des (discrete-event simulation, ringsim simulate)",
                  cxxopts::value<std::string>()->default_value("analytic"))
                 ("compare-mask", "also predict each layout with this mask (e.g. causal) and print attention forward, forward+backward and the speedup over it",
                  cxxopts::value<std::string>()->default_value(""))
                 ("format", "table|csv|json", cxxopts::value<std::string>()->default_value("table"))
                 ("o,output", "write to FILE (atomically) instead of stdout", cxxopts::value<std::string>()->default_value("-"))
                 ("h,help", "show help");
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto format = one_of(r, "format", {"table", "csv", "json"});
  const Engine engine = one_of(r, "engine", {"analytic", "des"}) == "des" ? Engine::Des : Engine::Analytic;
  const models::Catalog catalog;
  // Opened before the work (a simulated batch may take long): an unusable -o fails at once.
  io::Output output(r["output"].as<std::string>());
  const auto finish = [&](const std::string& text) {
    output.write(text);
    output.commit();
    return 0;
  };
  if (const auto batch = r["scenarios"].as<std::string>(); !batch.empty())
    return finish(run_batch(batch, format, catalog, r, engine));
  auto args = parse_scenario_args(r);
  std::vector<LayoutResult> results;
  // Every row resolves before any is predicted: a row its sizes refuse (zigzag with an odd block
  // among the default layouts) is one error at once, not after the other rows' predictions.
  for (const auto& spec : expand_runs(args, catalog))
    results.push_back(LayoutResult{spec.layout, models::resolve(spec, catalog), {}, {}, {}});
  for (auto& row : results) predict_row(row, engine);
  with_speedups(results);
  // TMS compares ring with striped whatever layouts were asked for.
  const double tms = models::theoretical_max_speedup(results.front().scenario);
  std::string out;
  const auto compare = r["compare-mask"].as<std::string>();
  if (!compare.empty()) {
    require_one_strategy(args, "--compare-mask");
    if (format != "table") throw InputError({}, 0, "compare-mask", "--compare-mask prints a table only (use --format table)");
    print_table(results, tms, engine, out);
    out += "\n";
    print_comparison(results, results.front().scenario.spec, compare, catalog, engine, out);
    return finish(out);
  }
  if (format == "table") {
    print_table(results, tms, engine, out);
  } else if (format == "json") {
    const auto& s0 = results.front().scenario;
    nlohmann::json j;
    j["scenario"] = {{"hardware", s0.hardware.name}, {"model", s0.model.name}, {"mp", s0.spec.mp}, {"sp", s0.spec.sp},
                     {"n_seq", s0.spec.n_seq}, {"batch", s0.spec.batch}, {"mask", s0.mask->name()},
                     {"tile_q", s0.tile.q}, {"tile_k", s0.tile.k}, {"tile_clamped", s0.tile_clamped},
                     {"block_tokens", s0.layout->block()}, {"impl", s0.impl.name}, {"cp", s0.strategy.spec},
                     {"docs", s0.spec.docs}};
    j["profile"] = s0.profile.to_json();
    j["pred_tms"] = tms;
    j["pred_engine"] = engine_name(engine);
    j["results"] = nlohmann::json::array();
    for (const auto& x : results) j["results"].push_back(prediction_json(x));
    out = j.dump(2) + "\n";
  } else {
    out += csv_line({"layout", "hardware", "model", "mp", "sp", "n_seq", "batch", "mask", "tile_q", "tile_k", "profile",
                     "step_s", "step_s_lo", "step_s_hi", "tokens_per_s", "tokens_per_s_lo", "tokens_per_s_hi", "mfu",
                     "attention_fwd_s", "attention_bwd_s", "other_compute_s", "collective_s", "exposed_transfer_s",
                     "imbalance", "memory_bytes", "pred_tms", "speedup_vs_first", "speedup_vs_first_lo",
                     "speedup_vs_first_hi", "pred_engine", "impl", "cp", "docs", "exposed_allgather_s",
                     "exposed_reduce_scatter_s", "exposed_all_to_all_s", "profile_calibrated", "why"});
    for (const auto& x : results) {
      const auto& s = x.scenario;
      const auto& p = x.prediction;
      out += csv_line({x.layout, s.hardware.name, s.model.name, std::to_string(s.spec.mp), std::to_string(s.spec.sp),
                       std::to_string(s.spec.n_seq), std::to_string(s.spec.batch), s.mask->name(),
                       std::to_string(s.tile.q), std::to_string(s.tile.k), s.profile.name,
                       fmt::format("{:.6g}", p.step_s), fmt_opt(x.step.available, x.step.lo),
                       fmt_opt(x.step.available, x.step.hi), fmt::format("{:.6g}", p.tokens_per_s),
                       fmt_opt(x.step.available, p.tokens_per_s * p.step_s / x.step.hi),
                       fmt_opt(x.step.available, p.tokens_per_s * p.step_s / x.step.lo),
                       fmt::format("{:.4f}", p.mfu), fmt::format("{:.6g}", p.attention_fwd_s),
                       fmt::format("{:.6g}", p.attention_bwd_s), fmt::format("{:.6g}", p.other_compute_s),
                       fmt::format("{:.6g}", p.collective_s), fmt::format("{:.6g}", p.exposed_transfer_s),
                       fmt::format("{:.4f}", p.imbalance), fmt::format("{:.6g}", p.memory_bytes),
                       fmt::format("{:.4f}", tms),
                       fmt::format("{:.4f}", results.front().prediction.step_s / p.step_s),
                       fmt_opt(x.speedup.available, x.speedup.lo, "{:.4f}"),
                       fmt_opt(x.speedup.available, x.speedup.hi, "{:.4f}"), engine_name(engine), s.impl.name,
                       s.strategy.spec, s.spec.docs, fmt::format("{:.6g}", p.exposed_allgather_s),
                       fmt::format("{:.6g}", p.exposed_reduce_scatter_s), fmt::format("{:.6g}", p.exposed_all_to_all_s),
                       s.profile.provenance.calibrated ? "true" : "false", models::why(p)});
    }
  }
  return finish(out);
}

}  // namespace ringsim::cli
