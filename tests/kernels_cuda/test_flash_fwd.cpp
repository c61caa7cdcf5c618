// The flash-attention forward kernel against a plain fp64 attention on the CPU: masks from the
// schedule kinds, GQA, head dims 64 and 128, bf16 and fp16, and ring rounds merged through LSE.
// Needs a GPU (gpu_skip.cpp exits 77 first when there is none).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/cuda/flash_fwd.hpp"
#include "kernels/schedule.hpp"
#include "tests/kernels_cuda/gpu_helpers.hpp"

namespace kc = ringsim::kernels::cuda;
using ringsim::kernels::build_schedule;
using ringsim::kernels::pair_allowed;
using ringsim::kernels::ScheduleSpec;
using ringsim::kernels::strided_positions;
using ringsim::kernels::TileItem;
using ringsim::kernels::TileKind;
using ringsim::kernels::TileSchedule;
using namespace ringsim::test;

namespace {

constexpr double kOutTol = 2e-2;  // bf16 inputs and bf16 probabilities in P V
constexpr double kLseTol = 2e-3;  // scores accumulate in fp32 from exact 16-bit products

struct Inputs {
  Tensor16 q, k, v;
};

Inputs random_inputs(const Shape& sh, DType dt, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Inputs in;
  in.q = random_tensor(static_cast<std::size_t>(sh.rows) * sh.q_heads * sh.head_dim, dt, rng);
  in.k = random_tensor(static_cast<std::size_t>(sh.cols) * sh.kv_heads * sh.head_dim, dt, rng);
  in.v = random_tensor(static_cast<std::size_t>(sh.cols) * sh.kv_heads * sh.head_dim, dt, rng);
  return in;
}

double default_scale(const Shape& sh) { return 1.0 / std::sqrt(static_cast<double>(sh.head_dim)); }

struct GpuOut {
  std::vector<float> out;
  std::vector<float> lse;
};

kc::FlashArgs make_args(const Shape& sh, DType dt, const void* q, const void* k, const void* v, float* out, float* lse,
                        const kc::ScheduleBuffer& schedule, float scale) {
  kc::FlashArgs a;
  a.dtype = dt;
  a.head_dim = sh.head_dim;
  a.q_heads = sh.q_heads;
  a.kv_heads = sh.kv_heads;
  a.q = q;
  a.k = k;
  a.v = v;
  a.out = out;
  a.lse = lse;
  a.softmax_scale = scale;
  a.schedule = schedule.view();
  return a;
}

GpuOut run_one(const Shape& sh, DType dt, const Inputs& in, const TileSchedule& s, float scale = 0.0f) {
  DeviceArray<std::uint16_t> q(in.q.bits), k(in.k.bits), v(in.v.bits);
  const std::size_t n_rh = static_cast<std::size_t>(sh.rows) * sh.q_heads;
  DeviceArray<float> out(n_rh * sh.head_dim), lse(n_rh);
  // Poison the outputs: every row must be written, masked or not.
  cuda_check(cudaMemset(out.get(), 0xff, n_rh * sh.head_dim * sizeof(float)), "cudaMemset");
  cuda_check(cudaMemset(lse.get(), 0xff, n_rh * sizeof(float)), "cudaMemset");
  const kc::ScheduleBuffer sb(s);
  kc::launch_flash_fwd(make_args(sh, dt, q.get(), k.get(), v.get(), out.get(), lse.get(), sb, scale), nullptr);
  cuda_check(cudaDeviceSynchronize(), "flash_fwd");
  return {out.download(), lse.download()};
}

void compare(const Shape& sh, const Attention& ref, const GpuOut& got) {
  REQUIRE(got.out.size() == ref.out.size());
  REQUIRE(got.lse.size() == ref.lse.size());
  double max_out_err = 0, max_lse_err = 0;
  std::size_t empty_rows = 0;
  for (std::size_t rh = 0; rh < ref.lse.size(); ++rh) {
    INFO("row " << rh / static_cast<std::size_t>(sh.q_heads) << " head " << rh % static_cast<std::size_t>(sh.q_heads));
    REQUIRE(!std::isnan(got.lse[rh]));
    if (std::isinf(ref.lse[rh])) {
      ++empty_rows;
      REQUIRE(std::isinf(got.lse[rh]));
      REQUIRE(got.lse[rh] < 0);
    } else {
      max_lse_err = std::max(max_lse_err, std::abs(got.lse[rh] - ref.lse[rh]));
    }
    for (int d = 0; d < sh.head_dim; ++d) {
      const std::size_t i = rh * static_cast<std::size_t>(sh.head_dim) + static_cast<std::size_t>(d);
      REQUIRE(std::isfinite(got.out[i]));
      if (std::isinf(ref.lse[rh])) REQUIRE(got.out[i] == 0.0f);
      max_out_err = std::max(max_out_err, std::abs(got.out[i] - ref.out[i]));
    }
  }
  INFO("max |out err| " << max_out_err << ", max |lse err| " << max_lse_err << ", empty rows " << empty_rows);
  CHECK(max_out_err <= kOutTol);
  CHECK(max_lse_err <= kLseTol);
}

// The mask the spec describes, in local indices: what the kernel must reproduce.
std::function<bool(int, int)> spec_mask(const ScheduleSpec& spec) {
  return [spec](int r, int c) {
    const auto ri = static_cast<std::size_t>(r);
    const auto ci = static_cast<std::size_t>(c);
    const std::int32_t qb = spec.q_bucket.empty() ? 0 : spec.q_bucket[ri];
    const std::int32_t kb = spec.k_bucket.empty() ? 0 : spec.k_bucket[ci];
    return pair_allowed(spec.rule, spec.window, spec.q_pos[ri], spec.k_pos[ci], qb, kb);
  };
}

void check_spec(const Shape& sh, DType dt, ScheduleSpec spec, std::uint32_t seed, float scale = 0.0f) {
  const Inputs in = random_inputs(sh, dt, seed);
  const auto mask = spec_mask(spec);
  const TileSchedule s = build_schedule(std::move(spec));
  const double ref_scale = scale > 0 ? scale : default_scale(sh);
  const Attention ref = reference_attention(sh, in.q.values, in.k.values, in.v.values, ref_scale, mask);
  compare(sh, ref, run_one(sh, dt, in, s, scale));
}

}  // namespace

