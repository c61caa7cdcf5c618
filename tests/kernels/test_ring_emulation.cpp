// Ring emulation == single-device attention, for every layout, mask, ring size and head
// grouping: the exactness bar of shared/design.md. Also: the tiles the emulated kernel visits
// are the ones Mask::visit_block (what the workload model counts) says it visits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_util.hpp"
#include "kernels/reference/ring_emulation.hpp"
#include "models/workload/balanced_layout.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"
#include "models/workload/sparse_gen.hpp"
#include "models/workload/sparse_mask.hpp"

namespace rk = ringsim::kernels;
namespace rm = ringsim::models;
using rk::test::max_abs_diff;
using rk::test::max_lse_diff;

namespace {

// Tolerances, as max abs error over every output value. Inputs ~N(0, 1), D <= 64, scale
// 1/sqrt(D): fp32 rounding of the dot products and the rescaled sums stays near 1e-7, so
// 1e-5 leaves room without hiding a wrong block or a lost rescale (those are O(0.1)).
constexpr double kTolFp32 = 1e-5;
constexpr double kTolFp64 = 1e-12;

std::vector<std::int64_t> random_permutation(std::int64_t n, std::uint64_t seed) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::mt19937_64 rng(seed);  // Fisher-Yates on raw draws: the same permutation on every platform
  for (std::size_t i = p.size(); i > 1; --i) std::swap(p[i - 1], p[rng() % i]);
  return p;
}

// Every layout the project knows, for n_seq over n_dev; widths that do not divide the block
// are left out (the factory would reject them).
std::vector<rm::Layout> all_layouts(std::int64_t n_seq, std::int64_t n_dev) {
  std::vector<rm::Layout> ls{rm::Layout::contiguous(n_seq, n_dev), rm::Layout::striped(n_seq, n_dev)};
  if ((n_seq / n_dev) % 2 == 0) ls.push_back(rm::Layout::zigzag(n_seq, n_dev));
  for (std::int64_t w : {2, 3, 6})
    if ((n_seq / n_dev) % w == 0) ls.push_back(rm::Layout::block_cyclic(n_seq, n_dev, w));
  ls.push_back(rm::Layout::permutation(random_permutation(n_seq, 1000 + static_cast<std::uint64_t>(n_dev)), n_dev,
                                       "random-perm"));
  return ls;
}

struct MaskSet {
  std::vector<std::unique_ptr<rm::Mask>> owned;
  std::vector<const rm::Mask*> all;
  std::vector<const rm::Mask*> structured;  // head-independent: visit_block counts them
};

MaskSet all_masks(std::int64_t n_seq, std::int64_t heads) {
  MaskSet m;
  m.owned.push_back(rm::make_causal());
  m.owned.push_back(rm::make_full());
  m.owned.push_back(rm::make_window(21));
  // Uneven documents, one of a single token, so blocks cut through document boundaries.
  m.owned.push_back(rm::make_documents({0, n_seq / 5, n_seq / 5 + 1, n_seq / 2, n_seq - 33}, n_seq));
  for (const auto& p : m.owned) m.structured.push_back(p.get());
  m.owned.push_back(std::make_unique<rk::test::DropMask>(n_seq, heads, 0.7, 77));
  for (const auto& p : m.owned) m.all.push_back(p.get());
  return m;
}

}  // namespace

