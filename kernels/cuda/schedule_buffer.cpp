// Host-only half of the CUDA kernels library: the schedule upload and the error type. Compiled
// by the host compiler, so the project's warning flags apply.
#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/cuda/flash_fwd.hpp"

namespace ringsim::kernels::cuda {
namespace {

std::size_t align16(std::size_t n) { return (n + 15) / 16 * 16; }

}  // namespace

CudaError::CudaError(const std::string& what, cudaError_t code)
    : std::runtime_error(what + ": " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")"), code_(code) {}

void CudaError::check(cudaError_t code, const char* what) {
  if (code != cudaSuccess) throw CudaError(what, code);
}

ScheduleBuffer::ScheduleBuffer(const TileSchedule& schedule, cudaStream_t stream) {
  schedule.validate();
  // One allocation, each array at a 16-byte boundary: one cudaMalloc and one copy per schedule
  // instead of six, since a ring emulation uploads one schedule per (device, round).
  struct Part {
    const void* src;
    std::size_t bytes;
    std::size_t offset;
  };
  const auto bytes_of = [](const auto& v) { return v.size() * sizeof(v[0]); };
  std::vector<Part> parts = {{schedule.q_pos.data(), bytes_of(schedule.q_pos), 0},
                             {schedule.k_pos.data(), bytes_of(schedule.k_pos), 0},
                             {schedule.q_bucket.data(), bytes_of(schedule.q_bucket), 0},
                             {schedule.k_bucket.data(), bytes_of(schedule.k_bucket), 0},
                             {schedule.q_tile_offsets.data(), bytes_of(schedule.q_tile_offsets), 0},
                             {schedule.items.data(), bytes_of(schedule.items), 0}};
  std::size_t total = 0;
  for (Part& p : parts) {
    p.offset = total;
    total += align16(p.bytes);
  }
  std::vector<unsigned char> staging(total, 0);
  for (const Part& p : parts)
    if (p.bytes > 0) std::memcpy(staging.data() + p.offset, p.src, p.bytes);

  if (const cudaError_t e = cudaMalloc(&storage_, total); e != cudaSuccess) {
    storage_ = nullptr;
    throw CudaError("cudaMalloc(schedule)", e);
  }
  if (const cudaError_t e = cudaMemcpyAsync(storage_, staging.data(), total, cudaMemcpyHostToDevice, stream);
      e != cudaSuccess) {
    cudaFree(storage_);
    storage_ = nullptr;
    throw CudaError("cudaMemcpyAsync(schedule)", e);
  }
  // Waited for, so that kernels on any stream may read the schedule and `staging` may go.
  if (const cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) {
    cudaFree(storage_);
    storage_ = nullptr;
    throw CudaError("cudaStreamSynchronize(schedule upload)", e);
  }

  auto* base = static_cast<unsigned char*>(storage_);
  const auto at = [&](std::size_t i) -> const void* { return parts[i].bytes > 0 ? base + parts[i].offset : nullptr; };
  view_.q_pos = static_cast<const std::int32_t*>(at(0));
  view_.k_pos = static_cast<const std::int32_t*>(at(1));
  view_.q_bucket = static_cast<const std::int32_t*>(at(2));
  view_.k_bucket = static_cast<const std::int32_t*>(at(3));
  view_.q_tile_offsets = static_cast<const std::int32_t*>(at(4));
  view_.items = static_cast<const TileItem*>(at(5));
  view_.rows = schedule.rows;
  view_.cols = schedule.cols;
  view_.tile_q = schedule.tile_q;
  view_.tile_k = schedule.tile_k;
  view_.n_items = static_cast<std::int32_t>(schedule.items.size());
}

ScheduleBuffer::~ScheduleBuffer() {
  if (storage_ != nullptr) cudaFree(storage_);  // errors here cannot be reported; the context may be gone
}

ScheduleBuffer::ScheduleBuffer(ScheduleBuffer&& other) noexcept
    : storage_(std::exchange(other.storage_, nullptr)), view_(std::exchange(other.view_, {})) {}

ScheduleBuffer& ScheduleBuffer::operator=(ScheduleBuffer&& other) noexcept {
  if (this != &other) {
    if (storage_ != nullptr) cudaFree(storage_);
    storage_ = std::exchange(other.storage_, nullptr);
    view_ = std::exchange(other.view_, {});
  }
  return *this;
}

}  // namespace ringsim::kernels::cuda
