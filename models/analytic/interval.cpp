#include "models/analytic/interval.hpp"

#include "models/analytic/analytic.hpp"

#include <cmath>
#include <vector>

#include "models/io/error.hpp"
#include "models/workload/mask.hpp"

namespace ringsim::models {

double two_sided_normal_quantile(double level) {
  if (!(level > 0 && level < 1)) throw InputError({}, 0, "level", "expected a confidence level in (0, 1)");
  // Invert erf by bisection: monotone, and 60 halvings reach double precision.
  const double target = level;  // P(|Z| <= z) = erf(z / sqrt 2)
  double lo = 0, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-15; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::erf(mid / std::sqrt(2.0)) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

Interval log_normal_interval(double value, double log_sd, double level) {
  Interval out;
  if (!(value > 0) || !std::isfinite(value) || !(log_sd >= 0) || !std::isfinite(log_sd)) return out;
  const double z = two_sided_normal_quantile(level);
  out.lo = value * std::exp(-z * log_sd);
  out.hi = value * std::exp(z * log_sd);
  out.available = true;
  return out;
}

double under_profile(ResolvedScenario& s, const Profile& p, const std::function<double(const ResolvedScenario&)>& f) {
  struct Restore {
    ResolvedScenario& s;
    Profile profile;
    ~Restore() {
      s.profile = std::move(profile);
      s.rebuild_cost();
    }
  } restore{s, s.profile};
  s.profile = p;
  s.rebuild_cost();
  return f(s);
}

Interval step_interval(ResolvedScenario& s, double level) {
  if (s.profile.uncertainty.residual_log_sd.find("time") == s.profile.uncertainty.residual_log_sd.end()) return {};
  return step_interval_around(s, predict(s).step_s, level);
}

Interval step_interval_around(ResolvedScenario& s, double step, double level) {
  if (s.profile.uncertainty.residual_log_sd.find("time") == s.profile.uncertainty.residual_log_sd.end()) return {};
  return prediction_interval(
      s.profile, "time", step,
      [&](const Profile& p) { return under_profile(s, p, [](const ResolvedScenario& r) { return predict(r).step_s; }); },
      level);
}

Interval prediction_interval(const Profile& profile_in, const std::string& quantity, double value,
                             const std::function<double(const Profile&)>& predict, double level) {
  // A copy: `predict` may swap the profile `profile_in` refers to (a scenario's, under_profile).
  const Profile profile = profile_in;
  const auto& u = profile.uncertainty;
  const auto res = u.residual_log_sd.find(quantity);
  if (res == u.residual_log_sd.end() || !(value > 0) || !std::isfinite(value)) return {};
  // Gradient of log(prediction) in each fitted parameter, by central differences a tenth of its
  // standard error wide (the prediction is smooth on that scale).
  const std::size_t k = u.parameters.size();
  std::vector<double> grad(k, 0.0);
  for (std::size_t i = 0; i < k; ++i) {
    const double var = u.covariance[i][i];
    const double* x = profile.parameter(u.parameters[i]);
    if (!x || !(var > 0)) continue;
    const double h = 0.1 * std::sqrt(var);
    Profile up = profile, down = profile;
    *up.parameter(u.parameters[i]) = *x + h;
    *down.parameter(u.parameters[i]) = std::max(0.0, *x - h);
    const double width = *x + h - std::max(0.0, *x - h);
    const double fu = predict(up), fd = predict(down);
    if (fu > 0 && fd > 0 && std::isfinite(fu) && std::isfinite(fd) && width > 0)
      grad[i] = (std::log(fu) - std::log(fd)) / width;
  }
  double var_log = 0;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) var_log += grad[i] * u.covariance[i][j] * grad[j];
  return log_normal_interval(value, std::sqrt(std::max(0.0, var_log) + res->second * res->second), level);
}

}  // namespace ringsim::models