TEST_CASE("causal diagonal block, bf16, GQA, head dims 64 and 128", "[kernels][cuda]") {
  for (const int d : {64, 128}) {
    INFO("head_dim " << d);
    const Shape sh{d == 64 ? 192 : 200, d == 64 ? 192 : 200, d == 64 ? 4 : 8, 2, d};
    ScheduleSpec spec;
    spec.q_pos = strided_positions(1000, 1, sh.rows);
    spec.k_pos = strided_positions(1000, 1, sh.cols);
    spec.tile_q = d == 64 ? 64 : 128;  // 128: two CTAs share one schedule tile
    spec.tile_k = 64;
    check_spec(sh, DType::BF16, spec, 11u + static_cast<std::uint32_t>(d));
  }
}

TEST_CASE("full mask, fp16, short last tiles", "[kernels][cuda]") {
  for (const int d : {64, 128}) {
    INFO("head_dim " << d);
    const Shape sh{d == 64 ? 130 : 65, d == 64 ? 70 : 129, 2, 2, d};
    ScheduleSpec spec;
    spec.q_pos = strided_positions(0, 1, sh.rows);
    spec.k_pos = strided_positions(0, 1, sh.cols);
    spec.rule = TileKind::Full;
    check_spec(sh, DType::FP16, spec, 21u + static_cast<std::uint32_t>(d));
  }
}

TEST_CASE("sliding window on striped positions, tiles narrower than a CTA", "[kernels][cuda]") {
  const Shape sh{160, 160, 2, 1, 128};
  ScheduleSpec spec;
  spec.q_pos = strided_positions(1, 4, sh.rows);
  spec.k_pos = strided_positions(2, 4, sh.cols);
  spec.rule = TileKind::Window;
  spec.window = 100;
  spec.tile_q = 32;  // half a CTA: the rest of the CTA's rows are idle
  spec.tile_k = 48;  // chunks of 48 keys: the key mask trims each
  check_spec(sh, DType::BF16, spec, 31u);
}

