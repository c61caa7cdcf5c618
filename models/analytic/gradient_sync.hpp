#pragma once
// The data-parallel gradient synchronisation of one training step: the ranks that hold the same
// weights (dp x sp of them: the context-parallel ranks compute gradients of the same weights)
// reduce their gradients, bucketed and overlapped with the backward as DDP and FSDP do. What the
// backward does not hide lengthens the step. `predict` and the planners share it.
#include <algorithm>
#include <cstdint>

#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

struct GradientSync {
  double total_s = 0;    // the collectives' time
  double exposed_s = 0;  // the part the attention backward (`hiding_s`) does not hide
  // Of total_s: ZeRO-3's gathers of the weights (forward and backward: once per micro-batch) and
  // the gradients' reduction (once per step, after the last micro-batch's backward).
  double gather_s = 0, reduce_s = 0;
  // How many backward windows hide it: every micro-batch's under ZeRO-3 (its gathers ride
  // along each), else the last micro-batch's only.
  double windows = 1;
  // The exposed part were each window `hiding_s` long (plan-docs: one step per packed sequence).
  [[nodiscard]] double exposed_with(double hiding_s) const noexcept {
    return std::max(0.0, total_s - windows * hiding_s);
  }
};

// A ring all-reduce of bf16 gradients (2 (G-1)/G of their bytes per device), or with ZeRO-3 a
// reduce-scatter plus the forward and backward all-gathers of the weights (3 (G-1)/G), over the
// intra- or inter-node links of the G = dp x sp ranks; the attention backward of the step is the
// window it overlaps (the rest of the backward is left as margin). Zero for a group of one and
// for attention-only models (no weights). `parameters`: the weights a device holds before
// tensor parallelism splits them (a pipeline stage's; negative: the whole model's). Over a step
// of `micro_batches`: ZeRO-3 gathers the weights for each, the gradients are reduced once.
[[nodiscard]] GradientSync gradient_sync(const ResolvedScenario& s, std::int64_t dp, Sharding zero, double hiding_s,
                                         double parameters = -1, std::int64_t micro_batches = 1);

}  // namespace ringsim::models
