#pragma once
// What a step spends, as one list of parts that add up to the step: every front-end (predict's
// table, JSON and CSV; sweep; plan; plan-docs; the GUI's bars; the Python module) prints these
// parts and names the largest, so no cost is counted twice (a ring's transfer wait is inside its
// attention time: here it is taken out once) and none is left out (the gradient synchronisation,
// a pipeline's idle time).
//
// The attention of a pass is, exactly (models/analytic/analytic.cpp: a ring round lasts its
// per-round overhead plus its busiest device's compute or its transfer, whichever the overlap
// lets through; a collective stage lasts its transfer): the mean device's kernels, the busiest
// device's time beyond the mean's, each round's fixed cost and sparse preparation, and the
// communication no compute hid. (The ring loop's host work per step, where it paces a step, is
// that step's time: models/implementations/ring_steps.)
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/analytic/analytic.hpp"

namespace ringsim::models {

enum class StepPart : std::uint8_t {
  AttentionFwd,          // the mean device's attention steps, forward (kernels, or the host pacing them)
  AttentionBwd,          // the same, backward
  BusiestWait,           // the busiest device's attention beyond the mean's (imbalance; NCCL's kernel beside it)
  AttentionOverhead,     // each ring round's fixed cost (sync, buffer swap) and sparse preparation
  ExposedRing,           // ring K/V and dK/dV transfers no compute hid
  ExposedAllGather,      // all-gather strategies' collectives not hidden
  ExposedReduceScatter,
  ExposedAllToAll,       // Ulysses' all-to-alls not hidden
  TpComm,                // tensor-parallel all-reduces
  OtherCompute,          // projections, MLP, LM head, element-wise work, recomputation
  PipelineIdle,          // the busiest pipeline rank waiting: the bubble and the stage-to-stage hops
  GradientSync,          // data-parallel gradient reduction / ZeRO-3 gathers the backward did not hide
  SimulatedDifference,   // the event simulation's step minus the lock-step parts (des engine; may be negative)
};
inline constexpr std::size_t kStepParts = 13;

struct StepPartInfo {
  const char* key;    // machine-readable: JSON keys, CSV columns "part_<key>_s"
  const char* label;  // a table's column heading
  const char* name;   // what it is, for legends
  bool compute;       // work rather than waiting or communication (never the why-line's cause)
};
[[nodiscard]] const StepPartInfo& part_info(StepPart p) noexcept;
[[nodiscard]] constexpr StepPart step_part(std::size_t i) noexcept { return static_cast<StepPart>(i); }

struct StepBreakdown {
  std::array<double, kStepParts> s{};
  [[nodiscard]] double& operator[](StepPart p) noexcept { return s[static_cast<std::size_t>(p)]; }
  [[nodiscard]] double operator[](StepPart p) const noexcept { return s[static_cast<std::size_t>(p)]; }
  // The parts' sum, in the order listed: the step.
  [[nodiscard]] double total() const noexcept;
  StepBreakdown& operator+=(const StepBreakdown& o) noexcept;
  [[nodiscard]] StepBreakdown scaled(double k) const noexcept;
  // The largest part that is not compute (the step's cause when it is more than 5 % of the step).
  [[nodiscard]] StepPart largest_cause() const noexcept;
  // Attention kernels, forward and backward (the mean device's).
  [[nodiscard]] double attention_compute_s() const noexcept {
    return (*this)[StepPart::AttentionFwd] + (*this)[StepPart::AttentionBwd];
  }
  // Communication no compute hid: ring transfers and the strategies' collectives.
  [[nodiscard]] double exposed_s() const noexcept;
};

// One micro-batch's pass through the model: the prediction's parts, reported as `pass_s` (the
// simulator's step; the columns' sum, Prediction::columns_s, for the cost model), the difference
// being SimulatedDifference.
[[nodiscard]] StepBreakdown pass_breakdown(const Prediction& p, double pass_s);
[[nodiscard]] inline StepBreakdown pass_breakdown(const Prediction& p) { return pass_breakdown(p, p.columns_s()); }

// One line naming what limits the step: its largest cause when that is more than 5 % of the step
// (the exposed collective with the resource that bounds it, the imbalance column's figure, the
// rounds' fixed cost, tensor-parallel all-reduces, the pipeline's idle time, the gradient
// synchronisation), else compute-bound (attention or the rest). Shares are of `b.total()`.
[[nodiscard]] std::string why(const Prediction& p, const StepBreakdown& b);

}  // namespace ringsim::models
