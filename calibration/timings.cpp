#include "calibration/timings.hpp"

#include <cmath>
#include <limits>

#include "models/io/error.hpp"

namespace ringsim::calibration {

double predict_timing(const KernelTiming& t, const models::Hardware& hw, double attention_efficiency,
                      double tile_overhead_s, double masked_tile_penalty, double launch_overhead_s,
                      double attention_bwd_factor) {
  const double b = static_cast<double>(t.batch);
  double flops = 4.0 * static_cast<double>(t.visited_area) * static_cast<double>(t.head_dim) *
                 static_cast<double>(t.heads) * b;
  if (t.kernel == "attention_bwd") flops *= attention_bwd_factor;
  const double masked = t.visited_area > 0 ? static_cast<double>(t.masked_area) / static_cast<double>(t.visited_area) : 0;
  return launch_overhead_s + static_cast<double>(t.tiles_visited) * b * tile_overhead_s +
         flops * (1 + masked_tile_penalty * masked) / (hw.peak_flops_per_s(t.precision) * attention_efficiency);
}

namespace {

// Parameter order: attention_efficiency, tile_overhead_s, masked_tile_penalty, launch_overhead_s.
const std::vector<Parameter> kAll = {
    {"attention_efficiency", 0.005, 1, 0.5},
    {"tile_overhead_s", 0, 1e-3, 1e-6},
    {"masked_tile_penalty", 0, 2, 0.1},
    {"launch_overhead_s", 0, 1e-2, 1e-5},
};

struct Sub {
  std::vector<bool> use;  // which of kAll are fitted (others are 0)
};

FitResult fit_subset(const std::vector<KernelTiming>& rows, const models::Hardware& hw, double bwd_factor,
                     const std::vector<bool>& use) {
  std::vector<Parameter> params;
  for (std::size_t k = 0; k < kAll.size(); ++k)
    if (use[k]) params.push_back(kAll[k]);
  const ModelFn model = [&](const Eigen::VectorXd& x) {
    double v[4] = {0, 0, 0, 0};
    Eigen::Index j = 0;
    for (std::size_t k = 0; k < kAll.size(); ++k)
      if (use[k]) v[k] = x[j++];
    Eigen::VectorXd out(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i)
      out[static_cast<Eigen::Index>(i)] =
          predict_timing(rows[i], hw, v[0], v[1], v[2], v[3], bwd_factor) / rows[i].duration_s;
    return out;
  };
  FitOptions o;
  o.relative_step = 1e-6;
  return fit_least_squares(model, Eigen::VectorXd::Ones(static_cast<Eigen::Index>(rows.size())), params, o);
}

double value_of(const FitResult& f, const std::vector<bool>& use, std::size_t k) {
  if (!use[k]) return 0;
  Eigen::Index j = 0;
  for (std::size_t m = 0; m < k; ++m) j += use[m] ? 1 : 0;
  return f.params[j];
}

// Deterministic k-fold: row i is in fold i % k.
double kfold_mae(const std::vector<KernelTiming>& rows, const models::Hardware& hw, double bwd_factor,
                 const std::vector<bool>& use, int folds) {
  double sum = 0;
  std::size_t n = 0;
  for (int f = 0; f < folds; ++f) {
    std::vector<KernelTiming> train, test;
    for (std::size_t i = 0; i < rows.size(); ++i) (static_cast<int>(i % static_cast<std::size_t>(folds)) == f ? test : train).push_back(rows[i]);
    if (test.empty()) continue;
    const FitResult fit = fit_subset(train, hw, bwd_factor, use);
    for (const auto& t : test) {
      const double p = predict_timing(t, hw, value_of(fit, use, 0), value_of(fit, use, 1), value_of(fit, use, 2),
                                      value_of(fit, use, 3), bwd_factor);
      sum += std::abs(p / t.duration_s - 1);
      ++n;
    }
  }
  return n ? sum / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

TimingCalibration calibrate_timings(const std::vector<KernelTiming>& rows, const models::Hardware& hw,
                                    const models::Profile& base, int folds) {
  const std::vector<bool> all(kAll.size(), true);
  if (rows.size() < kAll.size() * 2)
    throw models::InputError({}, 0, "rows",
                             "only " + std::to_string(rows.size()) + " timing rows; need at least " +
                                 std::to_string(kAll.size() * 2) + " for " + std::to_string(kAll.size()) +
                                 " parameters and held-out errors");
  for (const auto& r : rows)
    if (r.kernel != "attention_fwd" && r.kernel != "attention_bwd")
      throw models::InputError({}, r.line, "kernel", "expected attention_fwd or attention_bwd, got '" + r.kernel + "'");
  const double bwd = base.attention_bwd_factor;
  TimingCalibration c;
  c.fit = fit_subset(rows, hw, bwd, all);
  c.profile = base;
  c.profile.attention_efficiency = c.fit.params[0];
  c.profile.tile_overhead_s = c.fit.params[1];
  c.profile.masked_tile_penalty = c.fit.params[2];
  c.launch_overhead_s = c.fit.params[3];
  double mean = 0;
  for (const auto& r : rows) mean += r.duration_s;
  mean /= static_cast<double>(rows.size());
  double rss = 0, tss = 0;
  for (const auto& r : rows) {
    const double p = predict_timing(r, hw, c.fit.params[0], c.fit.params[1], c.fit.params[2], c.fit.params[3], bwd);
    rss += (p - r.duration_s) * (p - r.duration_s);
    tss += (r.duration_s - mean) * (r.duration_s - mean);
  }
  c.r_squared = tss > 0 ? 1 - rss / tss : 1.0;
  c.folds = std::max(2, std::min<int>(folds, static_cast<int>(rows.size())));
  c.held_out_mae = kfold_mae(rows, hw, bwd, all, c.folds);
  for (std::size_t k = 0; k < kAll.size(); ++k) {
    TermReport t;
    t.term = kAll[k].name;
    t.value = c.fit.params[static_cast<Eigen::Index>(k)];
    t.std_error = c.fit.std_errors[static_cast<Eigen::Index>(k)];
    if (k == 0) {
      t.held_out_without = std::numeric_limits<double>::quiet_NaN();  // the FLOP term cannot go
    } else {
      auto use = all;
      use[k] = false;
      t.held_out_without = kfold_mae(rows, hw, bwd, use, c.folds);
    }
    c.terms.push_back(t);
  }
  return c;
}

}  // namespace ringsim::calibration
