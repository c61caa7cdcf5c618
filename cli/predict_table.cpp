#include "cli/predict_table.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/scenario_options.hpp"
#include "models/analytic/analytic.hpp"
#include "models/analytic/breakdown.hpp"
#include "planning/predict_runs.hpp"
#include "models/program/program.hpp"
#include "models/workload/documents.hpp"

namespace ringsim::cli {

namespace {

std::string profile_label(const models::Profile& p) {
  return p.name + (p.provenance.calibrated ? " (calibrated)" : " (uncalibrated)");
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

// What each shown part is, in one paragraph: the columns from the first part to the last add up to
// the step.
std::string parts_legend(const std::vector<models::StepPart>& shown) {
  std::string out = "parts (they add up to the step; docs/breakdown.md):";
  for (const auto part : shown) out += fmt::format(" {} = {};", models::part_info(part).label, models::part_info(part).name);
  out.back() = '.';
  return out + "\n";
}

}  // namespace

void print_table(const std::vector<LayoutResult>& results, double tms, Engine engine, std::string& out,
                 const Training& training, bool impls_named) {
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
    // Each strategy's library and the kernel it calls here: where one kernel runs every strategy
    // the comparison uses it (planning::expand_runs), so rows differ by strategy, not by kernel.
    out += "strategies and implementations:";
    std::string last;
    std::vector<std::string> kernels;
    for (const auto& r : results) {
      const auto& im = r.scenario.impl;
      const std::string kernel = planning::kernel_on(im, r.scenario.hardware);
      if (std::find(kernels.begin(), kernels.end(), kernel) == kernels.end()) kernels.push_back(kernel);
      const auto item = r.scenario.strategy.spec + " = " + im.name + " (" + kernel + ")";
      if (item == last) continue;
      out += (last.empty() ? " " : "; ") + item;
      last = item;
    }
    out += kernels.size() == 1 ? "; one attention kernel for every row\n"
           : impls_named       ? "; the kernels differ (the implementations named by --impl)\n"
                               : "; the kernels differ: no one kernel runs every strategy here (--impl chooses)\n";
  } else {
    // The kernel is named: a library may call another on this GPU (TransformerEngine: cuDNN on Hopper).
    out += fmt::format("implementation {} ({} @ {}{}){}; strategy {}\n", s0.impl.name, s0.impl.sources.front().repo,
                       s0.impl.sources.front().commit.substr(0, 7),
                       s0.impl.maturity == models::Maturity::Research    ? "; a research kernel, not a production library"
                       : s0.impl.maturity == models::Maturity::Reference ? "; ringsim's own reference kernels, which no one runs"
                                                                         : "",
                       s0.impl.kernel_model ? ", kernel " + s0.impl.kernel_model->name : std::string(), s0.strategy.spec);
  }
  out += fmt::format("engine {}{}\n", engine_name(engine),
                     engine == Engine::Des ? " (step, tokens/s, MFU and speedup from the discrete-event simulator; the "
                                             "parts from the cost model, des diff the simulator's difference)"
                                           : " (lock-step closed form)");
  // Rows on other libraries run other profiles: each is named with the rows it times.
  std::string profiles = fmt::format("profile {} [{}]", profile_label(s0.profile), s0.profile.provenance.method);
  if (std::any_of(results.begin(), results.end(),
                  [&](const LayoutResult& r) { return r.scenario.profile.name != s0.profile.name; })) {
    profiles = "profiles";
    std::vector<std::string> seen;
    for (const auto& r : results) {
      const auto& pr = r.scenario.profile;
      if (std::find(seen.begin(), seen.end(), pr.name) != seen.end()) continue;
      seen.push_back(pr.name);
      std::string rows;
      for (const auto& o : results)
        if (o.scenario.profile.name == pr.name) rows += (rows.empty() ? "" : ", ") + o.label(with_cp);
      profiles += fmt::format("{} {} [{}] for {}", seen.size() == 1 ? "" : ";", profile_label(pr), pr.provenance.method, rows);
    }
  }
  out += fmt::format("{}; mask {}; tile {}x{}{}\n\n", profiles, s0.mask->name(), s0.tile.q, s0.tile.k,
                     s0.tile_clamped ? fmt::format(" (profile default {}x{} clamped to the block)",
                                                   s0.profile.default_tile.q, s0.profile.default_tile.k)
                                     : (spec.tile ? "" : " (profile default)"));
  // The step's parts (models/analytic/breakdown.hpp) that any row has, each a column: they add up
  // to the step.
  std::vector<models::StepPart> shown;
  for (std::size_t i = 0; i < models::kStepParts; ++i)
    if (std::any_of(results.begin(), results.end(), [&](const LayoutResult& r) { return r.train.parts.s[i] != 0; }))
      shown.push_back(models::step_part(i));
  out += fmt::format("{:<{}} {:>10} {:>6} {:>12} {:>6}", with_cp ? "strategy layout" : "layout", lw, "step", "+-", "tokens/s", "MFU");
  for (const auto part : shown) out += fmt::format(" {:>11}", models::part_info(part).label);
  out += fmt::format(" {:>9} {:>10} {:>6}\n", "imbalance", "speedup", "+-");
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
    out += fmt::format("{:<{}} {:>10} {:>6} {:>12} {:>5.1f}%", r.label(with_cp), lw, human_seconds(p.step_s), step_pm,
                       human_count(p.tokens_per_s), 100 * p.mfu);
    for (const auto part : shown) out += fmt::format(" {:>11}", human_seconds(r.train.parts[part]));
    out += fmt::format(" {:>9.2f} {:>9.2f}x {:>6}\n", p.imbalance, base / p.step_s, speed_pm);
  }
  out += "\nwhy:\n";
  for (const auto& r : results)
    out += fmt::format("  {:<{}} {}\n", r.label(with_cp), lw, models::why(r.prediction, r.train.parts));
  out += any_interval ? "\n+-: half width of the 90 % prediction interval (the profile's fitted parameters' covariance and "
                        "its held-out residual spread; a derived profile's spread is the error measured when one fitted GPU's "
                        "parameters predict another's); - where the profile has none for that quantity. Attention forward "
                        "and backward times carry theirs in --format json and csv.\n"
                      : fmt::format("\n+-: no prediction interval: profile {} has no fitted uncertainty ({}).\n",
                                    s0.profile.name, s0.profile.provenance.calibrated ? "fitted without one" : "uncalibrated");
  out += fmt::format("speedup is relative to the first row ({}); imbalance = busiest device's attention work / mean\n"
                     "(rings: averaged over rounds; 1.00 = perfectly balanced).\n",
                     results.front().label(with_cp));
  out += parts_legend(shown);
  out += fmt::format("Theoretical maximum speedup of striped over ring (the Striped Attention paper's TMS): {:.2f}\n", tms);
  const auto& p0 = results.front().prediction;
  // The first row that passes K/V around a ring of more than one rank (usp:Ux1 has none). A usp
  // ring rank holds its ring's block of the whole sequence for heads / U heads, not the
  // sequence / devices of the header.
  const auto ringed = std::find_if(results.begin(), results.end(), [](const LayoutResult& r) {
    return r.scenario.program->has_ring() && r.scenario.program->rings.size > 1;
  });
  if (ringed != results.end()) {
    const auto& rs = ringed->scenario.ring_scenario();
    const std::string heads = ringed->scenario.ring_part
                                  ? fmt::format(" of {} of the model's {} heads, after the all-to-all", rs.model.heads,
                                                ringed->scenario.model.heads)
                                  : std::string();
    out += fmt::format("K/V transfer hides behind compute from a block of ~{:.0f} tokens per ring rank ({}: {} tokens{} now)\n",
                       ringed->prediction.hide_threshold_tokens, ringed->label(with_cp), rs.layout->block(), heads);
  }
  if (const auto& pl = training.pipeline; pl.pipelined() || pl.micro_batches > 1) {
    // The columns above are one micro-batch through the whole model; the step is all of them.
    const auto& t = results.front().train;
    out += fmt::format("step ({}): {}", results.front().label(with_cp), pl.text());
    if (pl.pipelined())
      out += fmt::format("; passes {}, the bubble {:.1f}% of the step ({:.1f}% in lock-step), a stage-to-stage hop {}",
                         human_seconds(t.passes.step_s), 100 * t.passes.bubble_fraction(), 100 * pl.bubble_fraction(),
                         human_seconds(t.hop_s));
    else
      out += fmt::format("; passes {}", human_seconds(t.passes.step_s));
    out += fmt::format("; gradient sync {}, {} exposed. The parts are every micro-batch's{} (docs/pipeline.md)\n",
                       human_seconds(t.sync.total_s), human_seconds(t.sync.exposed_s),
                       pl.pipelined() ? " on the busiest stage's rank" : "");
  }
  out += fmt::format("memory per device ~{} of {} ({}; {}; {}: --dp, --zero, --recompute, --precision, --headroom; "
                     "docs/memory.md)\n",
                     human_bytes(p0.memory_bytes), human_bytes(s0.hardware.hbm_bytes),
                     models::fit_phrase(results.front().memory), results.front().label(with_cp), training.text(s0.profile));
  // Rows whose memory differs from the first's (another strategy's buffers, another library's
  // workspace), each with its own figure: the line above is the first row's.
  std::string others;
  for (const auto& r : results) {
    const double m = r.prediction.memory_bytes;
    if (&r == &results.front() || std::abs(m - p0.memory_bytes) <= 0.005 * p0.memory_bytes) continue;
    others += fmt::format("{}{} ~{} ({})", others.empty() ? "" : "; ", r.label(with_cp), human_bytes(m), models::fit_phrase(r.memory));
  }
  if (!others.empty()) out += "  other rows: " + others + "\n";
  for (const auto& r : results) {
    if (r.scenario.strategy.kind == models::StrategyKind::Ring && (r.layout == "contiguous" || r.layout == "ring")) {
      if (r.prediction.imbalance > 1.2)
        out += fmt::format("note: with contiguous blocks, after round 0 some devices hold fully visible K/V blocks while others'"
                           " are fully masked; every round waits for the busiest device.\n");
      break;
    }
  }
}

