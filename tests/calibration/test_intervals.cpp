// Prediction intervals on synthetic data: fit a profile's parameters to noisy times, estimate the
// held-out spread by leave-one-group-out, then check that 90 % intervals cover at least 85 % of
// fresh points the fit never saw.
#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "calibration/fit.hpp"
#include "models/cost/cost.hpp"
#include "models/analytic/analytic.hpp"
#include "models/analytic/interval.hpp"
#include "models/catalog/resolve.hpp"

using namespace ringsim;

namespace {

struct Point {
  double flops = 0, ops = 0, seconds = 0;
};

// A time model in two of the profile's physical parameters.
double model_time(const models::Profile& p, const Point& x) {
  return x.flops / (1e12 * p.attention_efficiency) + x.ops * p.host_call_s;
}

std::vector<Point> draw(std::mt19937_64& rng, const models::Profile& truth, std::size_t n, double noise) {
  std::uniform_real_distribution<double> flops(1e9, 1e11), ops(1, 2000);
  std::normal_distribution<double> eps(0, noise);
  std::vector<Point> v;
  for (std::size_t i = 0; i < n; ++i) {
    Point x{flops(rng), ops(rng), 0};
    x.seconds = model_time(truth, x) * std::exp(eps(rng));
    v.push_back(x);
  }
  return v;
}

calibration::FitResult fit(const std::vector<Point>& pts, const models::Profile& start) {
  Eigen::VectorXd y(static_cast<Eigen::Index>(pts.size()));
  for (std::size_t i = 0; i < pts.size(); ++i) y[static_cast<Eigen::Index>(i)] = std::log(pts[i].seconds);
  const calibration::ModelFn f = [&](const Eigen::VectorXd& x) {
    models::Profile p = start;
    p.attention_efficiency = x[0];
    p.host_call_s = x[1];
    Eigen::VectorXd v(static_cast<Eigen::Index>(pts.size()));
    for (std::size_t i = 0; i < pts.size(); ++i) v[static_cast<Eigen::Index>(i)] = std::log(model_time(p, pts[i]));
    return v;
  };
  return calibration::fit_least_squares(
      f, y, {{"attention_efficiency", 0.02, 1, 0.3}, {"host_call_s", 0, 1e-3, 1e-6}});
}

}  // namespace

TEST_CASE("90 % prediction intervals cover at least 85 % of held-out synthetic points", "[interval][calibration]") {
  std::mt19937_64 rng(2026);
  models::Profile truth;
  truth.attention_efficiency = 0.6;
  truth.host_call_s = 2e-5;
  const double noise = 0.12;
  const auto train = draw(rng, truth, 40, noise);
  const models::Profile start;
  const auto f = fit(train, start);
  REQUIRE(f.converged);
  // Leave-one-group-out over 8 groups of 5: the held-out spread of log time.
  double sq = 0;
  int held = 0;
  for (int g = 0; g < 8; ++g) {
    std::vector<Point> in, out;
    for (std::size_t i = 0; i < train.size(); ++i) (static_cast<int>(i) % 8 == g ? out : in).push_back(train[i]);
    const auto fg = fit(in, start);
    models::Profile p = start;
    p.attention_efficiency = fg.params[0];
    p.host_call_s = fg.params[1];
    for (const auto& x : out) {
      const double e = std::log(model_time(p, x) / x.seconds);
      sq += e * e;
      ++held;
    }
  }
  models::Profile fitted = start;
  fitted.attention_efficiency = f.params[0];
  fitted.host_call_s = f.params[1];
  auto& u = fitted.uncertainty;
  u.parameters = {"attention_efficiency", "host_call_s"};
  u.covariance = {{f.covariance(0, 0), f.covariance(0, 1)}, {f.covariance(1, 0), f.covariance(1, 1)}};
  u.residual_log_sd["time"] = std::sqrt(sq / held);
  u.held_out_points = held;
  // Fresh points from the same process: the interval must cover them about 90 % of the time.
  const auto test = draw(rng, truth, 400, noise);
  int covered = 0;
  for (const auto& x : test) {
    const auto fx = [&](const models::Profile& p) { return model_time(p, x); };
    const auto i = models::prediction_interval(fitted, "time", fx(fitted), fx, 0.9);
    REQUIRE(i.available);
    REQUIRE(i.lo < i.hi);
    covered += x.seconds >= i.lo && x.seconds <= i.hi;
  }
  const double coverage = static_cast<double>(covered) / static_cast<double>(test.size());
  INFO("coverage " << coverage << ", held-out log sd " << u.residual_log_sd["time"]);
  CHECK(coverage >= 0.85);
  // ... and is not absurdly wide: intervals of a correct model stay near the nominal level.
  CHECK(coverage <= 0.97);
  // Without the held-out spread the parameters' covariance alone under-covers noisy data: the
  // test can fail.
  auto narrow = fitted;
  narrow.uncertainty.residual_log_sd["time"] = 0;
  int narrow_covered = 0;
  for (const auto& x : test) {
    const auto fx = [&](const models::Profile& p) { return model_time(p, x); };
    const auto i = models::prediction_interval(narrow, "time", fx(narrow), fx, 0.9);
    narrow_covered += x.seconds >= i.lo && x.seconds <= i.hi;
  }
  CHECK(narrow_covered < covered / 2);
}

