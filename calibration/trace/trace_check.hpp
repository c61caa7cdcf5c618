#pragma once
// A measured step beside its prediction: the traces' summaries (step_summary.hpp) against the
// cost model's step for the same scenario, component by component, with the ratio and a
// one-line diagnosis of the largest gap.
#include <optional>
#include <string>
#include <vector>

#include "calibration/trace/step_summary.hpp"
#include "models/analytic/analytic.hpp"

namespace ringsim::calibration {

struct CheckRow {
  std::string component;
  double measured_s = 0;
  std::optional<double> predicted_s;  // none: the model has no such term (idle host time)
  std::string how;                    // how the measured figure aggregates ranks and steps
};

struct TraceCheck {
  std::vector<CheckRow> rows;
  std::string diagnosis;
  std::int64_t ranks = 0, steps = 0;
  std::int64_t critical_rank = 0;  // the rank with the most attention time
};

// Per rank, the median over its steps of each figure (a step that ran long once, a first step
// that compiled, weigh little); then the step is the slowest rank's, attention, exposed
// communication and idle the critical rank's (the one with the most attention work: what a
// lock-step ring waits for, as the prediction's busiest device), the rest the mean over ranks.
// `prediction` is the whole step, all layers. InputError (field "traces") without any step.
[[nodiscard]] TraceCheck check_trace(const std::vector<TraceSummary>& traces, const models::Prediction& prediction);

}  // namespace ringsim::calibration
