// Schedule-driven flash-attention forward (FlashAttention-2 style) for sm_80 and sm_90.
//
// One CTA of 4 warps owns 64 query rows of one q tile and one head; each warp owns 16 rows.
// It walks the q tile's items in order, cutting each k tile into chunks of at most 64 keys.
// Per chunk: S = Q K^T with mma.sync m16n8k16 (bf16/fp16 in, fp32 accumulate), the tile's
// element mask, an online softmax in base 2, then O += P V with P kept in registers.
// K/V chunks are double-buffered with cp.async; shared tiles use an XOR swizzle of 16-byte
// chunks so ldmatrix reads of 8 rows hit 8 different bank groups.
#include "kernels/cuda/flash_fwd.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ringsim::kernels::cuda {
// Kernels live in a named namespace, not an anonymous one: CUPTI reports the mangled name, and
// calibration matches records by it, so it must not carry a per-build hash.
namespace detail {

constexpr int kBlockM = 64;  // query rows per CTA
constexpr int kBlockN = 64;  // keys per chunk
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <int D>
constexpr int smem_bytes() {
  // Q, two K stages, two V stages (64 rows x D halves each), then two stages of key positions
  // and buckets.
  return 5 * kBlockM * D * 2 + 2 * 2 * kBlockN * static_cast<int>(sizeof(std::int32_t));
}

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Byte offset of 16-byte chunk `c` of row `r` in a tile with D halves per row. Rows are D*2 =
// 128 or 256 bytes, so XOR-ing the low 3 chunk bits with the row spreads 8 consecutive rows of
// one logical chunk over all 8 bank groups of a 128-byte line.
template <int D>
__device__ __forceinline__ std::uint32_t swz(int r, int c) {
  return static_cast<std::uint32_t>(r * (D * 2) + ((c ^ (r & 7)) << 4));
}

__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  // src-size 0 zero-fills: rows past the block end become zeros, never garbage that a masked
  // (zero) probability could still turn into NaN.
  const int src_size = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_size));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t addr, std::uint32_t& r0, std::uint32_t& r1,
                                            std::uint32_t& r2, std::uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t addr, std::uint32_t& r0, std::uint32_t& r1,
                                                  std::uint32_t& r2, std::uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

template <DType T>
struct Elem;
template <>
struct Elem<DType::BF16> {
  using type = __nv_bfloat16;
  __device__ __forceinline__ static std::uint32_t pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&v);
  }
};
template <>
struct Elem<DType::FP16> {
  using type = __half;
  __device__ __forceinline__ static std::uint32_t pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&v);
  }
};

