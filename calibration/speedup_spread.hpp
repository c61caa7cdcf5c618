#pragma once
// The spread a speedup profile's 90 % interval uses, measured on predictions its fit never saw,
// grouped by what a user changes: the mesh (leave one mesh out), the sequence length (leave one
// n_seq out) and the hardware (this fit's parameters on another fitted hardware's rows, which is
// what a profile derived with --derive-from copies). A fit on a single mesh cannot hold a mesh
// out, so its own spread says nothing of a change of mesh: the one measured where several meshes
// exist is added to it (`combine_spread`).
#include <cstdint>
#include <string>
#include <vector>

#include "calibration/tables.hpp"
#include "models/cost/cost.hpp"

namespace ringsim::calibration {

struct SpeedupSpread {
  // Root mean square of log(held-out / published) over both groupings (NaN: no held-out point).
  double held_out_log_sd = 0;
  std::int64_t held_out_points = 0;
  // Leave-one-mesh-out alone (NaN with one mesh).
  double mesh_log_sd = 0;
  std::int64_t mesh_points = 0;
  // 90 % intervals around each held-out mesh's predictions whose spread comes from the other
  // meshes' held-out residuals only; NaN with fewer than two meshes held out.
  double mesh_coverage = 0;
  std::int64_t mesh_covered = 0;
};

[[nodiscard]] SpeedupSpread speedup_spread(const std::vector<SpeedupRow>& rows, const SpeedupCalibration& c);

// `own` (a spread that holds no change of mesh) with `mesh` (one measured over meshes) in
// quadrature: independent sources of error.
[[nodiscard]] double combine_spread(double own, double mesh);

// Another fitted hardware's rows predicted with this fit's free parameters copied into that
// hardware's profile (the rest of it its own): the error copying the parameters makes.
struct CrossHardwareScore {
  std::string hardware;
  std::vector<double> predicted;  // per row of `rows`
  double mae = 0, log_sd = 0;
  std::int64_t rows = 0;
};
[[nodiscard]] CrossHardwareScore predict_with_copied(const std::vector<SpeedupRow>& rows, const models::Profile& target,
                                                     const models::Profile& fitted,
                                                     const std::vector<std::string>& copied,
                                                     const StepPredictor& predictor);

}  // namespace ringsim::calibration
