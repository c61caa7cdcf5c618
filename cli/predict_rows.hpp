#pragma once
// A row of `ringsim predict`: one layout's resolved scenario and its prediction, from the cost
// model or the discrete-event simulator (--engine), with its 90 % intervals
// (cli/predict_intervals.hpp). The one-scenario views and the batch mode all predict rows.
#include <optional>
#include <string>

#include "calibration/tables.hpp"
#include "models/analytic/analytic.hpp"
#include "models/analytic/interval.hpp"
#include "models/analytic/training_step.hpp"
#include "models/catalog/resolve.hpp"
#include "models/memory/memory.hpp"
#include "cli/scenario_options.hpp"

namespace ringsim::cli {

// Which model times the step: the closed-form lock-step rounds, or the discrete-event
// simulation of the same scenario (asynchronous rounds, shared links; sim::simulate_step).
using calibration::Engine;

// "des" or "analytic", as --engine names it.
[[nodiscard]] const char* engine_name(Engine e);

// Built from a label and its resolved scenario; predict_row and with_speedups fill the rest.
struct LayoutResult {
  LayoutResult(std::string label, models::ResolvedScenario s) : layout(std::move(label)), scenario(std::move(s)) {}
  std::string layout;
  models::ResolvedScenario scenario;
  models::Prediction prediction;
  models::Interval step;     // of prediction.step_s (quantity "time")
  // Of prediction.attention_fwd_s / attention_bwd_s (quantity "time"; the cost model's, whatever the engine).
  models::Interval attention_fwd, attention_bwd;
  models::Interval speedup;  // of the first row's step / this one's (quantity "ratio"), set by with_speedups
  models::MemoryEstimate memory;  // under the training options (apply_training)
  std::vector<models::MemoryPart> memory_parts;  // every part of it, with --memory-breakdown
  models::TrainingStep train;     // the step as trained: micro-batches, pipeline, gradient sync (apply_training)
  [[nodiscard]] std::string label(bool with_strategy) const {
    return with_strategy ? scenario.strategy.spec + " " + layout : layout;
  }
};

// How the scenario is trained, as `plan` and `sweep` take it: data-parallel replicas of the mesh,
// the ZeRO stage of the model states (sharded over dp x sp), and the recomputation policy (unset:
// the profile's: full where the published runs rematerialised, else selective, the matmul
// outputs kept as Megatron and JAX's checkpoint_dots do).
struct Training : models::TrainingOptions {
  // "dp 1, ZeRO-3 over dp x sp, selective recomputation": what the memory line says it assumed.
  [[nodiscard]] std::string text(const models::Profile& p) const;
};

// Sets the row's profile to repeat the forward when the policy is full recomputation (the time
// model charges only that; selective recomputation repeats element-wise work it leaves out).
// Before predict_row.
void prepare_training(LayoutResult& r, const Training& t);
// After predict_row: the memory under the training options and the exposed gradient
// synchronisation of dp x sp replicas added to the step, tokens/s of every replica
// (models::training_step, which the planners' evaluator counts its rows with too).
void apply_training(LayoutResult& r, const Training& t);

// A row of a comparison that cannot run here: its strategy and layout, and why (the one line its
// error would print).
struct NotRunnable {
  std::string cp, layout, reason;
};
[[nodiscard]] NotRunnable not_runnable_row(const RefusedRun& refused);

// The prediction of a resolved row (its step, the simulator's with --engine des on `topology`,
// empty for the hardware's, and interval).
// With the DES only the step-level figures are replaced (step, tokens/s, MFU): the breakdown
// (attention, other, collectives) is the cost model's either way, and the analytic `exposed`
// and `imbalance` keep their lock-step meaning rather than mixing two definitions.
void predict_row(LayoutResult& r, Engine engine, const std::string& topology = "");

// `spec` with `layout`, resolved and predicted.
[[nodiscard]] LayoutResult run_one(models::ScenarioSpec spec, const models::LayoutSpec& layout, const models::Catalog& catalog,
                                   Engine engine);

}  // namespace ringsim::cli
