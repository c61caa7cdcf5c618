// The brute-force oracle: every pair of every tile enumerated with mask.allowed(), compared with
// the closed-form counts, on random small cases of every layout x mask.
#include <algorithm>
#include <fstream>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

#include "models/io/error.hpp"
#include "models/workload/mask.hpp"
#include "models/workload/workload.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim::models;

namespace {

BlockStats brute_block(const Layout& l, const Mask& m, std::int64_t j, std::int64_t k, TileShape t) {
  BlockStats s;
  const std::int64_t c = l.block();
  for (std::int64_t qt = 0; qt * t.q < c; ++qt)
    for (std::int64_t kt = 0; kt * t.k < c; ++kt) {
      std::int64_t allowed = 0, area = 0;
      for (std::int64_t a = qt * t.q; a < std::min(c, (qt + 1) * t.q); ++a)
        for (std::int64_t b = kt * t.k; b < std::min(c, (kt + 1) * t.k); ++b) {
          ++area;
          allowed += m.allowed(l.token(j, a), l.token(k, b), 0);
        }
      ++s.tiles_total;
      s.allowed_pairs += allowed;
      if (allowed) {
        ++s.tiles_computed;
        ++s.tiles_visited;
        s.visited_area += area;
        if (allowed < area) {
          s.masked_area += area;
          ++s.tiles_masked;
        }
      } else {
        s.skipped_area += area;
      }
    }
  return s;
}

std::vector<Layout> layouts_for(std::int64_t n_seq, std::int64_t n, std::mt19937_64& rng) {
  const std::int64_t c = n_seq / n;
  std::vector<Layout> v{Layout::contiguous(n_seq, n), Layout::striped(n_seq, n)};
  if (c % 2 == 0) v.push_back(Layout::zigzag(n_seq, n));
  for (std::int64_t w : {2, 3, 4, 5})
    if (c % w == 0 && w < c) v.push_back(Layout::block_cyclic(n_seq, n, w));
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n_seq));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  v.push_back(Layout::permutation(perm, n));
  return v;
}

std::vector<std::unique_ptr<Mask>> masks_for(std::int64_t n_seq, std::mt19937_64& rng) {
  std::vector<std::unique_ptr<Mask>> v;
  v.push_back(make_causal());
  v.push_back(make_full());
  v.push_back(make_window(1));
  v.push_back(make_window(1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n_seq))));
  std::vector<std::int64_t> starts{0};
  for (std::int64_t p = 1; p < n_seq; ++p)
    if (rng() % 5 == 0) starts.push_back(p);
  v.push_back(make_documents(starts, n_seq));
  return v;
}

}  // namespace

TEST_CASE("count_pairs_le equals brute force on random progressions", "[mask]") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 20000; ++trial) {
    auto rnd = [&](std::int64_t lo, std::int64_t hi) {
      return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
    };
    const Progression a{rnd(0, 60), rnd(1, 9), rnd(0, 12)};
    const Progression b{rnd(0, 60), rnd(1, 9), rnd(0, 12)};
    const std::int64_t off = rnd(-30, 30);
    std::int64_t want = 0;
    for (std::int64_t i = 0; i < a.count; ++i)
      for (std::int64_t j = 0; j < b.count; ++j) want += (b.start + j * b.stride <= a.start + i * a.stride + off);
    REQUIRE(count_pairs_le(a, b, off) == want);
  }
}

TEST_CASE("fast per-tile counts equal brute force for every layout x mask", "[workload][oracle]") {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 14; ++trial) {
    const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 5);
    const std::int64_t c = 2 * (1 + static_cast<std::int64_t>(rng() % 10));
    const std::int64_t n_seq = n * c;
    const TileShape tile{1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c)),
                         1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c))};
    for (const auto& l : layouts_for(n_seq, n, rng)) {
      for (const auto& m : masks_for(n_seq, rng)) {
        const Workload w(l, *m, tile, 0);
        for (std::int64_t i = 0; i < n; ++i) {
          for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t k = Workload::kv_block_of(j, i, n);
            INFO(l.name() << " " << m->name() << " n=" << n << " c=" << c << " tile=" << tile.q << "x" << tile.k
                          << " round=" << i << " device=" << j);
            const auto want = brute_block(l, *m, j, k, tile);
            REQUIRE(Workload::count_block(l, *m, j, k, tile) == want);
            REQUIRE(Workload::count_block_by_tiles(l, *m, j, k, tile) == want);
            REQUIRE(w.block(i, j) == want);  // memoised class path
          }
          // The per-round summary agrees with the devices it summarises.
          const auto r = w.round_summary(i);
          std::int64_t mx = 0, sum = 0;
          for (std::int64_t j = 0; j < n; ++j) {
            mx = std::max(mx, w.block(i, j).visited_area);
            sum += w.block(i, j).visited_area;
          }
          REQUIRE(r.max_visited_area == mx);
          REQUIRE(r.sum_visited_area == sum);
          REQUIRE(r.max_block.visited_area == mx);
        }
      }
    }
  }
}