// d += a * b for one m16n8k16 tile, fp32 accumulators.
template <DType T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                          std::uint32_t b1) {
  if constexpr (T == DType::BF16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Copies up to 64 rows of one head (row stride `stride` elements) into a swizzled tile;
// rows >= n_valid are zero-filled.
template <int D, class E>
__device__ __forceinline__ void load_tile(std::uint32_t tile, const E* base, std::int64_t stride, int n_valid,
                                          int tid) {
  constexpr int kChunks = D / 8;  // 16-byte chunks per row
  static_assert(kBlockM * kChunks % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int j = 0; j < kBlockM * kChunks / kThreads; ++j) {
    const int i = tid + j * kThreads;
    const int r = i / kChunks;
    const int c = i % kChunks;
    const bool valid = r < n_valid;
    const E* src = valid ? base + r * stride + c * 8 : base;
    cp_async_16(tile + swz<D>(r, c), src, valid);
  }
}

// One chunk of at most 64 keys [k_lo, k_hi) of one item, with the item's element rule.
struct Chunk {
  int k_lo;
  int k_hi;
  TileKind kind;
  int window;
};

// Walks the items of one q tile chunk by chunk. Every thread runs it identically, so control
// flow that depends on it stays uniform across the CTA (needed around __syncthreads).
struct ChunkCursor {
  int item;
  int item_end;
  int offset;  // keys of the current item already handed out

  __device__ __forceinline__ bool next(const DeviceSchedule& s, Chunk& out) {
    while (item < item_end) {
      const TileItem it = s.items[item];
      const int tile_lo = it.k_tile * s.tile_k;
      const int tile_hi = min(tile_lo + s.tile_k, s.cols);
      const int lo = tile_lo + offset;
      if (lo < tile_hi) {
        out = {lo, min(lo + kBlockN, tile_hi), it.kind, it.window};
        offset += kBlockN;
        return true;
      }
      ++item;
      offset = 0;
    }
    return false;
  }
};

template <DType T, int D>
__global__ void __launch_bounds__(kThreads) flash_fwd_kernel(FlashArgs args, float scale_log2) {
  using E = typename Elem<T>::type;
  constexpr int kTileBytes = kBlockM * D * 2;
  constexpr int kKSteps = D / 16;  // k16 steps of Q K^T over the head dim
  constexpr int kDBlocks = D / 8;  // n8 blocks of the output over the head dim
  extern __shared__ __align__(128) unsigned char smem[];
  const std::uint32_t s_q = smem_addr(smem);
  const std::uint32_t s_k0 = s_q + kTileBytes;  // stage st: s_k0 + st * kTileBytes
  const std::uint32_t s_v0 = s_q + 3 * kTileBytes;
  auto* s_kpos = reinterpret_cast<std::int32_t*>(smem + 5 * kTileBytes);  // [2][kBlockN]
  std::int32_t* s_kbucket = s_kpos + 2 * kBlockN;                          // [2][kBlockN]

  const DeviceSchedule& s = args.schedule;
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int subs = (s.tile_q + kBlockM - 1) / kBlockM;
  const int q_tile = static_cast<int>(blockIdx.x) / subs;
  const int tile_row0 = q_tile * s.tile_q;
  const int row0 = tile_row0 + (static_cast<int>(blockIdx.x) % subs) * kBlockM;
  const int row_end = min(min(row0 + kBlockM, tile_row0 + s.tile_q), s.rows);
  if (row_end <= row0) return;  // a sub-block past the end of a short last tile
  const int head = static_cast<int>(blockIdx.y);
  const int kv_head = head / (args.q_heads / args.kv_heads);
  const std::int64_t q_stride = static_cast<std::int64_t>(args.q_heads) * D;
  const std::int64_t kv_stride = static_cast<std::int64_t>(args.kv_heads) * D;
  const E* q_base = static_cast<const E*>(args.q) + row0 * q_stride + head * D;
  const E* k_base = static_cast<const E*>(args.k) + kv_head * D;
  const E* v_base = static_cast<const E*>(args.v) + kv_head * D;
  const bool buckets = s.q_bucket != nullptr;

  // This thread's two rows in the accumulator layout: groupID and groupID + 8 of its warp.
  const int my_row[2] = {row0 + warp * 16 + lane / 4, row0 + warp * 16 + lane / 4 + 8};
  int q_pos[2];
  int q_bucket[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const bool valid = my_row[i] < row_end;
    q_pos[i] = valid ? s.q_pos[my_row[i]] : 0;
    q_bucket[i] = valid && buckets ? s.q_bucket[my_row[i]] : 0;
  }
  // Position range of this warp's 16 rows, so the warp can skip chunks that none of its rows
  // may see (the upper half of a diagonal tile taller than 16 rows), as FlashAttention does
  // inside a tile. A warp whose rows all lie past the block end sees nothing.
  int warp_q_min = INT_MAX;
  int warp_q_max = INT_MIN;
  {
    const int r = row0 + warp * 16 + lane % 16;
    if (r < row_end) warp_q_min = warp_q_max = s.q_pos[r];
#pragma unroll
    for (int o = 1; o < 32; o *= 2) {
      warp_q_min = min(warp_q_min, __shfl_xor_sync(0xffffffffu, warp_q_min, o));
      warp_q_max = max(warp_q_max, __shfl_xor_sync(0xffffffffu, warp_q_max, o));
    }
  }
  const bool warp_has_rows = row0 + warp * 16 < row_end;

  auto load_chunk = [&](int stage, const Chunk& c) {
    load_tile<D>(s_k0 + stage * kTileBytes, k_base + c.k_lo * kv_stride, kv_stride, c.k_hi - c.k_lo, tid);
    load_tile<D>(s_v0 + stage * kTileBytes, v_base + c.k_lo * kv_stride, kv_stride, c.k_hi - c.k_lo, tid);
    if (c.kind != TileKind::Full) {
      // Plain loads: 64 int32 whose start need not be 16-byte aligned. The barrier before the
      // chunk is used orders them like the cp.async data.
      if (tid < kBlockN) {
        const int k = c.k_lo + tid;
        s_kpos[stage * kBlockN + tid] = k < c.k_hi ? s.k_pos[k] : 0;
      } else if (buckets && c.kind == TileKind::IndexRanges) {
        const int j = tid - kBlockN;
        const int k = c.k_lo + j;
        s_kbucket[stage * kBlockN + j] = k < c.k_hi ? s.k_bucket[k] : 0;
      }
    }
  };

  float acc[kDBlocks][4];
#pragma unroll
  for (int d = 0; d < kDBlocks; ++d)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[d][e] = 0.0f;
  float row_max[2] = {-INFINITY, -INFINITY};  // running max of the scaled log2 scores
  float row_sum[2] = {0.0f, 0.0f};            // this thread's share of the running sum
  std::uint32_t q_frag[kKSteps][4];

  ChunkCursor cursor{s.q_tile_offsets[q_tile], s.q_tile_offsets[q_tile + 1], 0};
  Chunk cur{};
  bool have = cursor.next(s, cur);
  if (have) {
    load_tile<D>(s_q, q_base, q_stride, row_end - row0, tid);
    load_chunk(0, cur);
  }
  cp_async_commit();
  bool q_in_regs = false;
  int stage = 0;

  while (have) {
    Chunk nxt{};
    const bool have_next = cursor.next(s, nxt);
    if (have_next) load_chunk(stage ^ 1, nxt);
    cp_async_commit();  // possibly empty, so that "all but the newest group" is always this chunk
    cp_async_wait<1>();
    __syncthreads();

    if (!q_in_regs) {
      // A fragments of this warp's 16 rows: matrices (rows 0-7|8-15) x (k 0-7|8-15).
      const int r = warp * 16 + (lane % 8) + ((lane / 8) & 1) * 8;
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk)
        ldmatrix_x4(s_q + swz<D>(r, kk * 2 + lane / 16), q_frag[kk][0], q_frag[kk][1], q_frag[kk][2],
                    q_frag[kk][3]);
      q_in_regs = true;
    }

    // Whether any of this warp's rows may see a key of the chunk, from the chunk's position
    // range. Warps decide alone: nothing between here and the barrier below synchronises them.
    bool warp_sees_chunk = warp_has_rows;
    if (warp_sees_chunk && cur.kind != TileKind::Full) {
      const int n = cur.k_hi - cur.k_lo;
      int k_min = INT_MAX;
      int k_max = INT_MIN;
      for (int j = lane; j < n; j += 32) {
        const int kp = s_kpos[stage * kBlockN + j];
        k_min = min(k_min, kp);
        k_max = max(k_max, kp);
      }
#pragma unroll
      for (int o = 1; o < 32; o *= 2) {
        k_min = min(k_min, __shfl_xor_sync(0xffffffffu, k_min, o));
        k_max = max(k_max, __shfl_xor_sync(0xffffffffu, k_max, o));
      }
      // Every rule but Full needs k_pos <= q_pos; Window also q_pos - k_pos < window.
      warp_sees_chunk = k_min <= warp_q_max && !(cur.kind == TileKind::Window && warp_q_min - k_max >= cur.window);
    }

    if (warp_sees_chunk) {
      // S = Q K^T: 16 rows x 64 keys per warp, as 8 n8 blocks.
      const std::uint32_t s_k = s_k0 + stage * kTileBytes;
      float sc[8][4];
#pragma unroll
      for (int nb = 0; nb < 8; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) sc[nb][e] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < kKSteps; ++kk) {
#pragma unroll
        for (int nb2 = 0; nb2 < 4; ++nb2) {
          // Matrices (keys 0-7, k lo), (keys 0-7, k hi), (keys 8-15, k lo), (keys 8-15, k hi):
          // B fragments of two n8 blocks.
          const int r = nb2 * 16 + (lane % 8) + (lane / 16) * 8;
          std::uint32_t b0, b1, b2, b3;
          ldmatrix_x4(s_k + swz<D>(r, kk * 2 + ((lane / 8) & 1)), b0, b1, b2, b3);
          mma_16816<T>(sc[2 * nb2], q_frag[kk], b0, b1);
          mma_16816<T>(sc[2 * nb2 + 1], q_frag[kk], b2, b3);
        }
      }

      // Scale into log2 units and mask. Full chunks of 64 keys (the bulk of the work) skip it.
      const int n_keys = cur.k_hi - cur.k_lo;
      const bool masked = cur.kind != TileKind::Full || n_keys < kBlockN;
#pragma unroll
      for (int nb = 0; nb < 8; ++nb) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float x = sc[nb][e] * scale_log2;
          if (masked) {
            const int col = nb * 8 + (lane % 4) * 2 + (e & 1);
            const int i = e / 2;
            bool ok = col < n_keys;
            if (ok && cur.kind != TileKind::Full) {
              const int kp = s_kpos[stage * kBlockN + col];
              const int kb = buckets && cur.kind == TileKind::IndexRanges ? s_kbucket[stage * kBlockN + col] : 0;
              ok = pair_allowed(cur.kind, cur.window, q_pos[i], kp, q_bucket[i], kb);
            }
            if (!ok) x = -INFINITY;
          }
          sc[nb][e] = x;
        }
      }

      // Online softmax. A row with nothing allowed so far keeps max -inf; exponentiating against
      // 0 instead keeps every term exactly 0 rather than NaN (-inf - -inf).
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        float mx = -INFINITY;
#pragma unroll
        for (int nb = 0; nb < 8; ++nb) mx = fmaxf(mx, fmaxf(sc[nb][2 * i], sc[nb][2 * i + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(row_max[i], mx);
        const float m_use = m_new == -INFINITY ? 0.0f : m_new;
        const float correction = exp2f(row_max[i] - m_use);
        row_max[i] = m_new;
        row_sum[i] *= correction;
#pragma unroll
        for (int d = 0; d < kDBlocks; ++d) {
          acc[d][2 * i] *= correction;
          acc[d][2 * i + 1] *= correction;
        }
#pragma unroll
        for (int nb = 0; nb < 8; ++nb) {
          sc[nb][2 * i] = exp2f(sc[nb][2 * i] - m_use);
          sc[nb][2 * i + 1] = exp2f(sc[nb][2 * i + 1] - m_use);
          row_sum[i] += sc[nb][2 * i] + sc[nb][2 * i + 1];
        }
      }

      // O += P V. The S accumulators of n8 blocks 2j and 2j+1 are exactly the A fragment of the
      // k16 step j, so P never leaves registers.
      const std::uint32_t s_v = s_v0 + stage * kTileBytes;
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        const std::uint32_t a[4] = {
            Elem<T>::pack(sc[2 * kk][0], sc[2 * kk][1]), Elem<T>::pack(sc[2 * kk][2], sc[2 * kk][3]),
            Elem<T>::pack(sc[2 * kk + 1][0], sc[2 * kk + 1][1]), Elem<T>::pack(sc[2 * kk + 1][2], sc[2 * kk + 1][3])};
        // Transposed matrices (keys 0-7|8-15) x (dims 0-7|8-15): B fragments of two n8 blocks.
        const int r = kk * 16 + (lane % 8) + ((lane / 8) & 1) * 8;
#pragma unroll
        for (int dn2 = 0; dn2 < D / 16; ++dn2) {
          std::uint32_t b0, b1, b2, b3;
          ldmatrix_x4_trans(s_v + swz<D>(r, dn2 * 2 + lane / 16), b0, b1, b2, b3);
          mma_16816<T>(acc[2 * dn2], a, b0, b1);
          mma_16816<T>(acc[2 * dn2 + 1], a, b2, b3);
        }
      }
    }

    __syncthreads();  // every warp is done with this stage before the next prefetch overwrites it
    cur = nxt;
    have = have_next;
    stage ^= 1;
  }
  cp_async_wait<0>();

  // Normalise by the row's own sum and write fp32 output and natural-log LSE.
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    float sum = row_sum[i];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const int row = my_row[i];
    if (row >= row_end) continue;
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    float* out = args.out + (static_cast<std::int64_t>(row) * args.q_heads + head) * D + (lane % 4) * 2;
#pragma unroll
    for (int d = 0; d < kDBlocks; ++d)
      *reinterpret_cast<float2*>(out + d * 8) = make_float2(acc[d][2 * i] * inv, acc[d][2 * i + 1] * inv);
    if (lane % 4 == 0)
      args.lse[static_cast<std::int64_t>(row) * args.q_heads + head] =
          sum > 0.0f ? (row_max[i] + log2f(sum)) * kLn2 : -INFINITY;
  }
}

}  // namespace detail

