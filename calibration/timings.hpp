#pragma once
// Fitting the tile-time model to measured kernel launches (docs/timings-format.md):
//   duration = launch_overhead_s + tiles x batch x tile_overhead_s
//              + FLOPs x (1 + masked_tile_penalty x masked_area / visited_area) / (peak x attention_efficiency)
// with FLOPs = 4 x visited_area x head_dim x heads x batch (x attention_bwd_factor for a
// backward kernel). Residuals are relative (durations span decades), and every term gets a
// held-out error: k-fold cross-validation of the full model and of the model without it.
#include <cstdint>
#include <string>
#include <vector>

#include "calibration/fit.hpp"
#include "models/cost/cost.hpp"
#include "models/hardware/hardware.hpp"

namespace ringsim::calibration {

struct KernelTiming {
  std::string kernel;      // "attention_fwd" or "attention_bwd"
  models::Precision precision = models::Precision::BF16;
  std::int64_t head_dim = 0;
  std::int64_t heads = 0;
  std::int64_t batch = 1;
  std::int64_t tiles_visited = 0;  // per head and sequence
  std::int64_t visited_area = 0;   // rows x cols over visited tiles, per head and sequence
  std::int64_t masked_area = 0;    // part of visited_area in tiles holding masked pairs
  double duration_s = 0;
  std::int64_t line = 0;
};

struct TermReport {
  std::string term;            // parameter name
  double value = 0;
  double std_error = 0;        // NaN when on a bound
  double held_out_without = 0; // k-fold relative MAE with this term removed (NaN for the FLOP term)
};

struct TimingCalibration {
  models::Profile profile;      // base with attention_efficiency, tile_overhead_s, masked_tile_penalty fitted
  double launch_overhead_s = 0;
  FitResult fit;                // residuals relative: predicted / measured - 1
  double r_squared = 0;         // on durations
  double held_out_mae = 0;      // k-fold relative MAE of the full model
  int folds = 0;
  std::vector<TermReport> terms;
};

[[nodiscard]] double predict_timing(const KernelTiming& t, const models::Hardware& hw, double attention_efficiency,
                                    double tile_overhead_s, double masked_tile_penalty, double launch_overhead_s,
                                    double attention_bwd_factor);

// Throws InputError with fewer rows than parameters or an unknown kernel kind.
[[nodiscard]] TimingCalibration calibrate_timings(const std::vector<KernelTiming>& rows, const models::Hardware& hw,
                                                  const models::Profile& base, int folds = 5);

}  // namespace ringsim::calibration
