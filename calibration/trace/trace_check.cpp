#include "calibration/trace/trace_check.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/io/error.hpp"

namespace ringsim::calibration {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct RankFigures {
  double wall = 0, fwd = 0, bwd = 0, dec = 0, rest = 0, exposed = 0, idle = 0;
};

RankFigures figures(const TraceSummary& t) {
  std::vector<double> wall, fwd, bwd, dec, rest, exposed, idle;
  for (const auto& s : t.steps) {
    wall.push_back(s.wall_us * 1e-6);
    fwd.push_back(s.class_us[index(OpClass::AttentionFwd)] * 1e-6);
    bwd.push_back(s.class_us[index(OpClass::AttentionBwd)] * 1e-6);
    dec.push_back(s.class_us[index(OpClass::AttentionDecode)] * 1e-6);
    rest.push_back((s.class_us[index(OpClass::Gemm)] + s.class_us[index(OpClass::Other)]) * 1e-6);
    exposed.push_back(s.exposed_communication_us * 1e-6);
    idle.push_back(s.idle_us * 1e-6);
  }
  return {median(wall), median(fwd), median(bwd), median(dec), median(rest), median(exposed), median(idle)};
}

// What to look at when a component is off, in the user's terms.
std::string hint(const std::string& component) {
  if (component.starts_with("attention")) return "the GPU's kernel efficiencies: `ringsim calibrate --from-trace` fits them from these traces";
  if (component.starts_with("exposed")) return "the link or the overlap: `ringsim calibrate --from-trace` fits the hop from the point-to-point kernels";
  if (component.starts_with("other")) return "the step outside attention (projections, MLP, element-wise), which the ring's kernels do not calibrate";
  return "host-side time between kernels (Python, launches, synchronisation), which the model does not time";
}

}  // namespace

models::RunPhase trace_phase(const std::vector<TraceSummary>& traces) {
  std::int64_t fwd = 0, bwd = 0, dec = 0;
  for (const auto& t : traces)
    for (const auto& s : t.steps) {
      fwd += s.class_ops[index(OpClass::AttentionFwd)];
      bwd += s.class_ops[index(OpClass::AttentionBwd)];
      dec += s.class_ops[index(OpClass::AttentionDecode)];
    }
  const std::string file = traces.size() == 1 ? traces.front().file : std::string();
  if (fwd + bwd + dec == 0)
    throw models::InputError(file, 0, "traces",
                             "no attention kernel in any step of the traces, so neither the phase (training, prefill, "
                             "decode) nor the attention can be compared: `ringsim trace summarize` lists the kernels no "
                             "rule classes; add yours with --classes (docs/traces.md)");
  if (dec > 0 && fwd + bwd > 0)
    throw models::InputError(file, 0, "traces",
                             fmt::format("the traces hold {} decode attention kernels beside {} forward and {} backward "
                                         "ones: a serving run's steps mix prefill and decode, and a check compares one "
                                         "phase; trace a window of one phase", dec, fwd, bwd));
  if (bwd > 0) return models::RunPhase::Train;
  return fwd > 0 ? models::RunPhase::Prefill : models::RunPhase::Decode;
}

PredictedStep PredictedStep::of(const models::Prediction& p) {
  PredictedStep s;
  s.phase = models::RunPhase::Train;
  s.step_s = p.step_s;
  s.attention_fwd_s = p.attention_fwd_s;
  s.attention_bwd_s = p.attention_bwd_s;
  s.other_compute_s = p.other_compute_s;
  s.exposed_s = p.exposed_transfer_s + p.exposed_collectives_s() + p.collective_s;
  return s;
}

PredictedStep PredictedStep::of(const models::InferencePrediction& p) {
  PredictedStep s;
  s.phase = p.phase;
  s.step_s = p.latency_s;
  (p.phase == models::RunPhase::Decode ? s.attention_decode_s : s.attention_fwd_s) = p.attention_s;
  s.other_compute_s = p.other_s;
  s.exposed_s = p.exposed_s + p.collective_s;
  return s;
}

TraceCheck check_trace(const std::vector<TraceSummary>& traces, const PredictedStep& p) {
  std::vector<RankFigures> ranks;
  std::vector<std::size_t> trace_of;  // the trace of each rank's figures (traces without steps have none)
  TraceCheck c;
  c.phase = p.phase;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    if (traces[i].steps.empty()) continue;
    ranks.push_back(figures(traces[i]));
    trace_of.push_back(i);
    c.steps = std::max<std::int64_t>(c.steps, static_cast<std::int64_t>(traces[i].steps.size()));
  }
  if (ranks.empty()) throw models::InputError({}, 0, "traces", "no step with GPU operations in the traces");
  c.ranks = static_cast<std::int64_t>(ranks.size());
  const auto crit = std::max_element(ranks.begin(), ranks.end(), [](const RankFigures& a, const RankFigures& b) {
    return a.fwd + a.bwd + a.dec < b.fwd + b.bwd + b.dec;
  });
  c.critical_rank = static_cast<std::int64_t>(trace_of[static_cast<std::size_t>(crit - ranks.begin())]);
  double wall = 0, rest = 0;
  for (const auto& r : ranks) wall = std::max(wall, r.wall), rest += r.rest / static_cast<double>(ranks.size());
  using models::RunPhase;
  const char* step = p.phase == RunPhase::Train ? "step" : p.phase == RunPhase::Prefill ? "step (TTFT)" : "step (per token)";
  c.rows.push_back({step, wall, p.step_s, "slowest rank"});
  if (p.phase != RunPhase::Decode) c.rows.push_back({"attention forward", crit->fwd, p.attention_fwd_s, "critical rank"});
  if (p.phase == RunPhase::Train) c.rows.push_back({"attention backward", crit->bwd, p.attention_bwd_s, "critical rank"});
  if (p.phase == RunPhase::Decode) c.rows.push_back({"attention decode", crit->dec, p.attention_decode_s, "critical rank"});
  c.rows.push_back({"other compute", rest, p.other_compute_s, "mean over ranks (GEMMs and other kernels)"});
  c.rows.push_back({"exposed communication", crit->exposed, p.exposed_s, "critical rank"});
  c.rows.push_back({"idle (host)", crit->idle, std::nullopt, "critical rank"});
  // The largest absolute gap among the components (the step is their sum, not one of them).
  const CheckRow* worst = nullptr;
  double gap = -1;
  for (const auto& r : c.rows) {
    if (r.component.starts_with("step")) continue;
    const double g = std::abs(r.measured_s - r.predicted_s.value_or(0.0));
    if (g > gap) gap = g, worst = &r;
  }
  const double pred = worst->predicted_s.value_or(0.0);
  c.diagnosis = fmt::format("largest gap: {} measured {:.3f} ms, predicted {:.3f} ms ({}{:.3f} ms{}); look at {}",
                            worst->component, worst->measured_s * 1e3, pred * 1e3,
                            worst->measured_s >= pred ? "+" : "-", gap * 1e3,
                            pred > 0 ? fmt::format(", {:.2f}x", worst->measured_s / pred) : std::string(), hint(worst->component));
  return c;
}

}  // namespace ringsim::calibration
