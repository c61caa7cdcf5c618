#pragma once
// A predicted step as it is trained: the memory under the training options; the micro-batches
// of the step, run one after another or through a pipeline's stages (models/pipeline/); the
// data-parallel gradient synchronisation the backward does not hide added to the step;
// tokens/s of every replica and the MFU rescaled to the longer step. `predict` (cli/predict_rows)
// and the planners' evaluator (planning/evaluate) both count a row this way, so their rows
// agree byte for byte.
#include <cstdint>
#include <optional>

#include "models/analytic/analytic.hpp"
#include "models/analytic/breakdown.hpp"
#include "models/analytic/gradient_sync.hpp"
#include "models/memory/memory.hpp"
#include "models/pipeline/schedule.hpp"
#include "models/pipeline/step.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

struct TrainingOptions {
  std::int64_t dp = 1;  // data-parallel replicas of the mp x sp mesh (of each pipeline stage)
  Sharding zero = Sharding::Zero3;
  // Unset: the profile's, full where its published runs rematerialised, else selective (the
  // matmul outputs kept, as Megatron and JAX's checkpoint_dots do).
  std::optional<Recompute> recompute;
  std::int64_t kv_buffers = 2;
  MemorySettings memory;  // precision, sequence parallelism, offload, headroom
  // The step's micro-batches (each the scenario's `batch` sequences; the gradient accumulation
  // steps of a replica) and the pipeline they run through (stages 1: none, one after another).
  PipelineSchedule pipeline;
  [[nodiscard]] Recompute policy(const Profile& p) const {
    return recompute.value_or(p.recompute ? Recompute::Full : Recompute::Selective);
  }
  // What the memory model counts under these options (training_step's memory, predict's breakdown).
  [[nodiscard]] MemoryOptions memory_options(const Profile& p) const {
    MemoryOptions mo;
    mo.dp = dp;
    mo.sharding = zero;
    mo.recompute = policy(p);
    mo.kv_buffers = kv_buffers;
    mo.settings = memory;
    mo.pipeline = pipeline;
    return mo;
  }
  // Devices of the step: pp x dp x mp x sp.
  [[nodiscard]] std::int64_t devices(const ScenarioSpec& s) const noexcept { return pipeline.stages * dp * s.mp * s.sp; }
};

struct TrainingStep {
  Recompute recompute = Recompute::None;  // the policy counted
  MemoryEstimate memory;
  GradientSync sync;    // over the step: ZeRO-3's gathers for every micro-batch, one reduction
  PipelineStep passes;  // the micro-batches' forwards and backwards, every stage (no sync)
  double hop_s = 0;     // one stage-to-stage transfer of a micro-batch's activations (0: no pipeline)
  double step_s = 0;        // the passes plus the exposed synchronisation
  double tokens_per_s = 0;  // every replica's tokens per step_s
  double mfu = 0;           // the prediction's, over the longer step
  double scale = 1;         // step_s / the prediction's step: what its intervals scale by
  // step_s in parts (models/analytic/breakdown.hpp): the busiest pipeline rank's (the one that
  // idles least; with one stage, every micro-batch's pass), its idle time, the exposed sync.
  StepBreakdown parts;
};

// `p` is the prediction of `s` for one micro-batch through the whole model (the cost model's or
// the simulator's step). InputError for a pipeline the model cannot be split over (fields "pp",
// "micro-batches", "pp-schedule").
[[nodiscard]] TrainingStep training_step(const ResolvedScenario& s, const Prediction& p, const TrainingOptions& o);

}  // namespace ringsim::models
