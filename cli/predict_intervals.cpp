#include "cli/predict_intervals.hpp"

#include "models/analytic/analytic.hpp"

namespace ringsim::cli {

namespace {

// The analytic step of the scenario under another profile.
double analytic_step(models::ResolvedScenario& s, const models::Profile& p) {
  return models::under_profile(s, p, [](const models::ResolvedScenario& r) { return models::predict(r).step_s; });
}

}  // namespace

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
  first.speedup = {1.0, 1.0, !first.scenario.profile.uncertainty.empty()};  // the first over itself: exactly 1
  for (std::size_t k = 1; k < results.size(); ++k) {
    auto& r = results[k];
    const double value = first.prediction.step_s / r.prediction.step_s;
    // One profile's uncertainty carries both steps; rows of other implementations (another
    // strategy) have none in common with the first.
    if (r.scenario.profile.name != first.scenario.profile.name) {
      r.speedup = {};
      continue;
    }
    const double analytic = models::predict(first.scenario).step_s / models::predict(r.scenario).step_s;
    r.speedup = models::prediction_interval(r.scenario.profile, "ratio", analytic, [&](const models::Profile& p) {
      return analytic_step(first.scenario, p) / analytic_step(r.scenario, p);
    });
    if (r.speedup.available) {
      r.speedup.lo *= value / analytic;
      r.speedup.hi *= value / analytic;
    }
  }
}

}  // namespace ringsim::cli
