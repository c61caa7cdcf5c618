#include "calibration/speedup_spread.hpp"

#include <cmath>
#include <limits>
#include <map>

#include "calibration/holdout_coverage.hpp"

namespace ringsim::calibration {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool usable(double predicted, double measured) { return std::isfinite(predicted) && predicted > 0 && measured > 0; }

}  // namespace

SpeedupSpread speedup_spread(const std::vector<SpeedupRow>& rows, const SpeedupCalibration& c) {
  SpeedupSpread s;
  double all_sq = 0, mesh_sq = 0;
  for (const auto* cv : {&c.by_mesh, &c.by_length}) {
    if (!cv->available) continue;
    for (std::size_t i = 0; i < rows.size() && i < cv->held_out_predicted.size(); ++i) {
      if (!usable(cv->held_out_predicted[i], rows[i].speedup)) continue;
      const double e = std::log(cv->held_out_predicted[i] / rows[i].speedup);
      all_sq += e * e;
      ++s.held_out_points;
      if (cv == &c.by_mesh) {
        mesh_sq += e * e;
        ++s.mesh_points;
      }
    }
  }
  s.held_out_log_sd = s.held_out_points ? std::sqrt(all_sq / static_cast<double>(s.held_out_points)) : kNaN;
  s.mesh_log_sd = s.mesh_points ? std::sqrt(mesh_sq / static_cast<double>(s.mesh_points)) : kNaN;

  // Each held-out mesh judged by an interval whose spread the other meshes' held-out residuals
  // set: what a user running a mesh the fit never saw would be told.
  std::map<std::string, std::vector<double>> by_group;
  if (c.by_mesh.available)
    for (std::size_t i = 0; i < rows.size() && i < c.by_mesh.held_out_predicted.size(); ++i)
      if (usable(c.by_mesh.held_out_predicted[i], rows[i].speedup))
        by_group[rows[i].mesh()].push_back(std::log(c.by_mesh.held_out_predicted[i] / rows[i].speedup));
  const auto cov = other_groups_coverage(by_group);
  s.mesh_coverage = cov.share;
  s.mesh_covered = cov.covered;
  return s;
}

double combine_spread(double own, double mesh) {
  if (!std::isfinite(own)) return mesh;
  if (!std::isfinite(mesh)) return own;
  return std::sqrt(own * own + mesh * mesh);
}

CrossHardwareScore predict_with_copied(const std::vector<SpeedupRow>& rows, const models::Profile& target,
                                       const models::Profile& fitted, const std::vector<std::string>& copied,
                                       const StepPredictor& predictor) {
  CrossHardwareScore out;
  out.hardware = target.hardware;
  models::Profile p = target;
  for (const auto& name : copied) set_parameter(p, name, get_parameter(fitted, name));
  out.predicted = predict_speedups(rows, p, predictor);
  double abs_sum = 0, sq = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!usable(out.predicted[i], rows[i].speedup)) continue;
    abs_sum += std::abs(out.predicted[i] - rows[i].speedup);
    const double e = std::log(out.predicted[i] / rows[i].speedup);
    sq += e * e;
    ++out.rows;
  }
  out.mae = out.rows ? abs_sum / static_cast<double>(out.rows) : kNaN;
  out.log_sd = out.rows ? std::sqrt(sq / static_cast<double>(out.rows)) : kNaN;
  return out;
}

}  // namespace ringsim::calibration