namespace {
using namespace detail;

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("launch_flash_fwd: " + what);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

template <DType T, int D>
void launch(const FlashArgs& args, float scale_log2, cudaStream_t stream) {
  constexpr int kSmem = smem_bytes<D>();
  const auto kernel = flash_fwd_kernel<T, D>;
  // Needed past 48 KiB (D = 128); the attribute is per device, so it is set on every launch.
  CudaError::check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem),
        "cudaFuncSetAttribute(flash_fwd)");
  const DeviceSchedule& s = args.schedule;
  const std::int64_t q_tiles = (static_cast<std::int64_t>(s.rows) + s.tile_q - 1) / s.tile_q;
  const std::int64_t subs = (static_cast<std::int64_t>(s.tile_q) + kBlockM - 1) / kBlockM;
  require(q_tiles * subs <= 0x7fffffff, "too many query blocks for one grid");
  const dim3 grid(static_cast<unsigned>(q_tiles * subs), static_cast<unsigned>(args.q_heads));
  flash_fwd_kernel<T, D><<<grid, kThreads, kSmem, stream>>>(args, scale_log2);
  CudaError::check(cudaGetLastError(), "flash_fwd launch");
}

}  // namespace

void launch_flash_fwd(const FlashArgs& args, cudaStream_t stream) {
  const DeviceSchedule& s = args.schedule;
  require(args.head_dim == 64 || args.head_dim == 128, "head_dim must be 64 or 128, got " + std::to_string(args.head_dim));
  require(args.q_heads > 0 && args.kv_heads > 0 && args.q_heads % args.kv_heads == 0,
          "q_heads must be a positive multiple of kv_heads");
  require(args.q_heads <= 65535, "q_heads must be <= 65535 (grid y)");
  require(args.q && args.k && args.v && args.out && args.lse, "q, k, v, out and lse must be set");
  require(aligned16(args.q) && aligned16(args.k) && aligned16(args.v), "q, k and v must be 16-byte aligned");
  require(reinterpret_cast<std::uintptr_t>(args.out) % 8 == 0, "out must be 8-byte aligned");
  require(s.rows > 0 && s.cols > 0 && s.tile_q > 0 && s.tile_k > 0, "schedule has empty shapes (not uploaded?)");
  // The kernel indexes rows and keys in int32, one tile (plus a chunk) past the block end at most.
  require(static_cast<std::int64_t>(s.rows) + s.tile_q <= INT_MAX &&
              static_cast<std::int64_t>(s.cols) + s.tile_k + kBlockN <= INT_MAX,
          "block plus one tile must fit in int32");
  require(s.q_pos && s.k_pos && s.q_tile_offsets && (s.items || s.n_items == 0), "schedule pointers missing");
  require((s.q_bucket == nullptr) == (s.k_bucket == nullptr), "schedule needs both bucket arrays or neither");
  const float scale = args.softmax_scale > 0.0f ? args.softmax_scale
                                                : 1.0f / std::sqrt(static_cast<float>(args.head_dim));
  const float scale_log2 = scale * kLog2e;
  // Four instantiations in all: compile time matters more than more head dims here.
  if (args.dtype == DType::BF16) {
    if (args.head_dim == 64) launch<DType::BF16, 64>(args, scale_log2, stream);
    else launch<DType::BF16, 128>(args, scale_log2, stream);
  } else {
    if (args.head_dim == 64) launch<DType::FP16, 64>(args, scale_log2, stream);
    else launch<DType::FP16, 128>(args, scale_log2, stream);
  }
}

}  // namespace ringsim::kernels::cuda
