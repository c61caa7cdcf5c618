#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <random>

#include "calibration/fit.hpp"

using namespace ringsim::calibration;

TEST_CASE("LM recovers an exponential decay exactly from noiseless data", "[fit]") {
  Eigen::VectorXd t = Eigen::VectorXd::LinSpaced(20, 0, 4);
  auto model = [&](const Eigen::VectorXd& p) { return Eigen::VectorXd((p[0] * (-p[1] * t.array()).exp()).matrix()); };
  Eigen::Vector2d truth(3.0, 0.7);
  const Eigen::VectorXd y = model(truth);
  const auto r = fit_least_squares(model, y, {{"a", 0, 10, 1}, {"k", 0, 5, 2}});
  CHECK(r.params[0] == Approx(3.0).epsilon(1e-6));
  CHECK(r.params[1] == Approx(0.7).epsilon(1e-6));
  CHECK(r.r_squared == Approx(1.0).margin(1e-10));
  CHECK(r.mae < 1e-8);
}

TEST_CASE("LM with noise: standard errors match ordinary least squares on a line", "[fit]") {
  std::mt19937_64 gen(12345);  // explicit seed: deterministic noise
  std::normal_distribution<double> noise(0, 0.1);
  const Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(30, 0, 10);
  Eigen::VectorXd y(30);
  for (int i = 0; i < 30; ++i) y[i] = 2.0 + 0.5 * x[i] + noise(gen);
  auto model = [&](const Eigen::VectorXd& p) { return Eigen::VectorXd(p[0] + p[1] * x.array()); };
  const auto r = fit_least_squares(model, y, {{"b", -10, 10, 0}, {"m", -10, 10, 0}});
  // Closed form OLS.
  Eigen::MatrixXd X(30, 2);
  X.col(0).setOnes();
  X.col(1) = x;
  const Eigen::VectorXd beta = (X.transpose() * X).ldlt().solve(X.transpose() * y);
  const double s2 = (X * beta - y).squaredNorm() / 28;
  const Eigen::MatrixXd cov = (X.transpose() * X).inverse() * s2;
  CHECK(r.params[0] == Approx(beta[0]).epsilon(1e-6));
  CHECK(r.params[1] == Approx(beta[1]).epsilon(1e-6));
  CHECK(r.std_errors[0] == Approx(std::sqrt(cov(0, 0))).epsilon(1e-3));
  CHECK(r.std_errors[1] == Approx(std::sqrt(cov(1, 1))).epsilon(1e-3));
}

TEST_CASE("LM with an active bound: the constrained optimum of a line", "[fit]") {
  // y = 1 + 2x exactly, but the slope is bounded by 1.5: the optimum pins the slope at 1.5
  // and the intercept at the closed-form value mean(y) - 1.5 mean(x).
  const Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(11, 0, 10);
  const Eigen::VectorXd y = (1.0 + 2.0 * x.array()).matrix();
  auto model = [&](const Eigen::VectorXd& p) { return Eigen::VectorXd(p[0] + p[1] * x.array()); };
  const auto r = fit_least_squares(model, y, {{"b", -100, 100, 0}, {"m", 0, 1.5, 0.1}});
  CHECK(r.params[1] == Approx(1.5));
  CHECK(r.at_bound[1]);
  CHECK_FALSE(r.at_bound[0]);
  CHECK(r.params[0] == Approx(y.mean() - 1.5 * x.mean()).epsilon(1e-6));
  CHECK(std::isnan(r.std_errors[1]));
  CHECK(std::isfinite(r.std_errors[0]));
}

TEST_CASE("LM rejects inconsistent problems", "[fit]") {
  auto model = [](const Eigen::VectorXd& p) { return Eigen::VectorXd::Constant(1, p[0] + p[1]); };
  CHECK_THROWS(fit_least_squares(model, Eigen::VectorXd::Ones(1), {{"a", 0, 1, 0}, {"b", 0, 1, 0}}));
  CHECK_THROWS(fit_least_squares(model, Eigen::VectorXd::Ones(2), {{"a", 1, 0, 0}, {"b", 0, 1, 0}}));
}

TEST_CASE("LM refuses a model that is not finite at any start, instead of evaluating no parameters", "[fit]") {
  // As a kernel row timed at 1e-316 s made every ratio infinite: no start had a finite sum of
  // squares, the best run was never set, and the final evaluation read parameters it did not
  // have (a crash, signal 11).
  const auto infinite = [](const Eigen::VectorXd& p) {
    Eigen::VectorXd out = Eigen::VectorXd::Constant(3, std::numeric_limits<double>::infinity());
    out[0] = p[0];
    return out;
  };
  CHECK_THROWS_AS(fit_least_squares(infinite, Eigen::VectorXd::Ones(3), {{"a", 0, 1, 0.5}}), std::invalid_argument);
  const auto nan = [](const Eigen::VectorXd& p) { return Eigen::VectorXd::Constant(3, std::nan("") * p[0]); };
  CHECK_THROWS_AS(fit_least_squares(nan, Eigen::VectorXd::Ones(3), {{"a", 0, 1, 0.5}}), std::invalid_argument);
  // One finite start is enough: the fit goes on from it.
  const auto somewhere = [](const Eigen::VectorXd& p) {
    return Eigen::VectorXd::Constant(3, p[0] > 0.9 ? std::numeric_limits<double>::infinity() : p[0]);
  };
  CHECK(fit_least_squares(somewhere, Eigen::VectorXd::Constant(3, 0.5), {{"a", 0, 1, 0.95}}).params[0] == Approx(0.5));
}