TEST_CASE("hash buckets: index ranges with per-token buckets", "[kernels][cuda]") {
  const Shape sh{256, 256, 4, 4, 64};
  std::mt19937 rng(41);
  // Tokens sorted by bucket with a stable sort, as SCFA's hash-sparse attention does.
  auto bucketed = [&](std::int32_t start, std::int32_t n, std::vector<std::int32_t>& pos, std::vector<std::int32_t>& b) {
    std::vector<std::pair<std::int32_t, std::int32_t>> bp;
    for (std::int32_t i = 0; i < n; ++i) bp.emplace_back(std::uniform_int_distribution<std::int32_t>(0, 3)(rng), start + i);
    std::stable_sort(bp.begin(), bp.end());
    for (const auto& [bucket, p] : bp) {
      b.push_back(bucket);
      pos.push_back(p);
    }
  };
  ScheduleSpec spec;
  spec.rule = TileKind::IndexRanges;
  bucketed(0, sh.rows, spec.q_pos, spec.q_bucket);
  bucketed(0, sh.cols, spec.k_pos, spec.k_bucket);
  check_spec(sh, DType::BF16, spec, 42u);
}

TEST_CASE("query/key dropping: stranded queries give 0 and -inf", "[kernels][cuda]") {
  const Shape sh{150, 120, 2, 1, 64};
  std::mt19937 rng(51);
  auto kept = [&](int n, int from) {
    std::vector<std::int32_t> all;
    for (int p = from; p < 512; ++p) all.push_back(p);
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(static_cast<std::size_t>(n));
    std::sort(all.begin(), all.end());
    return all;
  };
  ScheduleSpec spec;
  spec.rule = TileKind::IndexRanges;
  spec.q_pos = kept(sh.rows, 0);
  spec.k_pos = kept(sh.cols, 8);  // no key before position 8: early queries are stranded
  spec.q_pos[0] = 0;
  REQUIRE(spec.q_pos[0] < spec.k_pos[0]);
  check_spec(sh, DType::BF16, spec, 52u);
}

TEST_CASE("explicit softmax scale", "[kernels][cuda]") {
  const Shape sh{96, 96, 2, 2, 64};
  ScheduleSpec spec;
  spec.q_pos = strided_positions(0, 1, sh.rows);
  spec.k_pos = strided_positions(0, 1, sh.cols);
  check_spec(sh, DType::FP16, spec, 61u, 0.3f);
}

TEST_CASE("the kernel computes exactly the listed tiles", "[kernels][cuda]") {
  const Shape sh{128, 128, 2, 1, 64};
  TileSchedule s;
  s.rows = sh.rows;
  s.cols = sh.cols;
  s.tile_q = s.tile_k = 32;
  s.q_pos = strided_positions(0, 1, sh.rows);
  s.k_pos = strided_positions(0, 1, sh.cols);
  std::vector<TileItem> items;
  for (std::int32_t qt = 0; qt < 3; ++qt)  // q tile 3 gets nothing: its rows must come out empty
    for (std::int32_t kt = 0; kt < 4; ++kt)
      if ((qt + kt) % 2 == 0) items.push_back({qt, kt, kt == qt ? TileKind::Causal : TileKind::Full, 0});
  s.set_items(items);
  const auto listed = [&](int r, int c) {
    for (const TileItem& it : s.items)
      if (it.q_tile == r / s.tile_q && it.k_tile == c / s.tile_k) return s.allowed(it, r, c);
    return false;
  };
  const Inputs in = random_inputs(sh, DType::BF16, 71);
  const Attention ref = reference_attention(sh, in.q.values, in.k.values, in.v.values, default_scale(sh), listed);
  compare(sh, ref, run_one(sh, DType::BF16, in, s));
}

