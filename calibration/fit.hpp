#pragma once
// Bounded nonlinear least squares: Levenberg-Marquardt on Eigen with a numerical Jacobian
// (central differences), box bounds by an active set (a parameter pinned at a bound whose
// gradient points outward is frozen for that step; the step is then projected into the box),
// and several deterministic starting points. Reports residuals, R^2 and standard errors from
// the covariance s^2 (J^T J)^-1 for parameters that are not on a bound.
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Dense>

namespace ringsim::calibration {

struct Parameter {
  std::string name;
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();
  double start = 0;
};

// Model: parameters -> predictions, one per observation.
using ModelFn = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;

struct FitOptions {
  int max_iterations = 200;
  double tolerance = 1e-12;      // relative change of the sum of squares that counts as converged
  double relative_step = 1e-5;   // central-difference step, relative to the parameter's scale
  int extra_starts = 6;          // deterministic Halton points in the box besides `start`
  std::function<void()> after_start;  // called after each start's run (progress of a long fit); may be empty
};

struct FitResult {
  Eigen::VectorXd params;
  Eigen::VectorXd predicted;
  Eigen::VectorXd residuals;     // predicted - observed
  Eigen::VectorXd std_errors;    // NaN where not defined (on a bound, singular, no dof)
  Eigen::MatrixXd covariance;    // s^2 (J^T J)^-1 over the interior parameters; 0 in rows/columns of the others
  std::vector<bool> at_bound;
  double rss = 0;
  double r_squared = 0;          // 1 - rss / total sum of squares around the mean
  double mae = 0;                // mean absolute residual
  int iterations = 0;            // of the best start
  int best_start = 0;
  bool converged = false;
};

// Throws std::invalid_argument for inconsistent inputs (bounds crossed, fewer observations
// than parameters, a non-finite start or observation) and for a model whose predictions are not
// finite at any starting point.
[[nodiscard]] FitResult fit_least_squares(const ModelFn& model, const Eigen::VectorXd& observed,
                                          const std::vector<Parameter>& params, const FitOptions& options = {});

// Central-difference Jacobian of `model` at x, kept inside the bounds (one-sided at a bound).
[[nodiscard]] Eigen::MatrixXd numerical_jacobian(const ModelFn& model, const Eigen::VectorXd& x,
                                                 const std::vector<Parameter>& params, double relative_step);

}  // namespace ringsim::calibration
