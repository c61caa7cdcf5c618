// The CPU attention kernel on its own: the fp64 reference against hand-known answers, online
// accumulation against the reference, tile-size independence, the merge laws, and rows with
// no allowed key.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <stdexcept>

#include "kernels/reference/attention.hpp"
#include "kernels/reference/ring_emulation.hpp"
#include "kernel_test_util.hpp"
#include "models/workload/mask.hpp"

namespace rk = ringsim::kernels;
namespace rm = ringsim::models;
using rk::test::max_abs_diff;

namespace {

// fp32 kernel vs fp64 reference, inputs ~N(0, 1), D <= 64: rounding stays near 1e-7.
constexpr double kTolFp32 = 1e-5;
// fp64 kernel vs fp64 reference: only reassociation differs.
constexpr double kTolFp64 = 1e-12;

std::vector<std::int64_t> iota(std::int64_t n, std::int64_t start = 0) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), start);
  return p;
}

// One block holding the whole sequence, in token order.
template <class T>
rk::AttentionOutput<T> single_block(const rk::AttentionShape& s, const rk::test::Inputs& in, std::int64_t n,
                                    const rm::Mask& mask, rm::TileShape tile, rk::BlockStats* stats = nullptr) {
  const auto pos = iota(n);
  rk::Partial<T> p(s, n);
  const rk::BlockStats st = rk::accumulate_block(p, rk::QBlock{in.q, pos}, rk::KVBlock{in.k, in.v, pos}, mask, tile);
  if (stats) *stats = st;
  return p.finalize();
}

// Partial of all queries against the keys at `keys` (positions == token indices).
template <class T>
rk::Partial<T> partial_over(const rk::AttentionShape& s, const rk::test::Inputs& in, std::int64_t n,
                            const std::vector<std::int64_t>& keys, const rm::Mask& mask) {
  const auto qpos = iota(n);
  const auto k = rk::gather_rows(in.k, keys, s.kv_stride());
  const auto v = rk::gather_rows(in.v, keys, s.kv_stride());
  rk::Partial<T> p(s, n);
  (void)rk::accumulate_block(p, rk::QBlock{in.q, qpos}, rk::KVBlock{k, v, keys}, mask, rm::TileShape{8, 8});
  return p;
}

}  // namespace

TEST_CASE("reference attention: hand-known answers", "[kernels][reference]") {
  const rk::AttentionShape s{4, 2, 8};
  const std::int64_t n = 16;
  auto in = rk::test::random_inputs(s, n, 101);

  SECTION("causal: the first row attends only itself") {
    const auto causal = rm::make_causal();
    const auto ref = rk::reference_attention(s, in.q, in.k, in.v, *causal);
    for (std::int64_t h = 0; h < s.heads; ++h)
      for (std::int64_t d = 0; d < s.head_dim; ++d)
        CHECK(ref.out[static_cast<std::size_t>(h * s.head_dim + d)] ==
              Approx(in.v[static_cast<std::size_t>(s.kv_head(h) * s.head_dim + d)]).margin(1e-15));
  }
  SECTION("full mask, zero queries: the mean of V, lse = log n") {
    std::fill(in.q.begin(), in.q.end(), 0.0f);
    const auto full = rm::make_full();
    const auto ref = rk::reference_attention(s, in.q, in.k, in.v, *full);
    for (std::int64_t t = 0; t < n; ++t)
      for (std::int64_t h = 0; h < s.heads; ++h) {
        CHECK(ref.lse[static_cast<std::size_t>(t * s.heads + h)] == Approx(std::log(double(n))).margin(1e-14));
        for (std::int64_t d = 0; d < s.head_dim; ++d) {
          double mean = 0.0;
          for (std::int64_t p = 0; p < n; ++p)
            mean += in.v[static_cast<std::size_t>((p * s.kv_heads + s.kv_head(h)) * s.head_dim + d)];
          CHECK(ref.out[static_cast<std::size_t>((t * s.heads + h) * s.head_dim + d)] ==
                Approx(mean / double(n)).margin(1e-14));
        }
      }
  }
}

