#pragma once
// Shared by `ringsim measure` and `ringsim validate` (compiled only with CUDA): the device
// check that turns "no GPU" into one line and exit code 1, device buffers, random 16-bit inputs
// and timed launches of the forward kernel under the CUPTI collector.
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "calibration/cupti/collector.hpp"
#include "calibration/cupti/device_info.hpp"
#include "kernels/cuda/flash_fwd.hpp"

namespace ringsim::cli::gpu {

// Selects `device` after checking one is there; throws std::runtime_error("no CUDA device ...")
// otherwise (main prints it as one line with exit code 1). Also refuses GPUs older than sm_80,
// which the kernels are not built for.
void require_device(std::int32_t device);

// Raw device memory, freed on destruction.
class DeviceBytes {
 public:
  DeviceBytes() = default;
  explicit DeviceBytes(std::size_t bytes);
  ~DeviceBytes();
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  [[nodiscard]] void* get() const noexcept { return p_; }
  [[nodiscard]] std::size_t size() const noexcept { return bytes_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Q, K, V and the fp32 outputs for blocks of up to `rows` x `cols` tokens. Inputs are uniform
// random in [-1, 1) (bf16 or fp16): timings do not depend on values, but NaN-free data keeps
// the softmax path the one production runs.
class AttentionBuffers {
 public:
  AttentionBuffers(kernels::cuda::DType dtype, std::int64_t rows, std::int64_t cols, std::int32_t q_heads,
                   std::int32_t kv_heads, std::int32_t head_dim, std::uint64_t seed);
  // Arguments for one launch on `schedule` (whose rows/cols must fit the buffers).
  [[nodiscard]] kernels::cuda::FlashArgs args(const kernels::cuda::ScheduleBuffer& schedule) const;

 private:
  kernels::cuda::DType dtype_;
  std::int64_t rows_, cols_;
  std::int32_t q_heads_, kv_heads_, head_dim_;
  DeviceBytes q_, k_, v_, out_, lse_;
};

// Launches `args` warmup + repeats times, each under its own tag (warm-ups with tag.round = -1)
// and returns the CUPTI durations of the timed launches, in launch order. Synchronises.
[[nodiscard]] std::vector<double> time_launches(calibration::CuptiCollector& collector,
                                                const kernels::cuda::FlashArgs& args, calibration::LaunchTag tag,
                                                int warmup, int repeats);

[[nodiscard]] double median(std::vector<double> v);
// "13.0" from the runtime's 13000.
[[nodiscard]] std::string cuda_version_text(std::int32_t v);

}  // namespace ringsim::cli::gpu
