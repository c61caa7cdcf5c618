#pragma once
// The core of `ringsim validate` (compiled only with CUDA): one GPU plays every device of an
// N-device ring, one launch per (round, device) on that device's workload schedule, timed by
// CUPTI, and the ring's view of it (per round: the slowest device; per step: the sum of
// rounds, forward only, one layer) beside the analytic model's prediction.
#include <cstdint>
#include <vector>

#include "calibration/cupti/collector.hpp"
#include "kernels/cuda/flash_fwd.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::cli {

struct ValidateOptions {
  kernels::cuda::DType dtype = kernels::cuda::DType::BF16;
  int warmup = 1;
  int repeats = 5;  // timed launches per (round, device); their median is the device's time
  std::uint64_t seed = 1;
};

struct RoundValidation {
  std::int64_t round = 0;
  double measured_max_s = 0;   // slowest device's median kernel time (0: every block fully masked)
  double measured_mean_s = 0;  // over devices
  std::int64_t argmax_device = 0;
  double predicted_max_s = 0;  // analytic rounds_fwd[round].compute_max_s
  std::vector<double> device_s;  // per device (0 where the block was fully masked and not launched)
};

struct Validation {
  std::vector<RoundValidation> rounds;
  double measured_step_s = 0;   // sum over rounds of measured_max_s: what a lock-step ring waits
  double predicted_step_s = 0;  // sum over rounds of predicted_max_s
  std::int32_t q_heads = 0;     // per device (model heads / mp)
  std::int32_t kv_heads = 0;
  std::int32_t head_dim = 0;
};

// Throws InputError for scenarios the kernel cannot run (batch > 1, head_dim not 64/128,
// index-based masks, kv heads not split over mp); no GPU needed, so the CLI checks before it
// looks for one.
void check_kernel_scenario(const models::ResolvedScenario& scenario);

// Throws InputError for scenarios the kernel cannot run (batch > 1, head_dim not 64/128, index-
// based masks, kv heads not split over mp) and CudaError/CuptiError for GPU failures. Fully
// masked blocks are not launched (a ring implementation skips them) and count as 0 s.
[[nodiscard]] Validation run_validation(const models::ResolvedScenario& scenario, const ValidateOptions& options,
                                        calibration::CuptiCollector& collector);

// (predicted / measured - 1) x 100; NaN when nothing was measured.
[[nodiscard]] double error_pct(double predicted_s, double measured_s) noexcept;

}  // namespace ringsim::cli