void print_comparison(const std::vector<LayoutResult>& results, const models::ScenarioSpec& base,
                      const models::MaskSpec& baseline_mask, const models::Catalog& catalog, Engine engine,
                      std::string& out) {
  models::ScenarioSpec spec = base;
  // The baseline runs on the same token permutation, even where the layout is derived from
  // the sparse mask's buckets.
  if (!spec.layout_mask) spec.layout_mask = spec.mask;
  spec.mask = baseline_mask;
  out += fmt::format("attention per step: mask {} against {} (same tile, profile, layout)\n",
                     results.front().scenario.mask->name(), baseline_mask.text());
  const std::size_t lw = layout_width(results);
  out += fmt::format("{:<{}} {:>11} {:>11} {:>9} {:>11} {:>11} {:>9}\n", "layout", lw, "fwd", "base fwd", "speedup",
                     "fwd+bwd", "base f+b", "speedup");
  for (const auto& x : results) {
    const auto b = run_one(spec, x.scenario.spec.layout, catalog, engine);
    const auto& p = x.prediction;
    const auto& q = b.prediction;
    const double fb = p.attention_fwd_s + p.attention_bwd_s, qb = q.attention_fwd_s + q.attention_bwd_s;
    out += fmt::format("{:<{}} {:>11} {:>11} {:>8.2f}x {:>11} {:>11} {:>8.2f}x\n", x.layout, lw,
                       human_seconds(p.attention_fwd_s), human_seconds(q.attention_fwd_s),
                       q.attention_fwd_s / p.attention_fwd_s, human_seconds(fb), human_seconds(qb), qb / fb);
  }
  out += "speedup = baseline time / this mask's time; sparse masks include the gather/sort/scatter around the kernel.\n";
}

