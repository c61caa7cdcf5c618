#pragma once
// The data-parallel gradient synchronisation of one training step: the ranks that hold the same
// weights (dp x sp of them: the context-parallel ranks compute gradients of the same weights)
// reduce their gradients, bucketed and overlapped with the backward as DDP and FSDP do. What the
// backward does not hide lengthens the step. `predict` and the planners share it.
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
};

// A ring all-reduce of bf16 gradients (2 (G-1)/G of their bytes per device), or with ZeRO-3 a
// reduce-scatter plus the forward and backward all-gathers of the weights (3 (G-1)/G), over the
// intra- or inter-node links of the G = dp x sp ranks; the attention backward of the step is the
// window it overlaps (the rest of the backward is left as margin). Zero for a group of one and
// for attention-only models (no weights). `parameters`: the weights a device holds before
// tensor parallelism splits them (a pipeline stage's; negative: the whole model's).
[[nodiscard]] GradientSync gradient_sync(const ResolvedScenario& s, std::int64_t dp, Sharding zero, double hiding_s,
                                         double parameters = -1);

}  // namespace ringsim::models
