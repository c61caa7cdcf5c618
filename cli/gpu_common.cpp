#include "cli/gpu_common.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace ringsim::cli::gpu {

using kernels::cuda::CudaError;
using kernels::cuda::DType;

namespace {

// Round to nearest even, as the GPU converts.
std::uint16_t to_bf16(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

// Inputs are in [-1, 1): normal halves only, no rounding subtleties that matter for timing.
std::uint16_t to_fp16(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const int exp = static_cast<int>((u >> 23) & 0xffu) - 127 + 15;
  if (exp <= 0) return static_cast<std::uint16_t>(sign);  // tiny: flush to zero
  const std::uint32_t mant = (u >> 13) & 0x3ffu;
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exp) << 10) | mant);
}

void fill_random(DeviceBytes& dst, DType dtype, std::uint64_t seed) {
  // splitmix64 rather than <random>'s distributions: blocks hold up to ~10^8 values and only
  // need to be finite and varied, not statistically pristine.
  std::vector<std::uint16_t> host(dst.size() / 2);
  std::uint64_t state = seed;
  for (auto& h : host) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float x = static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;  // 24 bits in [-1, 1)
    h = dtype == DType::BF16 ? to_bf16(x) : to_fp16(x);
  }
  CudaError::check(cudaMemcpy(dst.get(), host.data(), host.size() * 2, cudaMemcpyHostToDevice), "cudaMemcpy (inputs)");
}

}  // namespace

void require_device(std::int32_t device) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0)
    throw std::runtime_error(fmt::format("no CUDA device ({})", e != cudaSuccess ? cudaGetErrorString(e) : "device count 0"));
  if (device < 0 || device >= count)
    throw std::runtime_error(fmt::format("no CUDA device {} ({} present)", device, count));
  CudaError::check(cudaSetDevice(device), "cudaSetDevice");
  int major = 0;
  CudaError::check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
  if (major < 8) throw std::runtime_error(fmt::format("CUDA device {} is older than sm_80 (the kernels need sm_80+)", device));
}

DeviceBytes::DeviceBytes(std::size_t bytes) : bytes_(bytes) {
  CudaError::check(cudaMalloc(&p_, std::max<std::size_t>(bytes, 16)), "cudaMalloc");
}

DeviceBytes::~DeviceBytes() {
  if (p_) cudaFree(p_);
}

AttentionBuffers::AttentionBuffers(DType dtype, std::int64_t rows, std::int64_t cols, std::int32_t q_heads,
                                   std::int32_t kv_heads, std::int32_t head_dim, std::uint64_t seed)
    : dtype_(dtype),
      rows_(rows),
      cols_(cols),
      q_heads_(q_heads),
      kv_heads_(kv_heads),
      head_dim_(head_dim),
      q_(static_cast<std::size_t>(rows * q_heads * head_dim) * 2),
      k_(static_cast<std::size_t>(cols * kv_heads * head_dim) * 2),
      v_(static_cast<std::size_t>(cols * kv_heads * head_dim) * 2),
      out_(static_cast<std::size_t>(rows * q_heads * head_dim) * 4),
      lse_(static_cast<std::size_t>(rows * q_heads) * 4) {
  fill_random(q_, dtype, seed);
  fill_random(k_, dtype, seed + 1);
  fill_random(v_, dtype, seed + 2);
}

kernels::cuda::FlashArgs AttentionBuffers::args(const kernels::cuda::ScheduleBuffer& schedule) const {
  const auto& s = schedule.view();
  if (s.rows > rows_ || s.cols > cols_) throw std::logic_error("schedule larger than the attention buffers");
  kernels::cuda::FlashArgs a;
  a.dtype = dtype_;
  a.head_dim = head_dim_;
  a.q_heads = q_heads_;
  a.kv_heads = kv_heads_;
  a.q = q_.get();
  a.k = k_.get();
  a.v = v_.get();
  a.out = static_cast<float*>(out_.get());
  a.lse = static_cast<float*>(lse_.get());
  a.schedule = s;
  return a;
}

std::vector<double> time_launches(calibration::CuptiCollector& collector, const kernels::cuda::FlashArgs& args,
                                  calibration::LaunchTag tag, int warmup, int repeats) {
  // Records of earlier work (uploads are not kernels, but be safe) must not be mistaken for ours.
  (void)collector.take_records();
  const std::int32_t timed_round = tag.round;
  std::vector<std::uint64_t> timed_ids;
  for (int i = 0; i < warmup + repeats; ++i) {
    calibration::LaunchTag t = tag;
    t.round = i < warmup ? -1 : timed_round;
    const auto scope = collector.tag(std::move(t));
    kernels::cuda::launch_flash_fwd(args, nullptr);
    if (i >= warmup) timed_ids.push_back(scope.id());
  }
  CudaError::check(cudaDeviceSynchronize(), "kernel execution");
  const auto records = collector.take_records();
  std::vector<double> out;
  for (const auto id : timed_ids) {
    for (const auto& r : records) {
      if (r.tag_id && *r.tag_id == id) out.push_back(r.duration_s());
    }
  }
  if (out.size() != timed_ids.size())
    throw std::runtime_error(fmt::format("CUPTI returned {} of {} kernel records ({} dropped)", out.size(),
                                         timed_ids.size(), collector.dropped_records()));
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string cuda_version_text(std::int32_t v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

}  // namespace ringsim::cli::gpu
