#include "calibration/fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ringsim::calibration {

namespace {

double scale_of(const Parameter& p, double x) {
  // A step relative to the box width when there is one keeps steps sane for parameters near 0.
  if (std::isfinite(p.lower) && std::isfinite(p.upper)) return std::max(p.upper - p.lower, 1e-300);
  return std::max(std::abs(x), 1e-8);
}

Eigen::VectorXd project(Eigen::VectorXd x, const std::vector<Parameter>& params) {
  for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = std::clamp(x[i], params[i].lower, params[i].upper);
  return x;
}

// Halton radical inverse: deterministic, well-spread starting points.
double halton(int index, int base) {
  double f = 1, r = 0;
  for (int i = index; i > 0; i /= base) {
    f /= base;
    r += f * (i % base);
  }
  return r;
}

struct Run {
  Eigen::VectorXd x;
  double rss = 0;
  int iterations = 0;
  bool converged = false;
};

Run levenberg_marquardt(const ModelFn& model, const Eigen::VectorXd& y, const std::vector<Parameter>& params,
                        Eigen::VectorXd x, const FitOptions& o) {
  const auto n = x.size();
  auto rss_at = [&](const Eigen::VectorXd& p, Eigen::VectorXd* r) {
    Eigen::VectorXd res = model(p) - y;
    const double s = res.squaredNorm();
    if (r) *r = std::move(res);
    return std::isfinite(s) ? s : std::numeric_limits<double>::infinity();
  };
  Eigen::VectorXd r;
  double rss = rss_at(x, &r);
  double lambda = 1e-3;
  Run run{x, rss, 0, false};
  for (int it = 0; it < o.max_iterations; ++it) {
    run.iterations = it + 1;
    const Eigen::MatrixXd J = numerical_jacobian(model, x, params, o.relative_step);
    const Eigen::VectorXd g = J.transpose() * r;
    // Active set: on a bound with the descent direction (-g) pointing out of the box.
    std::vector<Eigen::Index> free;
    for (Eigen::Index i = 0; i < n; ++i) {
      const bool out_low = x[i] <= params[i].lower && g[i] > 0;
      const bool out_high = x[i] >= params[i].upper && g[i] < 0;
      if (!out_low && !out_high) free.push_back(i);
    }
    if (free.empty()) {
      run.converged = true;
      break;
    }
    const auto m = static_cast<Eigen::Index>(free.size());
    Eigen::MatrixXd Jf(J.rows(), m);
    for (Eigen::Index k = 0; k < m; ++k) Jf.col(k) = J.col(free[static_cast<std::size_t>(k)]);
    const Eigen::MatrixXd A = Jf.transpose() * Jf;
    const Eigen::VectorXd gf = Jf.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 30 && !improved; ++tries) {
      Eigen::MatrixXd Ad = A;
      for (Eigen::Index k = 0; k < m; ++k) Ad(k, k) += lambda * std::max(A(k, k), 1e-12);
      const Eigen::VectorXd step = Ad.ldlt().solve(-gf);
      Eigen::VectorXd trial = x;
      for (Eigen::Index k = 0; k < m; ++k) trial[free[static_cast<std::size_t>(k)]] += step[k];
      trial = project(trial, params);
      Eigen::VectorXd rt;
      const double s = rss_at(trial, &rt);
      if (s < rss) {
        const double rel = (rss - s) / std::max(rss, 1e-300);
        x = trial;
        r = std::move(rt);
        rss = s;
        lambda = std::max(lambda / 10, 1e-12);
        improved = true;
        if (rel < o.tolerance) run.converged = true;
      } else {
        lambda *= 10;
      }
    }
    if (!improved) run.converged = true;  // no downhill step at any damping: a (bounded) minimum
    if (run.converged) break;
  }
  run.x = x;
  run.rss = rss;
  return run;
}

}  // namespace

Eigen::MatrixXd numerical_jacobian(const ModelFn& model, const Eigen::VectorXd& x, const std::vector<Parameter>& params,
                                   double relative_step) {
  const Eigen::VectorXd f0 = model(x);
  Eigen::MatrixXd J(f0.size(), x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double h = relative_step * scale_of(params[static_cast<std::size_t>(i)], x[i]);
    const double lo = std::max(x[i] - h, params[static_cast<std::size_t>(i)].lower);
    const double hi = std::min(x[i] + h, params[static_cast<std::size_t>(i)].upper);
    Eigen::VectorXd a = x, b = x;
    a[i] = lo;
    b[i] = hi;
    const Eigen::VectorXd fa = lo == x[i] ? f0 : model(a);
    const Eigen::VectorXd fb = hi == x[i] ? f0 : model(b);
    J.col(i) = hi > lo ? Eigen::VectorXd((fb - fa) / (hi - lo)) : Eigen::VectorXd::Zero(f0.size());
  }
  return J;
}