TEST_CASE("intervals of several values from one perturbation each equal the one-value intervals", "[interval]") {
  models::Profile p;
  p.attention_efficiency = 0.5;
  p.host_call_s = 1e-5;
  p.uncertainty.parameters = {"attention_efficiency", "host_call_s"};
  p.uncertainty.covariance = {{4e-4, 1e-9}, {1e-9, 1e-12}};
  p.uncertainty.residual_log_sd["time"] = 0.1;
  const std::vector<Point> pts = {{1e10, 10, 0}, {5e9, 1500, 0}, {1e11, 1, 0}};
  std::vector<double> values;
  for (const auto& x : pts) values.push_back(model_time(p, x));
  int calls = 0;
  const auto many = models::prediction_intervals(p, "time", values, [&](const models::Profile& q) {
    ++calls;
    std::vector<double> v;
    for (const auto& x : pts) v.push_back(model_time(q, x));
    return v;
  });
  CHECK(calls == 4);  // two per fitted parameter, for all three values together
  REQUIRE(many.size() == pts.size());
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const auto one = models::prediction_interval(p, "time", values[i], [&](const models::Profile& q) { return model_time(q, pts[i]); });
    REQUIRE(many[i].available);
    CHECK(many[i].lo == Approx(one.lo).epsilon(1e-12));
    CHECK(many[i].hi == Approx(one.hi).epsilon(1e-12));
    CHECK(many[i].lo < values[i]);
    CHECK(values[i] < many[i].hi);
  }
  // The host-bound point carries host_call_s's variance, the FLOP-bound one attention_efficiency's:
  // different widths from one set of perturbations.
  CHECK(many[1].hi / many[1].lo != Approx(many[2].hi / many[2].lo));
  // A quantity the profile has no spread for, or a non-positive value: no interval.
  CHECK_FALSE(models::prediction_intervals(p, "ratio", values, [&](const models::Profile&) { return values; })[0].available);
  CHECK_FALSE(models::prediction_intervals(p, "time", {0.0, values[1]}, [&](const models::Profile&) {
                return std::vector<double>{0.0, values[1]};
              })[0].available);
}

TEST_CASE("a scenario's step and attention times get their intervals from the same perturbations", "[interval]") {
  const models::Catalog catalog;
  models::ScenarioSpec spec;
  spec.hardware = "h800";
  spec.model = "llama3-8b";
  spec.sp = 8;
  spec.n_seq = 65536;
  spec.impl = "ring-flash-attn";
  spec.layout = models::LayoutSpec::parse("zigzag");
  auto s = models::resolve(spec, catalog);
  REQUIRE_FALSE(s.profile.uncertainty.empty());  // fitted to the ring tables
  const auto at = models::predict(s);
  const auto iv = models::time_intervals_around(s, at);
  // The step's interval is the one-value interval of the step alone.
  const auto step = models::prediction_interval(s.profile, "time", at.step_s, [&](const models::Profile& p) {
    return models::under_profile(s, p, [](const models::ResolvedScenario& r) { return models::predict(r).step_s; });
  });
  REQUIRE(iv.step.available);
  CHECK(iv.step.lo == Approx(step.lo).epsilon(1e-12));
  CHECK(iv.step.hi == Approx(step.hi).epsilon(1e-12));
  for (const auto& [value, i] : {std::pair{at.attention_fwd_s, iv.attention_fwd}, std::pair{at.attention_bwd_s, iv.attention_bwd}}) {
    REQUIRE(i.available);
    CHECK(i.lo < value);
    CHECK(value < i.hi);
  }
  // The scenario is left as it was (the perturbed profiles are swapped back).
  CHECK(models::predict(s).step_s == at.step_s);
  // A profile derived by copying fitted parameters carries the spread measured for that copying;
  // one left at spec defaults (MI300X: nothing copied) carries none: no intervals, at no cost.
  spec.hardware = "h200-sxm";  // derived from the H100 SXM's kernel fit
  auto d = models::resolve(spec, catalog);
  REQUIRE_FALSE(d.profile.provenance.calibrated);
  const auto derived = models::time_intervals_around(d, models::predict(d));
  CHECK(derived.step.available);
  spec.hardware = "mi300x";
  auto m = models::resolve(spec, catalog);
  const auto none = models::time_intervals_around(m, models::predict(m));
  CHECK_FALSE(none.step.available);
  CHECK_FALSE(none.attention_fwd.available);
  CHECK_FALSE(none.attention_bwd.available);
}
