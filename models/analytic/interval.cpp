#include "models/analytic/interval.hpp"

#include "models/analytic/analytic.hpp"

#include <algorithm>
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

Interval prediction_interval(const Profile& profile, const std::string& quantity, double value,
                             const std::function<double(const Profile&)>& predict, double level) {
  return prediction_intervals(
             profile, quantity, {value}, [&](const Profile& p) { return std::vector<double>{predict(p)}; }, level)
      .front();
}

namespace {

bool usable(double v) { return v > 0 && std::isfinite(v); }

// Gradient of log(prediction) in each parameter `u` fitted, by central differences a tenth of its
// standard error wide (the prediction is smooth on that scale), the parameters taken from
// `profile`: one row per value `predict` returns (`n` of them), 0 where a parameter is not in the
// profile, has no variance, or a perturbed prediction is not positive and finite.
std::vector<std::vector<double>> log_gradients(const Profile& profile, const Profile::Uncertainty& u, std::size_t n,
                                               const std::function<std::vector<double>(const Profile&)>& predict) {
  const std::size_t k = u.parameters.size();
  std::vector<std::vector<double>> grad(n, std::vector<double>(k, 0.0));
  for (std::size_t i = 0; i < k; ++i) {
    const double var = u.covariance[i][i];
    const double* x = profile.parameter(u.parameters[i]);
    if (!x || !(var > 0)) continue;
    const double h = 0.1 * std::sqrt(var);
    Profile up = profile, down = profile;
    *up.parameter(u.parameters[i]) = *x + h;
    *down.parameter(u.parameters[i]) = std::max(0.0, *x - h);
    const double width = *x + h - std::max(0.0, *x - h);
    const auto fu = predict(up), fd = predict(down);
    for (std::size_t v = 0; v < n && v < fu.size() && v < fd.size(); ++v)
      if (usable(fu[v]) && usable(fd[v]) && width > 0) grad[v][i] = (std::log(fu[v]) - std::log(fd[v])) / width;
  }
  return grad;
}

// g' C g: the variance in log space the covariance C carries through a gradient g.
double carried_variance(const std::vector<double>& g, const std::vector<std::vector<double>>& covariance) {
  double var = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    for (std::size_t j = 0; j < g.size(); ++j) var += g[i] * covariance[i][j] * g[j];
  return std::max(0.0, var);
}

}  // namespace

std::vector<Interval> prediction_intervals(const Profile& profile_in, const std::string& quantity,
                                           const std::vector<double>& values,
                                           const std::function<std::vector<double>(const Profile&)>& predict,
                                           double level) {
  // A copy: `predict` may swap the profile `profile_in` refers to (a scenario's, under_profile).
  const Profile profile = profile_in;
  const auto& u = profile.uncertainty;
  const auto res = u.residual_log_sd.find(quantity);
  std::vector<Interval> out(values.size());
  if (res == u.residual_log_sd.end() || std::none_of(values.begin(), values.end(), usable)) return out;
  const auto grad = log_gradients(profile, u, values.size(), predict);
  for (std::size_t v = 0; v < values.size(); ++v) {
    if (!usable(values[v])) continue;
    out[v] = log_normal_interval(values[v], std::sqrt(carried_variance(grad[v], u.covariance) + res->second * res->second),
                                 level);
  }
  return out;
}

TimeIntervals time_intervals_around(ResolvedScenario& s, const Prediction& at, double level) {
  if (s.profile.uncertainty.residual_log_sd.find("time") == s.profile.uncertainty.residual_log_sd.end()) return {};
  const auto v = prediction_intervals(
      s.profile, "time", {at.step_s, at.attention_fwd_s, at.attention_bwd_s},
      [&](const Profile& p) {
        std::vector<double> out;
        (void)under_profile(s, p, [&](const ResolvedScenario& r) {
          const auto q = predict(r);
          out = {q.step_s, q.attention_fwd_s, q.attention_bwd_s};
          return q.step_s;
        });
        return out;
      },
      level);
  return {v[0], v[1], v[2]};
}

std::optional<double> paired_step_log_sd(ResolvedScenario& a, const Prediction& at_a, ResolvedScenario& b,
                                         const Prediction& at_b) {
  // A copy: the perturbed predictions below swap the scenarios' profiles (under_profile), which
  // would leave references into them dangling (b's is only compared before that).
  const auto u = a.profile.uncertainty;
  const auto ratio = u.residual_log_sd.find("ratio");
  const auto& v = b.profile.uncertainty;
  // One fit: the same GPU and kernel (the one the library calls there), and the same uncertainty (a library's profile copies the fit's
  // it was made from: TransformerEngine's four libraries share their cuDNN fit's).
  const auto kernel = [](const ResolvedScenario& s) { return s.impl.kernel_model ? s.impl.kernel_model->name : std::string(); };
  if (ratio == u.residual_log_sd.end() || a.profile.hardware != b.profile.hardware ||
      a.profile.kernel_family != b.profile.kernel_family || kernel(a) != kernel(b) || u.parameters != v.parameters ||
      u.covariance != v.covariance || u.residual_log_sd != v.residual_log_sd)
    return std::nullopt;
  if (!usable(at_a.step_s) || !usable(at_b.step_s)) return std::nullopt;
  // Each scenario keeps its own profile (a recomputation or precision applied to one of them), and
  // both move by the same step in each fitted parameter: the gradient of log(step_a) - log(step_b).
  const auto step_of = [](ResolvedScenario& s) {
    return [&s](const Profile& p) {
      return std::vector<double>{under_profile(s, p, [](const ResolvedScenario& r) { return predict(r).step_s; })};
    };
  };
  const Profile pa = a.profile, pb = b.profile;
  auto grad = log_gradients(pa, u, 1, step_of(a)).front();
  const auto grad_b = log_gradients(pb, u, 1, step_of(b)).front();
  for (std::size_t i = 0; i < grad.size(); ++i) grad[i] -= grad_b[i];
  return std::sqrt(carried_variance(grad, u.covariance) + ratio->second * ratio->second);
}

}  // namespace ringsim::models
