#pragma once
// A measured step beside its prediction: the traces' summaries (step_summary.hpp) against the
// cost model's step for the same scenario and phase, component by component, with the ratio and
// a one-line diagnosis of the largest gap. The phase is the trace's: backward attention kernels
// make a training step, forward ones alone a forward pass (compared with a prefill), decode
// kernels alone a decode step.
#include <optional>
#include <string>
#include <vector>

#include "calibration/trace/step_summary.hpp"
#include "models/analytic/analytic.hpp"
#include "models/inference/phase.hpp"

namespace ringsim::calibration {

// The phase the traces ran, from their attention kernels over every step of every trace.
// InputError (field "traces", naming the file when there is one) when they hold no attention
// kernel (nothing to tell the phase by), or decode kernels beside forward or backward ones (a
// serving run's steps mix phases: one phase per check).
[[nodiscard]] models::RunPhase trace_phase(const std::vector<TraceSummary>& traces);

// The predicted figures a traced step is held against, whole step (all layers), in one shape for
// every phase.
struct PredictedStep {
  models::RunPhase phase = models::RunPhase::Train;
  double step_s = 0;        // training step; prefill: TTFT; decode: time per output token
  double attention_fwd_s = 0, attention_bwd_s = 0, attention_decode_s = 0;
  double other_compute_s = 0;
  double exposed_s = 0;     // communication nothing hides, the tensor-parallel collectives included
  [[nodiscard]] static PredictedStep of(const models::Prediction& p);
  [[nodiscard]] static PredictedStep of(const models::InferencePrediction& p);
};

struct CheckRow {
  std::string component;
  double measured_s = 0;
  std::optional<double> predicted_s;  // none: the model has no such term (idle host time)
  std::string how;                    // how the measured figure aggregates ranks and steps
};

struct TraceCheck {
  models::RunPhase phase = models::RunPhase::Train;
  std::vector<CheckRow> rows;
  std::string diagnosis;
  std::int64_t ranks = 0, steps = 0;
  std::int64_t critical_rank = 0;  // the trace with the most attention time (its place in the list)
};

// Per rank, the median over its steps of each figure (a step that ran long once, a first step
// that compiled, weigh little); then the step is the slowest rank's, attention, exposed
// communication and idle the critical rank's (the one with the most attention work: what a
// lock-step ring waits for, as the prediction's busiest device), the rest the mean over ranks.
// The rows are the phase's: training has forward and backward attention, a prefill forward, a
// decode step decode attention. InputError (field "traces") without any step.
[[nodiscard]] TraceCheck check_trace(const std::vector<TraceSummary>& traces, const PredictedStep& prediction);

}  // namespace ringsim::calibration
