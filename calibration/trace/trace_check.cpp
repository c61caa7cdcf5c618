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
  double wall = 0, fwd = 0, bwd = 0, rest = 0, exposed = 0, idle = 0, p2p = 0;
};

RankFigures figures(const TraceSummary& t) {
  std::vector<double> wall, fwd, bwd, rest, exposed, idle, p2p;
  for (const auto& s : t.steps) {
    wall.push_back(s.wall_us * 1e-6);
    fwd.push_back(s.class_us[index(OpClass::AttentionFwd)] * 1e-6);
    bwd.push_back(s.class_us[index(OpClass::AttentionBwd)] * 1e-6);
    rest.push_back((s.class_us[index(OpClass::Gemm)] + s.class_us[index(OpClass::Other)]) * 1e-6);
    exposed.push_back(s.exposed_communication_us * 1e-6);
    idle.push_back(s.idle_us * 1e-6);
    p2p.push_back(s.class_us[index(OpClass::P2p)] * 1e-6);
  }
  return {median(wall), median(fwd), median(bwd), median(rest), median(exposed), median(idle), median(p2p)};
}

// What to look at when a component is off, in the user's terms.
std::string hint(const std::string& component) {
  if (component.starts_with("attention")) return "the GPU's kernel efficiencies: `ringsim calibrate --from-trace` fits them from these traces";
  if (component.starts_with("exposed")) return "the link or the overlap: `ringsim calibrate --from-trace` fits the hop from the point-to-point kernels";
  if (component.starts_with("other")) return "the step outside attention (projections, MLP, element-wise), which the ring's kernels do not calibrate";
  return "host-side time between kernels (Python, launches, synchronisation), which the model does not time";
}

}  // namespace

TraceCheck check_trace(const std::vector<TraceSummary>& traces, const models::Prediction& p) {
  std::vector<RankFigures> ranks;
  TraceCheck c;
  for (const auto& t : traces) {
    if (t.steps.empty()) continue;
    ranks.push_back(figures(t));
    c.steps = std::max<std::int64_t>(c.steps, static_cast<std::int64_t>(t.steps.size()));
  }
  if (ranks.empty()) throw models::InputError({}, 0, "traces", "no step with GPU operations in the traces");
  c.ranks = static_cast<std::int64_t>(ranks.size());
  const auto crit = std::max_element(ranks.begin(), ranks.end(), [](const RankFigures& a, const RankFigures& b) {
    return a.fwd + a.bwd < b.fwd + b.bwd;
  });
  c.critical_rank = crit - ranks.begin();
  double wall = 0, rest = 0;
  for (const auto& r : ranks) wall = std::max(wall, r.wall), rest += r.rest / static_cast<double>(ranks.size());
  c.rows = {
      {"step", wall, p.step_s, "slowest rank"},
      {"attention forward", crit->fwd, p.attention_fwd_s, "critical rank"},
      {"attention backward", crit->bwd, p.attention_bwd_s, "critical rank"},
      {"other compute", rest, p.other_compute_s, "mean over ranks (GEMMs and other kernels)"},
      {"exposed communication", crit->exposed, p.exposed_transfer_s + p.exposed_collectives_s() + p.collective_s,
       "critical rank"},
      {"idle (host)", crit->idle, std::nullopt, "critical rank"},
  };
  // The largest absolute gap among the components (the step is their sum, not one of them).
  const CheckRow* worst = nullptr;
  double gap = -1;
  for (const auto& r : c.rows) {
    if (r.component == "step") continue;
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
