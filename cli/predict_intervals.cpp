#include "cli/predict_intervals.hpp"

#include "models/analytic/analytic.hpp"
#include "planning/predict_runs.hpp"

namespace ringsim::cli {

models::TimeIntervals time_intervals(LayoutResult& r, const models::Prediction& analytic) {
  auto iv = models::time_intervals_around(r.scenario, analytic);
  // The step's interval moves with the engine's step (the simulator's, with --engine des); the
  // attention times are the cost model's either way.
  if (iv.step.available) {
    iv.step.lo *= r.prediction.step_s / analytic.step_s;
    iv.step.hi *= r.prediction.step_s / analytic.step_s;
  }
  return iv;
}

void with_speedups(std::vector<LayoutResult>& results) {
  auto& first = results.front();
  for (auto& r : results)
    r.speedup = planning::speedup_interval(first.scenario, r.scenario, first.prediction.step_s / r.prediction.step_s);
}

}  // namespace ringsim::cli
