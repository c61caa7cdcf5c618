#pragma once
// Prediction intervals. A calibrated profile carries what its fit left uncertain
// (Profile::Uncertainty): the covariance of its fitted parameters and the spread of the held-out
// (leave-one-group-out) residuals in log space. A prediction's interval combines both: the
// parameters' covariance carried through the prediction by central differences (the delta
// method, in log space) and the held-out spread, added in quadrature, at a two-sided normal level.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/cost/cost.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

struct Prediction;  // models/analytic/analytic.hpp

struct Interval {
  double lo = 0;
  double hi = 0;
  bool available = false;  // false: the profile carries no uncertainty for this quantity
};

// z such that a standard normal lies in [-z, z] with probability `level` (0 < level < 1).
[[nodiscard]] double two_sided_normal_quantile(double level);

// `quantity` is "time" or "ratio" (which held-out spread applies); `predict` recomputes the value
// under a perturbed profile. A non-positive or non-finite value has no interval.
[[nodiscard]] Interval prediction_interval(const Profile& profile, const std::string& quantity, double value,
                                           const std::function<double(const Profile&)>& predict, double level = 0.9);

// The intervals of several values predicted together (`predict` returns them in the same order,
// all from one prediction): each perturbed profile is predicted once for all of them.
// prediction_interval's value i for each i.
[[nodiscard]] std::vector<Interval> prediction_intervals(const Profile& profile, const std::string& quantity,
                                                         const std::vector<double>& values,
                                                         const std::function<std::vector<double>(const Profile&)>& predict,
                                                         double level = 0.9);

// `f` of the scenario as it would be under profile `p`: the scenario's profile and cost model are
// swapped for the call and restored after (also when `f` throws).
[[nodiscard]] double under_profile(ResolvedScenario& s, const Profile& p,
                                   const std::function<double(const ResolvedScenario&)>& f);

// The intervals of the scenario's analytic step and of its attention forward and backward times
// (quantity "time": the held-out spread the ring-table fits measured on attention times), around
// `at`, the scenario's analytic prediction: unavailable, at no cost, when its profile carries no
// fitted uncertainty; else 2 analytic predictions per fitted parameter for all three.
struct TimeIntervals {
  Interval step, attention_fwd, attention_bwd;
};
[[nodiscard]] TimeIntervals time_intervals_around(ResolvedScenario& s, const Prediction& at, double level = 0.9);

// The log-space standard deviation of the ratio of two scenarios' analytic steps where both run on
// one fit (the same GPU and kernel family, and the same fitted uncertainty: the profiles of one fit
// or copied from it, as the libraries calling one kernel are): what the two share cancels. The
// parameters' covariance is carried through log(step_a) - log(step_b) (the delta method, both
// scenarios predicted under each perturbed profile), and the held-out spread is the profile's
// "ratio" one (the leave-one-group-out spread of predicted over measured ratios of two
// configurations' times), in quadrature. Empty where the profiles differ or the profile measured
// no ratio spread; 2 analytic predictions of each scenario per fitted parameter.
[[nodiscard]] std::optional<double> paired_step_log_sd(ResolvedScenario& a, const Prediction& at_a, ResolvedScenario& b,
                                                       const Prediction& at_b);

// The same from a log-space standard deviation already known.
[[nodiscard]] Interval log_normal_interval(double value, double log_sd, double level = 0.9);

}  // namespace ringsim::models