TEST_CASE("ring rounds merged by LSE equal single-device attention", "[kernels][cuda]") {
  struct Ring {
    const char* layout;
    int n_dev;
    int head_dim;
    int q_heads;
    int kv_heads;
    TileKind rule;
  };
  for (const Ring ring : {Ring{"contiguous", 3, 64, 4, 2, TileKind::Causal}, Ring{"striped", 4, 128, 4, 1, TileKind::Causal},
                          Ring{"striped", 2, 64, 2, 2, TileKind::Window}}) {
    INFO(ring.layout << " ring of " << ring.n_dev << ", head_dim " << ring.head_dim);
    const int c = 96;  // tokens per device
    const int n_seq = c * ring.n_dev;
    const DType dt = DType::BF16;
    const int D = ring.head_dim;
    const std::int32_t window = 70;
    auto positions = [&](int device) {
      return std::string(ring.layout) == "striped" ? strided_positions(device, ring.n_dev, c)
                                                   : strided_positions(device * c, 1, c);
    };
    // The whole sequence's K/V, then each device's block gathered from it.
    const Shape global{n_seq, n_seq, ring.q_heads, ring.kv_heads, D};
    const Inputs all = random_inputs(global, dt, 81u + static_cast<std::uint32_t>(ring.n_dev));
    const int q_device = ring.n_dev - 1;  // the one that sees every other block
    const std::vector<std::int32_t> q_pos = positions(q_device);
    auto gather = [&](const Tensor16& t, const std::vector<std::int32_t>& pos, int heads) {
      Tensor16 out;
      const std::size_t row = static_cast<std::size_t>(heads) * D;
      for (const std::int32_t p : pos) {
        out.bits.insert(out.bits.end(), t.bits.begin() + static_cast<std::ptrdiff_t>(p * row),
                        t.bits.begin() + static_cast<std::ptrdiff_t>((p + 1) * row));
        out.values.insert(out.values.end(), t.values.begin() + static_cast<std::ptrdiff_t>(p * row),
                          t.values.begin() + static_cast<std::ptrdiff_t>((p + 1) * row));
      }
      return out;
    };
    const Tensor16 q = gather(all.q, q_pos, ring.q_heads);

    const Shape block{c, c, ring.q_heads, ring.kv_heads, D};
    const std::size_t n_rh = static_cast<std::size_t>(c) * ring.q_heads;
    DeviceArray<std::uint16_t> dq(q.bits);
    DeviceArray<float> acc_out(n_rh * D), acc_lse(n_rh), part_out(n_rh * D), part_lse(n_rh);
    kc::launch_init_partials(acc_out.get(), acc_lse.get(), c, ring.q_heads, D, nullptr);
    std::size_t empty_rounds = 0;
    for (int round = 0; round < ring.n_dev; ++round) {
      const int k_device = (q_device - round + ring.n_dev) % ring.n_dev;
      ScheduleSpec spec;
      spec.q_pos = q_pos;
      spec.k_pos = positions(k_device);
      spec.rule = ring.rule;
      spec.window = ring.rule == TileKind::Window ? window : 0;
      const TileSchedule s = build_schedule(spec);
      empty_rounds += s.items.empty() ? 1 : 0;
      const Tensor16 k = gather(all.k, s.k_pos, ring.kv_heads);
      const Tensor16 v = gather(all.v, s.k_pos, ring.kv_heads);
      DeviceArray<std::uint16_t> dk(k.bits), dv(v.bits);
      const kc::ScheduleBuffer sb(s);
      kc::launch_flash_fwd(make_args(block, dt, dq.get(), dk.get(), dv.get(), part_out.get(), part_lse.get(), sb, 0.0f),
                           nullptr);
      kc::MergeArgs m;
      m.out = acc_out.get();
      m.lse = acc_lse.get();
      m.part_out = part_out.get();
      m.part_lse = part_lse.get();
      m.rows = c;
      m.heads = ring.q_heads;
      m.head_dim = D;
      kc::launch_merge_partials(m, nullptr);
      cuda_check(cudaDeviceSynchronize(), "ring round");
    }
    if (std::string(ring.layout) == "contiguous") CHECK(empty_rounds == 0);  // q device is last

    // Single-device attention of the same queries over the whole sequence.
    const Shape ref_shape{c, n_seq, ring.q_heads, ring.kv_heads, D};
    const auto mask = [&](int r, int p) {
      return pair_allowed(ring.rule, window, q_pos[static_cast<std::size_t>(r)], p, 0, 0);
    };
    const Attention ref =
        reference_attention(ref_shape, q.values, all.k.values, all.v.values, default_scale(block), mask);
    compare(block, ref, {acc_out.download(), acc_lse.download()});
  }
}