FitResult fit_least_squares(const ModelFn& model, const Eigen::VectorXd& observed, const std::vector<Parameter>& params,
                            const FitOptions& options) {
  const auto n = static_cast<Eigen::Index>(params.size());
  if (n == 0) throw std::invalid_argument("no parameters to fit");
  if (observed.size() < n)
    throw std::invalid_argument("fewer observations (" + std::to_string(observed.size()) + ") than parameters (" +
                                std::to_string(n) + ")");
  if (!observed.allFinite()) throw std::invalid_argument("non-finite observation");
  Eigen::VectorXd x0(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& p = params[static_cast<std::size_t>(i)];
    if (!(p.lower <= p.upper)) throw std::invalid_argument("parameter " + p.name + ": lower bound above upper");
    if (!std::isfinite(p.start)) throw std::invalid_argument("parameter " + p.name + ": non-finite start");
    x0[i] = std::clamp(p.start, p.lower, p.upper);
  }
  static constexpr int kBases[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  Run best;
  best.rss = std::numeric_limits<double>::infinity();
  int best_start = 0;
  for (int s = 0; s <= options.extra_starts; ++s) {
    Eigen::VectorXd x = x0;
    if (s > 0) {
      for (Eigen::Index i = 0; i < n; ++i) {
        const auto& p = params[static_cast<std::size_t>(i)];
        const double u = halton(s, kBases[static_cast<std::size_t>(i) % std::size(kBases)]);
        if (std::isfinite(p.lower) && std::isfinite(p.upper))
          x[i] = p.lower + u * (p.upper - p.lower);
        else  // unbounded: spread over a decade around the start
          x[i] = std::clamp(x0[i] * std::pow(10.0, 2 * u - 1) + (x0[i] == 0 ? 2 * u - 1 : 0), p.lower, p.upper);
      }
    }
    Run run = levenberg_marquardt(model, observed, params, x, options);
    if (options.after_start) options.after_start();
    if (run.rss < best.rss) {
      best = std::move(run);
      best_start = s;
    }
  }
  // No start gave a finite sum of squares (a model that is infinite or NaN wherever it is tried,
  // such as a row measured at 1e-316 s): nothing was fitted, and best holds no parameters to
  // evaluate (reading them crashed).
  if (!std::isfinite(best.rss))
    throw std::invalid_argument("the model's predictions are not finite at any of the " +
                                std::to_string(options.extra_starts + 1) + " starting points");
  FitResult r;
  r.params = best.x;
  r.predicted = model(best.x);
  r.residuals = r.predicted - observed;
  r.rss = r.residuals.squaredNorm();
  r.mae = r.residuals.cwiseAbs().mean();
  const double tss = (observed.array() - observed.mean()).square().sum();
  r.r_squared = tss > 0 ? 1 - r.rss / tss : (r.rss == 0 ? 1.0 : 0.0);
  r.iterations = best.iterations;
  r.best_start = best_start;
  r.converged = best.converged;
  r.at_bound.assign(static_cast<std::size_t>(n), false);
  r.std_errors = Eigen::VectorXd::Constant(n, std::numeric_limits<double>::quiet_NaN());
  r.covariance = Eigen::MatrixXd::Zero(n, n);
  std::vector<Eigen::Index> interior;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& p = params[static_cast<std::size_t>(i)];
    const double tol = 1e-9 * scale_of(p, r.params[i]);
    r.at_bound[static_cast<std::size_t>(i)] = r.params[i] <= p.lower + tol || r.params[i] >= p.upper - tol;
    if (!r.at_bound[static_cast<std::size_t>(i)]) interior.push_back(i);
  }
  const Eigen::MatrixXd J = interior.empty() ? Eigen::MatrixXd() : numerical_jacobian(model, r.params, params, options.relative_step);
  // A parameter the predictions do not move at the fit (a limit that does not bind) is not
  // identified by these rows: no standard error, and it stays out of the covariance.
  if (!interior.empty()) {
    // Effect over the parameter's own scale, so that units (bytes/s next to fractions) do not matter.
    auto effect = [&](Eigen::Index i) {
      return J.col(i).norm() * scale_of(params[static_cast<std::size_t>(i)], r.params[i]);
    };
    double largest = 0;
    for (const auto i : interior) largest = std::max(largest, effect(i));
    std::erase_if(interior, [&](Eigen::Index i) { return !(effect(i) > 1e-9 * largest); });
  }
  const auto dof = observed.size() - static_cast<Eigen::Index>(interior.size());
  if (!interior.empty() && dof > 0) {
    Eigen::MatrixXd Ji(J.rows(), static_cast<Eigen::Index>(interior.size()));
    for (std::size_t k = 0; k < interior.size(); ++k) Ji.col(static_cast<Eigen::Index>(k)) = J.col(interior[k]);
    // Columns scaled to unit norm first: parameters in bytes/s next to efficiencies would
    // otherwise make J^T J look singular to the rank test.
    Eigen::VectorXd norms(Ji.cols());
    for (Eigen::Index k = 0; k < Ji.cols(); ++k) norms[k] = Ji.col(k).norm();
    const Eigen::MatrixXd Js = Ji * norms.cwiseInverse().asDiagonal();
    const Eigen::MatrixXd A = Js.transpose() * Js;
    Eigen::FullPivLU<Eigen::MatrixXd> lu(A);
    if (lu.isInvertible()) {
      const Eigen::MatrixXd cov = norms.cwiseInverse().asDiagonal() * lu.inverse() * norms.cwiseInverse().asDiagonal() *
                                  (r.rss / static_cast<double>(dof));
      for (std::size_t a = 0; a < interior.size(); ++a)
        for (std::size_t b = 0; b < interior.size(); ++b)
          r.covariance(interior[a], interior[b]) = cov(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b));
      for (std::size_t k = 0; k < interior.size(); ++k) {
        const double v = cov(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k));
        if (v >= 0 && std::isfinite(v)) r.std_errors[interior[k]] = std::sqrt(v);
      }
    }
  }
  return r;
}

}  // namespace ringsim::calibration