TEST_CASE("ring emulation equals single-device attention for every layout and mask", "[kernels][ring]") {
  const std::int64_t n_seq = 144;  // divisible by 2N for every N below, and by each stripe width
  const std::int64_t n_devs[] = {1, 2, 3, 4, 6, 8};
  // Non-GQA, GQA and MQA; every layout meets every shape across the ring sizes.
  const rk::AttentionShape shapes[] = {{4, 4, 16}, {4, 2, 16}, {4, 1, 24}};
  const rm::TileShape tiles[] = {{16, 16}, {5, 7}, {32, 8}};
  const MaskSet masks = all_masks(n_seq, 4);

  std::vector<rk::test::Inputs> inputs;
  std::vector<std::vector<rk::AttentionOutput<double>>> refs;  // [shape][mask]
  for (std::size_t si = 0; si < std::size(shapes); ++si) {
    inputs.push_back(rk::test::random_inputs(shapes[si], n_seq, 2000 + 10 * si));
    refs.emplace_back();
    for (const rm::Mask* mask : masks.all)
      refs.back().push_back(rk::reference_attention(shapes[si], inputs[si].q, inputs[si].k, inputs[si].v, *mask));
  }

  double worst32 = 0.0, worst64 = 0.0, worst_lse32 = 0.0;
  int runs = 0;
  for (std::size_t ni = 0; ni < std::size(n_devs); ++ni) {
    const auto layouts = all_layouts(n_seq, n_devs[ni]);
    for (std::size_t li = 0; li < layouts.size(); ++li) {
      for (std::size_t mi = 0; mi < masks.all.size(); ++mi) {
        const std::size_t si = (ni + li + mi) % std::size(shapes);
        const auto& s = shapes[si];
        const auto& in = inputs[si];
        const auto& ref = refs[si][mi];
        rk::RingOptions opt;
        opt.tile = tiles[(ni + 2 * li + mi) % std::size(tiles)];
        opt.accumulation = (li + mi) % 2 == 0 ? rk::Accumulation::Online : rk::Accumulation::MergeBlocks;
        CAPTURE(layouts[li].name(), n_devs[ni], masks.all[mi]->name(), s.heads, s.kv_heads, s.head_dim, opt.tile.q,
                opt.tile.k, opt.accumulation == rk::Accumulation::Online);

        const auto r32 = rk::ring_attention<float>(layouts[li], s, in.q, in.k, in.v, *masks.all[mi], opt);
        const auto r64 = rk::ring_attention<double>(layouts[li], s, in.q, in.k, in.v, *masks.all[mi], opt);
        const double e32 = max_abs_diff(r32.output.out, ref.out);
        const double e64 = max_abs_diff(r64.output.out, ref.out);
        const double l32 = max_lse_diff(r32.output.lse, ref.lse);
        CHECK(e32 <= kTolFp32);
        CHECK(e64 <= kTolFp64);
        CHECK(l32 <= kTolFp32);
        CHECK(max_lse_diff(r64.output.lse, ref.lse) <= kTolFp64);
        CHECK(rk::test::all_finite(r32.output.out));
        worst32 = std::max(worst32, e32);
        worst64 = std::max(worst64, e64);
        worst_lse32 = std::max(worst_lse32, l32);
        ++runs;
      }
    }
  }
  CHECK(runs >= 150);
  std::printf("[kernels] ring vs single-device, %d runs: max abs err fp32 %.3g (tol %.0e), fp64 %.3g (tol %.0e), "
              "lse fp32 %.3g\n",
              runs, worst32, kTolFp32, worst64, kTolFp64, worst_lse32);
}

TEST_CASE("ring emulation is exact on the mask-derived layouts of a hash mask", "[kernels][ring]") {
  // bucket-striped and bucket-rotated are derived from the mask's buckets; each must still be a
  // plain token permutation to the ring, whatever the buckets are.
  const std::int64_t n_seq = 96;
  const rk::AttentionShape s{4, 2, 16};
  const auto in = rk::test::random_inputs(s, n_seq, 6000);
  const rm::HashMask mask(rm::random_buckets(n_seq, s.heads, 5, 1.2, 61), n_seq);
  const auto ref = rk::reference_attention(s, in.q, in.k, in.v, mask);
  for (const std::int64_t n_dev : {2, 3, 4, 8}) {
    for (const char* spec : {"bucket-striped", "bucket-rotated"}) {
      const auto layout = rm::mask_layout(rm::LayoutSpec::parse(spec), mask, n_seq, n_dev);
      CAPTURE(n_dev, spec);
      const auto r = rk::ring_attention<double>(layout, s, in.q, in.k, in.v, mask, {{5, 7}, rk::Accumulation::Online});
      CHECK(max_abs_diff(r.output.out, ref.out) <= kTolFp64);
      CHECK(max_lse_diff(r.output.lse, ref.lse) <= kTolFp64);
    }
  }
}

