// The merge of partial attention outputs that a ring step leaves (and their initial state): each
// step's output and log-sum-exp combine into the running fp32 output as ring-flash-attention's
// update_out_and_lse does, one warp per (row, head).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "kernels/cuda/flash_fwd.hpp"

namespace ringsim::kernels::cuda {
// Named namespace, as for the forward kernel: CUPTI reports the mangled name.
namespace detail {

// One warp per (row, head). In place: every lane reads both LSEs before lane 0 overwrites one.
__global__ void merge_partials_kernel(MergeArgs a) {
  const std::int64_t rh = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (rh >= a.rows * a.heads) return;
  const float la = a.lse[rh];
  const float lb = a.part_lse[rh];
  const float mx = fmaxf(la, lb);
  float wa = 0.0f, wb = 0.0f, lse = -INFINITY;
  if (mx != -INFINITY) {
    const float ea = expf(la - mx);
    const float eb = expf(lb - mx);
    wa = ea / (ea + eb);
    wb = eb / (ea + eb);
    lse = mx + logf(ea + eb);
  }
  float* out = a.out + rh * a.head_dim;
  const float* part = a.part_out + rh * a.head_dim;
  // Weights of exactly 0 must not let an Inf/NaN of an empty partial through.
  for (int d = lane; d < a.head_dim; d += 32) {
    const float x = wa > 0.0f ? wa * out[d] : 0.0f;
    const float y = wb > 0.0f ? wb * part[d] : 0.0f;
    out[d] = x + y;
  }
  __syncwarp();
  if (lane == 0) a.lse[rh] = lse;
}

__global__ void init_partials_kernel(float* out, float* lse, std::int64_t n_rows_heads, std::int32_t head_dim) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_rows_heads * head_dim;
       i += stride) {
    out[i] = 0.0f;
    if (i < n_rows_heads) lse[i] = -INFINITY;
  }
}

}  // namespace detail

using detail::init_partials_kernel;
using detail::merge_partials_kernel;

void launch_merge_partials(const MergeArgs& a, cudaStream_t stream) {
  if (!a.out || !a.lse || !a.part_out || !a.part_lse) throw std::invalid_argument("launch_merge_partials: null pointer");
  if (a.rows < 0 || a.heads < 1 || a.head_dim < 1) throw std::invalid_argument("launch_merge_partials: bad shape");
  const std::int64_t n = a.rows * a.heads;
  if (n == 0) return;
  constexpr int kWarpsPerBlock = 8;
  const std::int64_t blocks = (n + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > 0x7fffffff) throw std::invalid_argument("launch_merge_partials: too many rows");
  merge_partials_kernel<<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream>>>(a);
  CudaError::check(cudaGetLastError(), "merge_partials launch");
}

void launch_init_partials(float* out, float* lse, std::int64_t rows, std::int32_t heads, std::int32_t head_dim,
                          cudaStream_t stream) {
  if (!out || !lse) throw std::invalid_argument("launch_init_partials: null pointer");
  if (rows < 0 || heads < 1 || head_dim < 1) throw std::invalid_argument("launch_init_partials: bad shape");
  const std::int64_t n = rows * heads;
  if (n == 0) return;
  const std::int64_t blocks = std::min<std::int64_t>((n * head_dim + 255) / 256, 65535);
  init_partials_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(out, lse, n, head_dim);
  CudaError::check(cudaGetLastError(), "init_partials launch");
}

}  // namespace ringsim::kernels::cuda
