#pragma once
// Host API of the schedule-driven flash-attention forward kernel. One launch computes one
// (Q block, K/V block) pair of a ring round: it visits exactly the schedule's tiles and returns,
// per query row and head, the output normalised by its own softmax sum plus the log-sum-exp,
// so the partials of successive rounds merge exactly (launch_merge_partials), as on a ring.
// Plain C++ header: callers compiled by the host compiler include it with CUDA::cudart.
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

#include "kernels/schedule.hpp"

namespace ringsim::kernels::cuda {

enum class DType : std::int32_t { BF16, FP16 };

// A failed CUDA call (launch, copy, allocation), with the call and the runtime's message.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& what, cudaError_t code);
  // Throws CudaError(what, code) unless code is cudaSuccess.
  static void check(cudaError_t code, const char* what);
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

// A validated TileSchedule in device memory (see ScheduleBuffer), as the kernel reads it.
struct DeviceSchedule {
  const std::int32_t* q_pos = nullptr;
  const std::int32_t* k_pos = nullptr;
  const std::int32_t* q_bucket = nullptr;  // null: one bucket
  const std::int32_t* k_bucket = nullptr;
  const std::int32_t* q_tile_offsets = nullptr;
  const TileItem* items = nullptr;  // null only when n_items == 0
  std::int32_t rows = 0;
  std::int32_t cols = 0;
  std::int32_t tile_q = 0;
  std::int32_t tile_k = 0;
  std::int32_t n_items = 0;
};

// Owns the device copy of one schedule (a single allocation). Uploading validates the schedule
// first: the kernel trusts what it reads.
class ScheduleBuffer {
 public:
  ScheduleBuffer() = default;
  explicit ScheduleBuffer(const TileSchedule& schedule, cudaStream_t stream = nullptr);
  ~ScheduleBuffer();
  ScheduleBuffer(ScheduleBuffer&& other) noexcept;
  ScheduleBuffer& operator=(ScheduleBuffer&& other) noexcept;
  ScheduleBuffer(const ScheduleBuffer&) = delete;
  ScheduleBuffer& operator=(const ScheduleBuffer&) = delete;

  [[nodiscard]] const DeviceSchedule& view() const noexcept { return view_; }

 private:
  void* storage_ = nullptr;
  DeviceSchedule view_;
};

// Tensors are [token][head][head_dim], contiguous, 16-byte aligned; K and V have kv_heads heads
// (GQA: q head h reads kv head h / (q_heads / kv_heads)). Q rows are the schedule's local rows,
// K/V rows its local cols.
struct FlashArgs {
  DType dtype = DType::BF16;
  std::int32_t head_dim = 128;  // 64 or 128
  std::int32_t q_heads = 0;
  std::int32_t kv_heads = 0;    // divides q_heads
  const void* q = nullptr;      // [rows][q_heads][head_dim]
  const void* k = nullptr;      // [cols][kv_heads][head_dim]
  const void* v = nullptr;      // [cols][kv_heads][head_dim]
  float* out = nullptr;         // [rows][q_heads][head_dim], fp32, 0 where no key is allowed
  float* lse = nullptr;         // [rows][q_heads], natural log of the softmax sum; -inf where none
  float softmax_scale = 0.0f;   // <= 0: 1 / sqrt(head_dim)
  DeviceSchedule schedule;
};

// Enqueues the forward kernel on `stream`. Throws std::invalid_argument for unsupported
// arguments and CudaError when the launch fails; kernel faults surface at the next sync.
void launch_flash_fwd(const FlashArgs& args, cudaStream_t stream);

// acc = merge(acc, part) in place, per (row, head): out = (e^lse_a out_a + e^lse_b out_b) /
// (e^lse_a + e^lse_b), lse = log(e^lse_a + e^lse_b); two empty partials stay 0 / -inf.
struct MergeArgs {
  float* out = nullptr;             // [rows][heads][head_dim], accumulated in place
  float* lse = nullptr;             // [rows][heads]
  const float* part_out = nullptr;  // the round's partial, same shapes
  const float* part_lse = nullptr;
  std::int64_t rows = 0;
  std::int32_t heads = 0;
  std::int32_t head_dim = 0;
};
void launch_merge_partials(const MergeArgs& args, cudaStream_t stream);

// Sets an accumulator to the empty partial (out 0, lse -inf), the identity of the merge.
void launch_init_partials(float* out, float* lse, std::int64_t rows, std::int32_t heads, std::int32_t head_dim,
                          cudaStream_t stream);

}  // namespace ringsim::kernels::cuda