TEST_CASE("online accumulation equals the reference at every tile size", "[kernels][reference]") {
  double worst32 = 0.0;
  double worst_tiles32 = 0.0;
  const std::int64_t n = 96;
  const auto causal = rm::make_causal();
  const auto window = rm::make_window(13);
  const auto docs = rm::make_documents({0, 17, 40, 41, 77}, n);
  const rk::test::DropMask drop(n, 4, 0.6, 7);
  const rm::Mask* masks[] = {causal.get(), window.get(), docs.get(), &drop};
  const rk::AttentionShape shapes[] = {{4, 4, 16}, {4, 1, 32}, {4, 2, 64}};
  const rm::TileShape tiles[] = {{1, 1}, {3, 5}, {16, 16}, {7, 32}, {96, 96}, {128, 200}};
  std::uint64_t seed = 200;
  for (const auto& s : shapes) {
    const auto in = rk::test::random_inputs(s, n, seed += 3);
    for (const rm::Mask* mask : masks) {
      CAPTURE(s.heads, s.kv_heads, s.head_dim, mask->name());
      const auto ref = rk::reference_attention(s, in.q, in.k, in.v, *mask);
      rk::BlockStats first_stats;
      const auto first32 = single_block<float>(s, in, n, *mask, tiles[0], &first_stats);
      for (const auto tile : tiles) {
        CAPTURE(tile.q, tile.k);
        rk::BlockStats st;
        const auto o32 = single_block<float>(s, in, n, *mask, tile, &st);
        const auto o64 = single_block<double>(s, in, n, *mask, tile);
        const double e32 = max_abs_diff(o32.out, ref.out);
        CHECK(e32 <= kTolFp32);
        CHECK(max_abs_diff(o64.out, ref.out) <= kTolFp64);
        CHECK(rk::test::max_lse_diff(o64.lse, ref.lse) <= kTolFp64);
        CHECK(rk::test::max_lse_diff(o32.lse, ref.lse) <= kTolFp32);
        // Tiles change only where the running max is rescaled: fp32 rounding, far below the ref gap.
        const double et = max_abs_diff(o32.out, first32.out);
        CHECK(et <= 1e-6);
        CHECK(st.pairs_allowed == first_stats.pairs_allowed);
        worst32 = std::max(worst32, e32);
        worst_tiles32 = std::max(worst_tiles32, et);
      }
    }
  }
  std::printf("[kernels] single block, fp32 vs fp64 reference: max abs err %.3g (tol %.0e); "
              "fp32 across tile sizes: %.3g\n",
              worst32, kTolFp32, worst_tiles32);
}

TEST_CASE("tiles without an allowed pair are skipped", "[kernels][reference]") {
  const rk::AttentionShape s{2, 2, 8};
  const std::int64_t n = 64;
  const auto in = rk::test::random_inputs(s, n, 300);
  const auto causal = rm::make_causal();
  rk::BlockStats st;
  (void)single_block<float>(s, in, n, *causal, {16, 16}, &st);
  CHECK(st.tiles == 16);
  CHECK(st.tiles_visited == 10);  // the 4 x 4 tile grid's lower triangle with its diagonal
  CHECK(st.pairs_allowed == n * (n + 1) / 2);
}

TEST_CASE("merge is commutative and associative, and equals one pass over all keys", "[kernels][reference]") {
  const rk::AttentionShape s{4, 2, 32};
  const std::int64_t n = 80;
  const auto in = rk::test::random_inputs(s, n, 400);
  const auto causal = rm::make_causal();
  const rk::test::DropMask drop(n, 4, 0.5, 401);
  for (const rm::Mask* mask : {static_cast<const rm::Mask*>(causal.get()), static_cast<const rm::Mask*>(&drop)}) {
    CAPTURE(mask->name());
    // Keys dealt to three sets at random: each set is an arbitrary subset, as a ring block is.
    std::mt19937_64 rng(402);
    std::vector<std::int64_t> sets[3];
    for (std::int64_t t = 0; t < n; ++t) sets[rng() % 3].push_back(t);
    const auto a = partial_over<float>(s, in, n, sets[0], *mask);
    const auto b = partial_over<float>(s, in, n, sets[1], *mask);
    const auto c = partial_over<float>(s, in, n, sets[2], *mask);
    const auto all = partial_over<float>(s, in, n, iota(n), *mask).finalize();
    const auto ref = rk::reference_attention(s, in.q, in.k, in.v, *mask);

    const auto ab = rk::merge(a, b).finalize();
    const auto ba = rk::merge(b, a).finalize();
    CHECK(max_abs_diff(ab.out, ba.out) <= 1e-6);
    CHECK(rk::test::max_lse_diff(ab.lse, ba.lse) <= 1e-6);

    const auto ab_c = rk::merge(rk::merge(a, b), c).finalize();
    const auto a_bc = rk::merge(a, rk::merge(b, c)).finalize();
    const auto c_ab = rk::merge(c, rk::merge(a, b)).finalize();
    CHECK(max_abs_diff(ab_c.out, a_bc.out) <= 1e-6);
    CHECK(max_abs_diff(ab_c.out, c_ab.out) <= 1e-6);
    CHECK(rk::test::max_lse_diff(ab_c.lse, a_bc.lse) <= 1e-6);
    CHECK(max_abs_diff(ab_c.out, all.out) <= 1e-6);
    CHECK(max_abs_diff(ab_c.out, ref.out) <= kTolFp32);

    // An empty partial is the identity, exactly.
    const rk::Partial<float> empty(s, n);
    const auto ae = rk::merge(a, empty).finalize();
    const auto ea = rk::merge(empty, a).finalize();
    const auto a_only = a.finalize();
    CHECK(max_abs_diff(ae.out, a_only.out) == 0.0);
    CHECK(max_abs_diff(ea.out, a_only.out) == 0.0);
  }
}