TEST_CASE("striped gives every device c(c+1)/2 or c(c-1)/2 allowed pairs in every round", "[workload]") {
  const auto mask = make_causal();
  for (std::int64_t n : {2, 4, 7, 16, 64}) {
    for (std::int64_t c : {1, 2, 5, 64, 1000}) {
      const auto l = Layout::striped(n * c, n);
      const Workload w(l, *mask, {std::min<std::int64_t>(c, 16), std::min<std::int64_t>(c, 16)}, 0);
      for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          const std::int64_t k = Workload::kv_block_of(j, i, n);
          const std::int64_t want = j >= k ? c * (c + 1) / 2 : c * (c - 1) / 2;
          REQUIRE(w.block(i, j).allowed_pairs == want);
        }
    }
  }
}

TEST_CASE("counts stay exact at 10M tokens and 65536 devices (no overflow)", "[workload]") {
  const auto mask = make_causal();
  const std::int64_t n = 65536, c = 152;  // n_seq = 9,961,472
  const auto l = Layout::striped(n * c, n);
  const Workload w(l, *mask, {8, 8}, 0);
  const auto t = w.totals();
  // All pairs p <= q of the whole sequence, each counted once.
  const std::int64_t n_seq = n * c;
  REQUIRE(t.allowed_pairs == n_seq * (n_seq + 1) / 2);
  const auto lc = Layout::contiguous(n * c, n);
  const Workload wc(lc, *mask, {8, 8}, 0);
  REQUIRE(wc.totals().allowed_pairs == n_seq * (n_seq + 1) / 2);
}

TEST_CASE("every allowed pair is computed exactly once around the ring", "[workload]") {
  std::mt19937_64 rng(5);
  for (std::int64_t n : {2, 3, 8}) {
    const std::int64_t c = 12, n_seq = n * c;
    for (const auto& l : layouts_for(n_seq, n, rng)) {
      for (const auto& m : masks_for(n_seq, rng)) {
        const Workload w(l, *m, {5, 7}, 0);
        std::int64_t want = 0;
        for (std::int64_t q = 0; q < n_seq; ++q)
          for (std::int64_t p = 0; p < n_seq; ++p) want += m->allowed(q, p, 0);
        REQUIRE(w.totals().allowed_pairs == want);
      }
    }
  }
}

TEST_CASE("masks reject bad specs", "[mask][errors]") {
  CHECK_THROWS_AS(make_mask(MaskSpec::parse("diagonal"), 16), InputError);
  CHECK_THROWS_AS(make_mask(MaskSpec::parse("window:0"), 16), InputError);
  CHECK_THROWS_AS(make_mask(MaskSpec::parse("window:-3"), 16), InputError);
  CHECK_THROWS_AS(make_mask(MaskSpec::parse("docs:/nonexistent"), 16), InputError);
  CHECK_THROWS_AS(make_documents({0, 5, 3}, 16), InputError);
  CHECK_THROWS_AS(make_documents({0, 20}, 16), InputError);
  const ringsim::test::TempDir tmp;
  const std::string path = tmp.write("docs.txt", "# starts\n0 4\n9 8\n");
  try {
    (void)make_mask(MaskSpec::parse("docs:" + path), 16);
    FAIL("unsorted document starts accepted");
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.line() == 3);
  }
  CHECK_THROWS_AS(check_tile({0, 4}, 16), InputError);
  CHECK_THROWS_AS(check_tile({32, 4}, 16), InputError);
}