TEST_CASE("merge of partials: identity, weights and empty rows", "[kernels][cuda]") {
  const int rows = 3, heads = 1, D = 64;
  const float ninf = -std::numeric_limits<float>::infinity();
  std::vector<float> a_out(static_cast<std::size_t>(rows) * D), b_out(a_out.size());
  for (std::size_t i = 0; i < a_out.size(); ++i) {
    a_out[i] = static_cast<float>(i % 7) * 0.25f;
    b_out[i] = -static_cast<float>(i % 5) * 0.5f;
  }
  // Row 0: both empty. Row 1: only b. Row 2: both, lse 1 and 2.
  const std::vector<float> a_lse{ninf, ninf, 1.0f};
  const std::vector<float> b_lse{ninf, 0.5f, 2.0f};
  for (int d = 0; d < D; ++d) a_out[static_cast<std::size_t>(d)] = a_out[static_cast<std::size_t>(D + d)] = 0.0f;
  DeviceArray<float> out(a_out), lse(a_lse), pout(b_out), plse(b_lse);
  kc::MergeArgs m;
  m.out = out.get();
  m.lse = lse.get();
  m.part_out = pout.get();
  m.part_lse = plse.get();
  m.rows = rows;
  m.heads = heads;
  m.head_dim = D;
  kc::launch_merge_partials(m, nullptr);
  cuda_check(cudaDeviceSynchronize(), "merge");
  const std::vector<float> got = out.download();
  const std::vector<float> got_lse = lse.download();
  CHECK(std::isinf(got_lse[0]));
  CHECK(got_lse[1] == Approx(0.5f));
  const double wa = std::exp(1.0) / (std::exp(1.0) + std::exp(2.0));
  CHECK(got_lse[2] == Approx(std::log(std::exp(1.0) + std::exp(2.0))).epsilon(1e-6));
  for (int d = 0; d < D; ++d) {
    const auto i1 = static_cast<std::size_t>(D + d);
    const auto i2 = static_cast<std::size_t>(2 * D + d);
    CHECK(got[static_cast<std::size_t>(d)] == 0.0f);
    CHECK(got[i1] == Approx(b_out[i1]));
    CHECK(got[i2] == Approx(wa * a_out[i2] + (1 - wa) * b_out[i2]).margin(1e-6));
  }
}

TEST_CASE("launch_flash_fwd rejects unsupported arguments", "[kernels][cuda]") {
  TileSchedule s;
  s.rows = s.cols = 64;
  s.tile_q = s.tile_k = 64;
  s.q_pos = strided_positions(0, 1, 64);
  s.k_pos = strided_positions(0, 1, 64);
  s.set_items({{0, 0, TileKind::Causal, 0}});
  const kc::ScheduleBuffer sb(s);
  DeviceArray<std::uint16_t> q(64 * 2 * 128 + 8);
  DeviceArray<float> out(64 * 2 * 128), lse(64 * 2);
  const Shape sh{64, 64, 2, 1, 128};
  kc::FlashArgs a = make_args(sh, DType::BF16, q.get(), q.get(), q.get(), out.get(), lse.get(), sb, 0.0f);
  auto bad = a;
  bad.head_dim = 96;
  CHECK_THROWS_AS(kc::launch_flash_fwd(bad, nullptr), std::invalid_argument);
  bad = a;
  bad.kv_heads = 3;
  CHECK_THROWS_AS(kc::launch_flash_fwd(bad, nullptr), std::invalid_argument);
  bad = a;
  bad.k = q.get() + 1;  // 2 bytes off: cp.async needs 16
  CHECK_THROWS_AS(kc::launch_flash_fwd(bad, nullptr), std::invalid_argument);
  bad = a;
  bad.schedule = {};
  CHECK_THROWS_AS(kc::launch_flash_fwd(bad, nullptr), std::invalid_argument);
  CHECK_NOTHROW(kc::launch_flash_fwd(a, nullptr));
  cuda_check(cudaDeviceSynchronize(), "flash_fwd");
}
