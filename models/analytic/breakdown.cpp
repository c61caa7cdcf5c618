#include "models/analytic/breakdown.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ringsim::models {

namespace {

constexpr std::array<StepPartInfo, kStepParts> kInfo = {{
    {"attention_fwd", "attn fwd", "the mean device's attention steps, forward (kernels, or the host where it paces them)", true},
    {"attention_bwd", "attn bwd", "the same, backward", true},
    {"busiest_wait", "busiest", "the busiest device's attention beyond the mean's", false},
    {"attention_overhead", "round", "the fixed cost of each ring round (sync, buffer swap) and sparse preparation", false},
    {"exposed_ring", "ring xfer", "ring transfers no compute hid", false},
    {"exposed_allgather", "all-gather", "all-gathers no compute hid", false},
    {"exposed_reduce_scatter", "red-scatter", "reduce-scatters no compute hid", false},
    {"exposed_all_to_all", "all-to-all", "all-to-alls no compute hid", false},
    {"tp_comm", "tp comm", "tensor-parallel all-reduces", false},
    {"other_compute", "other", "projections, MLP, LM head, element-wise work, recomputation", true},
    {"pipeline_idle", "pp idle", "the busiest pipeline rank idle (bubble, hops)", false},
    {"grad_sync", "grad sync", "gradient synchronisation the backward did not hide", false},
    {"simulated_difference", "des diff", "the simulated step beyond the lock-step parts", false},
}};

}  // namespace

const StepPartInfo& part_info(StepPart p) noexcept { return kInfo[static_cast<std::size_t>(p)]; }

double StepBreakdown::total() const noexcept {
  double t = 0;
  for (const double x : s) t += x;
  return t;
}

StepBreakdown& StepBreakdown::operator+=(const StepBreakdown& o) noexcept {
  for (std::size_t i = 0; i < kStepParts; ++i) s[i] += o.s[i];
  return *this;
}

StepBreakdown StepBreakdown::scaled(double k) const noexcept {
  StepBreakdown b;
  for (std::size_t i = 0; i < kStepParts; ++i) b.s[i] = s[i] * k;
  return b;
}

StepPart StepBreakdown::largest_cause() const noexcept {
  StepPart best = StepPart::ExposedAllToAll;
  for (std::size_t i = 0; i < kStepParts; ++i)
    if (!kInfo[i].compute && s[i] > (*this)[best]) best = step_part(i);
  return best;
}

double StepBreakdown::exposed_s() const noexcept {
  return (*this)[StepPart::ExposedRing] + (*this)[StepPart::ExposedAllGather] + (*this)[StepPart::ExposedReduceScatter] +
         (*this)[StepPart::ExposedAllToAll];
}

StepBreakdown pass_breakdown(const Prediction& p, double pass_s) {
  StepBreakdown b;
  const double mean_bwd = p.attention_mean_s - p.attention_mean_fwd_s;
  b[StepPart::AttentionFwd] = p.attention_mean_fwd_s;
  b[StepPart::AttentionBwd] = mean_bwd;
  // Never below the mean (the busiest device's is a maximum): a difference within rounding of
  // balanced devices is none; anything else would show as the simulated difference, which the
  // tests hold at 0 for the cost model.
  const double wait = p.attention_busiest_s - p.attention_mean_s;
  b[StepPart::BusiestWait] = wait > 1e-12 * p.attention_busiest_s ? wait : 0.0;
  b[StepPart::AttentionOverhead] = p.attention_overhead_s;
  b[StepPart::ExposedRing] = p.exposed_transfer_s;
  b[StepPart::ExposedAllGather] = p.exposed_allgather_s;
  b[StepPart::ExposedReduceScatter] = p.exposed_reduce_scatter_s;
  b[StepPart::ExposedAllToAll] = p.exposed_all_to_all_s;
  b[StepPart::TpComm] = p.collective_s;
  b[StepPart::OtherCompute] = p.other_compute_s;
  // What the parts leave of the reported pass: 0 up to rounding for the cost model (its step is
  // the columns' sum, and each attention column is exactly its parts), the simulator's
  // dependencies beyond lock-step otherwise.
  b[StepPart::SimulatedDifference] = pass_s - b.total();
  if (std::abs(b[StepPart::SimulatedDifference]) <= 1e-12 * std::abs(pass_s)) b[StepPart::SimulatedDifference] = 0;
  return b;
}

std::string why(const Prediction& p, const StepBreakdown& b) {
  const double step = b.total();
  auto pct = [&](double x) { return std::to_string(static_cast<int>(std::lround(step > 0 ? 100 * x / step : 0))); };
  const StepPart cause = b.largest_cause();
  const double c = b[cause];
  if (c > 0.05 * step) {
    const std::string share = pct(c) + "% of the step";
    switch (cause) {
      case StepPart::ExposedRing:
        return "exposed ring transfers (" + share + ")" + (p.ring_bound.empty() ? "" : ", bound by " + p.ring_bound);
      case StepPart::ExposedAllGather:
      case StepPart::ExposedReduceScatter:
      case StepPart::ExposedAllToAll: {
        const char* what = cause == StepPart::ExposedAllGather       ? "exposed all-gather"
                           : cause == StepPart::ExposedReduceScatter ? "exposed reduce-scatter"
                                                                     : "exposed all-to-all";
        return std::string(what) + " (" + share + ")" + (p.collective_bound.empty() ? "" : ", bound by " + p.collective_bound);
      }
      case StepPart::BusiestWait: {
        // The figure is the imbalance column's (each round's busiest device over the mean,
        // averaged over rounds): one definition for the table, this line, the GUI and the docs.
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2f", p.imbalance);
        // Balanced work that still waits: the devices' calls differ in shape (a zigzag ring's
        // diagonal call against its half-block calls), so equal pairs take unequal kernel time.
        if (p.imbalance < 1.005)
          return "each round waits for its slowest device (" + share +
                 " waiting): the work is balanced (imbalance " + buf + ") but the devices' kernel calls differ in shape and speed";
        return "imbalance " + std::string(buf) + ": each round waits for its busiest device (" + share + " waiting)";
      }
      case StepPart::AttentionOverhead:
        return "the ring rounds' fixed cost and sparse preparation (" + share + ")";
      case StepPart::TpComm:
        return "tensor-parallel all-reduces (" + share + ")";
      case StepPart::PipelineIdle:
        return "pipeline bubble and stage-to-stage hops (" + share + " idle on the busiest stage)";
      case StepPart::GradientSync:
        return "exposed gradient synchronisation (" + share + ")";
      case StepPart::SimulatedDifference:
        return "dependencies the lock-step parts miss (" + share + ", event simulation)";
      default:
        break;
    }
  }
  const double attention = b.attention_compute_s();
  if (attention > 0.5 * step) return "compute-bound (attention " + pct(attention) + "% of the step)";
  return "compute-bound (projections and MLP " + pct(b[StepPart::OtherCompute]) + "% of the step)";
}

}  // namespace ringsim::models