TEST_CASE("ring emulation at a realistic head size", "[kernels][ring]") {
  const std::int64_t n_seq = 512;
  const rk::AttentionShape s{4, 1, 64};
  const auto in = rk::test::random_inputs(s, n_seq, 3000);
  const auto causal = rm::make_causal();
  const auto ref = rk::reference_attention(s, in.q, in.k, in.v, *causal);
  double worst = 0.0;
  for (const auto& layout : {rm::Layout::zigzag(n_seq, 8), rm::Layout::striped(n_seq, 4)}) {
    CAPTURE(layout.name(), layout.n_dev());
    const auto r = rk::ring_attention<float>(layout, s, in.q, in.k, in.v, *causal, {{64, 64}, rk::Accumulation::Online});
    const double e = max_abs_diff(r.output.out, ref.out);
    CHECK(e <= kTolFp32);
    worst = std::max(worst, e);
  }
  std::printf("[kernels] ring vs single-device, n_seq 512, D 64: max abs err fp32 %.3g (tol %.0e)\n", worst,
              kTolFp32);
}

TEST_CASE("tile size does not change the ring's result", "[kernels][ring]") {
  const std::int64_t n_seq = 96;
  const rk::AttentionShape s{2, 1, 32};
  const auto in = rk::test::random_inputs(s, n_seq, 4000);
  const auto window = rm::make_window(30);
  const auto layout = rm::Layout::zigzag(n_seq, 4);
  const auto base = rk::ring_attention<float>(layout, s, in.q, in.k, in.v, *window, {{1, 1}, rk::Accumulation::Online});
  for (const rm::TileShape tile : {rm::TileShape{3, 3}, rm::TileShape{12, 5}, rm::TileShape{24, 24},
                                   rm::TileShape{100, 100}}) {
    CAPTURE(tile.q, tile.k);
    const auto r = rk::ring_attention<float>(layout, s, in.q, in.k, in.v, *window, {tile, rk::Accumulation::Online});
    CHECK(max_abs_diff(r.output.out, base.output.out) <= 1e-6);
  }
}

TEST_CASE("the emulated kernel visits exactly the tiles Mask::visit_block counts", "[kernels][ring]") {
  const std::int64_t n_seq = 96;
  const rk::AttentionShape s{1, 1, 2};  // the arithmetic is irrelevant here, only the tiles
  const auto in = rk::test::random_inputs(s, n_seq, 5000);
  const MaskSet masks = all_masks(n_seq, 1);
  for (const std::int64_t n_dev : {2, 4, 8}) {
    for (const auto& layout : all_layouts(n_seq, n_dev)) {
      for (const rm::Mask* mask : masks.structured) {
        std::int64_t total_pairs = 0;
        for (const rm::TileShape tile : {rm::TileShape{4, 4}, rm::TileShape{5, 3}}) {
          CAPTURE(layout.name(), n_dev, mask->name(), tile.q, tile.k);
          const auto r = rk::ring_attention<float>(layout, s, in.q, in.k, in.v, *mask, {tile, rk::Accumulation::Online});
          total_pairs = 0;
          for (std::int64_t round = 0; round < n_dev; ++round)
            for (std::int64_t j = 0; j < n_dev; ++j) {
              const std::int64_t kb = ((j - round) % n_dev + n_dev) % n_dev;
              rk::BlockStats want;
              mask->visit_block(layout, j, kb, tile, 0, [&](const rm::TileCount& t) {
                ++want.tiles;
                want.tiles_visited += t.visited ? 1 : 0;
                want.pairs_allowed += t.allowed;
              });
              const auto& got = r.stats[static_cast<std::size_t>(round * n_dev + j)];
              CAPTURE(round, j);
              CHECK(got == want);
              total_pairs += got.pairs_allowed;
            }
        }
        // Every allowed pair is met exactly once around the ring.
        std::int64_t brute = 0;
        for (std::int64_t q = 0; q < n_seq; ++q)
          for (std::int64_t p = 0; p < n_seq; ++p) brute += mask->allowed(q, p, 0) ? 1 : 0;
        CHECK(total_pairs == brute);
      }
    }
  }
}

TEST_CASE("ring emulation rejects inputs of the wrong size", "[kernels][ring]") {
  const rk::AttentionShape s{2, 2, 4};
  const auto in = rk::test::random_inputs(s, 16, 6000);
  const auto causal = rm::make_causal();
  const auto layout = rm::Layout::striped(32, 4);  // 32 tokens, but the inputs hold 16
  CHECK_THROWS_AS(rk::ring_attention<float>(layout, s, in.q, in.k, in.v, *causal), std::invalid_argument);
}