void print_memory_breakdown(const std::vector<LayoutResult>& results, std::string& out) {
  const auto& r = results.front();
  constexpr double gib = models::kBytesPerGiB;
  out += fmt::format("\nmemory per device of {}, part by part ({:.2f} GiB; docs/memory.md):\n", r.label(several_strategies(results)),
                     r.memory.total_bytes / gib);
  std::size_t w = 4;
  for (const auto& p : r.memory_parts) w = std::max(w, std::string_view(p.name).size());
  out += fmt::format("  {:<16} {:<{}} {:>10}  {}\n", "term", "part", w, "GiB", "from");
  for (const auto& p : r.memory_parts)
    out += fmt::format("  {:<16} {:<{}} {:>10.3f}  {}\n", p.term, p.name, w, p.bytes / gib, p.source);
  if (r.memory.host_bytes > 0)
    out += fmt::format("  (in host memory, not counted: the optimizer state, {:.3f} GiB: --offload-optimizer)\n", r.memory.host_bytes / gib);
}

void print_not_runnable(const std::vector<NotRunnable>& rows, std::string& out) {
  if (rows.empty()) return;
  out += "\nnot runnable here (predicted without them):\n";
  for (const auto& r : rows) out += fmt::format("  {} {}: {}\n", r.cp, r.layout, r.reason);
}

}  // namespace ringsim::cli
