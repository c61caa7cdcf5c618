#pragma once
// Shared by the GPU tests: device buffers, 16-bit float conversion on the host, random inputs
// and a plain fp64 attention that knows nothing about tiles, schedules or online softmax.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/cuda/flash_fwd.hpp"

namespace ringsim::test {

using kernels::cuda::CudaError;
using kernels::cuda::DType;

inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaError(what, e);
}

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) : n_(n) {
    cuda_check(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc");
  }
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
  ~DeviceArray() { cudaFree(p_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  [[nodiscard]] T* get() const noexcept { return p_; }
  void upload(const std::vector<T>& host) {
    cuda_check(cudaMemcpy(p_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  [[nodiscard]] std::vector<T> download() const {
    std::vector<T> host(n_);
    cuda_check(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
    return host;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

// Round to nearest even, as the GPU's conversions do (inputs here are finite and small).
inline std::uint16_t to_bf16(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
inline float from_bf16(std::uint16_t b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}
inline std::uint16_t to_fp16(float f) {
  const auto h = static_cast<_Float16>(f);
  std::uint16_t b = 0;
  std::memcpy(&b, &h, 2);
  return b;
}
inline float from_fp16(std::uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return static_cast<float>(h);
}

// A tensor as the GPU sees it (16-bit words) and as the reference sees it (the same values).
struct Tensor16 {
  std::vector<std::uint16_t> bits;
  std::vector<float> values;
};

inline Tensor16 random_tensor(std::size_t n, DType dtype, std::mt19937& rng, float amplitude = 1.0f) {
  std::uniform_real_distribution<float> dist(-amplitude, amplitude);
  Tensor16 t;
  t.bits.resize(n);
  t.values.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = dist(rng);
    t.bits[i] = dtype == DType::BF16 ? to_bf16(x) : to_fp16(x);
    t.values[i] = dtype == DType::BF16 ? from_bf16(t.bits[i]) : from_fp16(t.bits[i]);
  }
  return t;
}

struct Shape {
  int rows = 0;
  int cols = 0;
  int q_heads = 1;
  int kv_heads = 1;
  int head_dim = 64;
};

struct Attention {
  std::vector<double> out;  // [rows][q_heads][head_dim]
  std::vector<double> lse;  // [rows][q_heads], -inf where nothing is allowed
};

// softmax(scale Q K^T + mask) V in fp64, with `allowed(q_row, k_row)` as the mask.
inline Attention reference_attention(const Shape& sh, const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, double scale,
                                     const std::function<bool(int, int)>& allowed) {
  const int D = sh.head_dim;
  const int group = sh.q_heads / sh.kv_heads;
  Attention a;
  a.out.assign(static_cast<std::size_t>(sh.rows) * sh.q_heads * D, 0.0);
  a.lse.assign(static_cast<std::size_t>(sh.rows) * sh.q_heads, -std::numeric_limits<double>::infinity());
  std::vector<double> s(static_cast<std::size_t>(sh.cols));
  for (int r = 0; r < sh.rows; ++r) {
    for (int h = 0; h < sh.q_heads; ++h) {
      const int kh = h / group;
      const float* qr = &q[(static_cast<std::size_t>(r) * sh.q_heads + h) * D];
      double mx = -std::numeric_limits<double>::infinity();
      for (int c = 0; c < sh.cols; ++c) {
        if (!allowed(r, c)) {
          s[static_cast<std::size_t>(c)] = -std::numeric_limits<double>::infinity();
          continue;
        }
        const float* kr = &k[(static_cast<std::size_t>(c) * sh.kv_heads + kh) * D];
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += static_cast<double>(qr[d]) * kr[d];
        s[static_cast<std::size_t>(c)] = dot * scale;
        mx = std::max(mx, s[static_cast<std::size_t>(c)]);
      }
      if (mx == -std::numeric_limits<double>::infinity()) continue;
      double sum = 0;
      double* o = &a.out[(static_cast<std::size_t>(r) * sh.q_heads + h) * D];
      for (int c = 0; c < sh.cols; ++c) {
        if (s[static_cast<std::size_t>(c)] == -std::numeric_limits<double>::infinity()) continue;
        const double p = std::exp(s[static_cast<std::size_t>(c)] - mx);
        sum += p;
        const float* vr = &v[(static_cast<std::size_t>(c) * sh.kv_heads + kh) * D];
        for (int d = 0; d < D; ++d) o[d] += p * vr[d];
      }
      for (int d = 0; d < D; ++d) o[d] /= sum;
      a.lse[static_cast<std::size_t>(r) * sh.q_heads + h] = mx + std::log(sum);
    }
  }
  return a;
}

}  // namespace ringsim::test
