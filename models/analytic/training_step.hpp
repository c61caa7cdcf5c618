#pragma once
// A predicted step as it is trained: the memory under the training options, the data-parallel
// gradient synchronisation the backward does not hide added to the step, tokens/s of every
// replica and the MFU rescaled to the longer step. `predict` (cli/predict_rows) and the planners'
// evaluator (planning/evaluate) both count a row this way, so their rows agree byte for byte.
#include <cstdint>
#include <optional>

#include "models/analytic/analytic.hpp"
#include "models/analytic/gradient_sync.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

struct TrainingOptions {
  std::int64_t dp = 1;  // data-parallel replicas of the mp x sp mesh
  Sharding zero = Sharding::Zero3;
  // Unset: the profile's, full where its published runs rematerialised, else selective (the
  // matmul outputs kept, as Megatron and JAX's checkpoint_dots do).
  std::optional<Recompute> recompute;
  std::int64_t kv_buffers = 2;
  MemorySettings memory;  // precision, sequence parallelism, offload, headroom
  [[nodiscard]] Recompute policy(const Profile& p) const {
    return recompute.value_or(p.recompute ? Recompute::Full : Recompute::Selective);
  }
};

struct TrainingStep {
  Recompute recompute = Recompute::None;  // the policy counted
  MemoryEstimate memory;
  GradientSync sync;
  double step_s = 0;        // the prediction's step plus the exposed synchronisation
  double tokens_per_s = 0;  // every replica's tokens per step_s
  double mfu = 0;           // the prediction's, over the longer step
  double scale = 1;         // step_s / the prediction's step: what its intervals scale by
};

// `p` is the prediction of `s` (the cost model's or the simulator's step).
[[nodiscard]] TrainingStep training_step(const ResolvedScenario& s, const Prediction& p, const TrainingOptions& o);

}  // namespace ringsim::models
