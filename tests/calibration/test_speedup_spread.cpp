// The spread of a speedup profile's interval (calibration/speedup_spread.hpp), against sums
// written out here: held-out residuals pooled and by mesh, each mesh judged by the other meshes'
// spread only, quadrature, and a fit's parameters copied onto another hardware's profile.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "calibration/speedup_spread.hpp"

using namespace ringsim;
using calibration::SpeedupRow;

namespace {

SpeedupRow row(std::int64_t mp, std::int64_t sp, std::int64_t n_seq, double speedup) {
  SpeedupRow r;
  r.hardware = "a100-80gb";
  r.model = "m";
  r.mp = mp;
  r.sp = sp;
  r.n_seq = n_seq;
  r.speedup = speedup;
  return r;
}

}  // namespace

TEST_CASE("speedup_spread pools both groupings' held-out residuals and keeps leave-one-mesh-out apart", "[calibration]") {
  const std::vector<SpeedupRow> rows{row(1, 2, 8192, 1.0), row(1, 2, 16384, 1.2), row(1, 4, 8192, 1.1),
                                     row(1, 4, 16384, 1.3), row(2, 2, 8192, 0.9)};
  calibration::SpeedupCalibration c;
  c.by_mesh.available = c.by_length.available = true;
  c.by_mesh.held_out_predicted = {1.02, 1.25, 1.0, 1.31, 0.95};
  c.by_length.held_out_predicted = {0.99, 1.18, 1.12, 1.29, std::nan("")};  // one row not held out
  const auto s = calibration::speedup_spread(rows, c);
  double mesh_sq = 0, all_sq = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double e = std::log(c.by_mesh.held_out_predicted[i] / rows[i].speedup);
    mesh_sq += e * e;
    all_sq += e * e;
    if (std::isfinite(c.by_length.held_out_predicted[i])) {
      const double f = std::log(c.by_length.held_out_predicted[i] / rows[i].speedup);
      all_sq += f * f;
    }
  }
  CHECK(s.mesh_points == 5);
  CHECK(s.held_out_points == 9);
  CHECK(s.mesh_log_sd == Approx(std::sqrt(mesh_sq / 5)));
  CHECK(s.held_out_log_sd == Approx(std::sqrt(all_sq / 9)));
  // Each mesh judged by the other meshes' spread: the 1x4 rows (errors -9.5 % and +0.8 %) against
  // the spread of 1x2 and 2x2's, and so on; counted here by brute force.
  const double z = 1.6448536269514722;
  std::int64_t in = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    double sq = 0;
    int m = 0;
    for (std::size_t j = 0; j < rows.size(); ++j)
      if (rows[j].mesh() != rows[i].mesh()) {
        const double e = std::log(c.by_mesh.held_out_predicted[j] / rows[j].speedup);
        sq += e * e;
        ++m;
      }
    in += std::abs(std::log(c.by_mesh.held_out_predicted[i] / rows[i].speedup)) <= z * std::sqrt(sq / m);
  }
  CHECK(s.mesh_covered == in);
  CHECK(s.mesh_coverage == Approx(static_cast<double>(in) / 5));
}

TEST_CASE("speedup_spread on one mesh holds no change of mesh, and combine_spread adds one in quadrature", "[calibration]") {
  const std::vector<SpeedupRow> rows{row(2, 8, 32768, 1.06), row(2, 8, 131072, 1.26), row(2, 8, 262144, 1.37)};
  calibration::SpeedupCalibration c;
  c.by_mesh.available = false;  // one group
  c.by_mesh.held_out_predicted.assign(3, std::nan(""));
  c.by_length.available = true;
  c.by_length.held_out_predicted = {1.05, 1.27, 1.36};
  const auto s = calibration::speedup_spread(rows, c);
  CHECK(std::isnan(s.mesh_log_sd));
  CHECK(std::isnan(s.mesh_coverage));
  CHECK(s.held_out_points == 3);
  CHECK(s.held_out_log_sd > 0);
  CHECK(s.held_out_log_sd < 0.01);
  CHECK(calibration::combine_spread(0.003, 0.004) == Approx(0.005));
  CHECK(calibration::combine_spread(std::nan(""), 0.02) == 0.02);
  CHECK(calibration::combine_spread(0.02, std::nan("")) == 0.02);
  // A wider spread never narrows: the combination is at least each part.
  CHECK(calibration::combine_spread(s.held_out_log_sd, 0.018) >= 0.018);
}

TEST_CASE("predict_with_copied predicts the other hardware's rows with the fit's copied parameters, the rest its own",
          "[calibration]") {
  models::Profile target, fitted;
  target.hardware = "tpu-v4";
  calibration::set_parameter(target, "skipped_tile_cost", 0.5);
  calibration::set_parameter(target, "masked_tile_penalty", 0.3);
  calibration::set_parameter(fitted, "skipped_tile_cost", 0.2);
  calibration::set_parameter(fitted, "masked_tile_penalty", 0.9);
  // A step "time" that reads both parameters and the layout: the ring's grows with the skipped
  // cost, the striped one's with the masked penalty.
  const calibration::StepPredictor step = [](const models::ScenarioSpec& s, const models::Profile& p) {
    const bool striped = s.layout.family_name() == "striped";
    return striped ? 1.0 + calibration::get_parameter(p, "masked_tile_penalty")
                   : 2.0 + calibration::get_parameter(p, "skipped_tile_cost") * static_cast<double>(s.sp);
  };
  const std::vector<SpeedupRow> rows{row(1, 2, 8192, 1.0), row(1, 4, 8192, 1.5)};
  const auto score = calibration::predict_with_copied(rows, target, fitted, {"skipped_tile_cost"}, step);
  REQUIRE(score.rows == 2);
  // skipped copied (0.2), masked the target's own (0.3).
  CHECK(score.predicted[0] == Approx((2.0 + 0.2 * 2) / 1.3));
  CHECK(score.predicted[1] == Approx((2.0 + 0.2 * 4) / 1.3));
  const double e0 = std::log(score.predicted[0] / 1.0), e1 = std::log(score.predicted[1] / 1.5);
  CHECK(score.log_sd == Approx(std::sqrt((e0 * e0 + e1 * e1) / 2)));
  CHECK(score.mae == Approx((std::abs(score.predicted[0] - 1.0) + std::abs(score.predicted[1] - 1.5)) / 2));
  CHECK(score.hardware == "tpu-v4");
}