TEST_CASE("rows without an allowed key give exact zeros, never NaN", "[kernels][reference]") {
  const rk::AttentionShape s{4, 2, 16};
  const std::int64_t n = 64;
  const auto in = rk::test::random_inputs(s, n, 500);
  const rk::test::DropMask drop(n, 4, 0.4, 501);
  const rk::test::NoneMask none;

  SECTION("sparse mask: the empty rows of each head") {
    const auto ref = rk::reference_attention(s, in.q, in.k, in.v, drop);
    const auto o32 = single_block<float>(s, in, n, drop, {8, 8});
    const auto o64 = single_block<double>(s, in, n, drop, {8, 8});
    std::int64_t empty_rows = 0;
    for (std::int64_t t = 0; t < n; ++t)
      for (std::int64_t h = 0; h < s.heads; ++h) {
        bool any = false;
        for (std::int64_t p = 0; p < n; ++p) any = any || drop.allowed(t, p, h);
        if (any) continue;
        ++empty_rows;
        const auto row = static_cast<std::size_t>(t * s.heads + h);
        CHECK(std::isinf(o32.lse[row]));
        CHECK(o32.lse[row] < 0);
        CHECK(std::isinf(ref.lse[row]));
        for (std::int64_t d = 0; d < s.head_dim; ++d) {
          const auto i = row * static_cast<std::size_t>(s.head_dim) + static_cast<std::size_t>(d);
          CHECK(o32.out[i] == 0.0f);
          CHECK(o64.out[i] == 0.0);
          CHECK(ref.out[i] == 0.0);
        }
      }
    CHECK(empty_rows > 10);  // the seed leaves plenty, so the check is not vacuous
    CHECK(rk::test::all_finite(o32.out));
    CHECK(max_abs_diff(o32.out, ref.out) <= kTolFp32);
  }
  SECTION("nothing allowed: all zeros, through merges too") {
    rk::Partial<float> a(s, n);
    const auto pos = iota(n);
    const auto st = rk::accumulate_block(a, rk::QBlock{in.q, pos}, rk::KVBlock{in.k, in.v, pos}, none, {16, 16});
    CHECK(st.tiles_visited == 0);
    const auto m = rk::merge(a, rk::Partial<float>(s, n)).finalize();
    CHECK(std::all_of(m.out.begin(), m.out.end(), [](float x) { return x == 0.0f; }));
    CHECK(std::all_of(m.lse.begin(), m.lse.end(), [](float x) { return std::isinf(x) && x < 0; }));
    const auto ref = rk::reference_attention(s, in.q, in.k, in.v, none);
    CHECK(std::all_of(ref.out.begin(), ref.out.end(), [](double x) { return x == 0.0; }));
  }
}

TEST_CASE("bad sizes are rejected", "[kernels][reference]") {
  CHECK_THROWS_AS((rk::AttentionShape{4, 3, 8}.validate()), std::invalid_argument);
  CHECK_THROWS_AS((rk::AttentionShape{0, 1, 8}.validate()), std::invalid_argument);
  const rk::AttentionShape s{2, 1, 4};
  const auto in = rk::test::random_inputs(s, 8, 600);
  const auto pos = iota(8);
  const auto causal = rm::make_causal();
  rk::Partial<float> p(s, 8);
  CHECK_THROWS_AS(rk::accumulate_block(p, rk::QBlock{in.q, pos}, rk::KVBlock{in.k, in.v, pos}, *causal, {0, 4}),
                  std::invalid_argument);
  const std::span<const std::int64_t> short_pos(pos.data(), 7);
  CHECK_THROWS_AS(rk::accumulate_block(p, rk::QBlock{in.q, short_pos}, rk::KVBlock{in.k, in.v, pos}, *causal, {4, 4}),
                  std::invalid_argument);
  CHECK_THROWS_AS(rk::accumulate_block(p, rk::QBlock{in.q, pos}, rk::KVBlock{in.k, in.v, short_pos}, *causal, {4, 4}),
                  std::invalid_argument);
  const rk::test::DropMask three_heads(8, 3, 0.5, 1);
  CHECK_THROWS_AS(rk::accumulate_block(p, rk::QBlock{in.q, pos}, rk::KVBlock{in.k, in.v, pos}, three_heads, {4, 4}),
                  std::invalid_argument);
  rk::Partial<float> other(s, 7);
  CHECK_THROWS_AS(p.merge(other), std::invalid_argument);
}
