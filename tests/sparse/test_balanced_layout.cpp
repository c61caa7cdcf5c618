// The mask-derived layouts (models/workload/balanced_layout.hpp). bucket-striped: a permutation that keeps
// striped's one-token-per-row structure, equals striped when there is nothing to balance,
// equalises per-device bucket counts, and lowers the ring's per-round maximum of visited tiles.
// bucket-rotated: a permutation with exact block sizes that lets SCFA's causal trim work, which
// cuts the per-round maximum well below contiguous and striped for one head's buckets.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "models/workload/balanced_layout.hpp"
#include "models/io/error.hpp"
#include "models/workload/sparse_gen.hpp"
#include "models/workload/sparse_mask.hpp"
#include "models/workload/workload.hpp"

using namespace ringsim;
using models::Layout;

namespace {

// Largest minus smallest per-device count of any (feature, group): 0 is perfect balance.
std::int64_t worst_spread(const models::TokenGroups& tg, const Layout& layout) {
  std::int64_t worst = 0;
  for (std::size_t f = 0; f < tg.groups.size(); ++f) {
    const auto groups = tg.n_groups[f];
    std::vector<std::int64_t> count(static_cast<std::size_t>(groups * layout.n_dev()), 0);
    for (std::int64_t t = 0; t < layout.n_seq(); ++t)
      ++count[static_cast<std::size_t>(tg.groups[f][static_cast<std::size_t>(t)] * layout.n_dev() +
                                       layout.place(t).device)];
    for (std::int64_t g = 0; g < groups; ++g) {
      const auto first = count.begin() + g * layout.n_dev();
      const auto [lo, hi] = std::minmax_element(first, first + layout.n_dev());
      worst = std::max(worst, *hi - *lo);
    }
  }
  return worst;
}

// Sum over rounds of the busiest device's visited tiles (all heads): what the ring waits for.
std::int64_t sum_round_max_tiles(const Layout& layout, const models::Mask& mask, models::TileShape tile) {
  const models::Workload w(layout, mask, tile, 0);
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < w.rounds(); ++i) total += w.round_summary(i).max_tiles_visited;
  return total;
}

// Every token on exactly one (device, local index), and place() the inverse of token();
// `order` checks each device's local order.
template <class Order>
void check_permutation(const Layout& layout, std::int64_t n_seq, std::int64_t n_dev, Order order) {
  std::vector<int> seen(static_cast<std::size_t>(n_seq), 0);
  for (std::int64_t d = 0; d < n_dev; ++d)
    for (std::int64_t l = 0; l < layout.block(); ++l) {
      const std::int64_t t = layout.token(d, l);
      REQUIRE(t >= 0);
      REQUIRE(t < n_seq);
      ++seen[static_cast<std::size_t>(t)];
      order(d, l, t);
      CHECK(layout.place(t) == models::Placement{d, l});
    }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int x) { return x == 1; }));
}

}  // namespace

TEST_CASE("bucket-striped is a permutation with one token of every stripe row per device", "[sparse][balanced]") {
  for (const std::int64_t n_dev : {1, 2, 3, 5, 8}) {
    for (const std::int64_t nb : {1, 3, 16}) {
      const std::int64_t n_seq = n_dev * 24;
      const models::HashMask mask(models::random_buckets(n_seq, 3, nb, 1.2, 40 + n_dev + nb), n_seq);
      const auto layout = models::bucket_striped(models::token_groups(mask, n_seq), n_seq, n_dev);
      CAPTURE(n_dev, nb);
      CHECK(layout.kind() == models::LayoutKind::Permutation);
      CHECK(layout.name() == "bucket-striped");
      // Local index l holds a token of stripe row l, so positions increase with l.
      check_permutation(layout, n_seq, n_dev, [&](std::int64_t, std::int64_t l, std::int64_t t) { CHECK(t / n_dev == l); });
    }
  }
}

TEST_CASE("bucket-striped is striped when there is nothing to balance", "[sparse][balanced]") {
  const std::int64_t n_seq = 60;
  models::BucketIds one;
  one.q.assign(2, std::vector<std::int64_t>(static_cast<std::size_t>(n_seq), 4));
  one.k = one.q;
  const models::HashMask mask(one, n_seq);
  const auto layout = models::bucket_striped(models::token_groups(mask, n_seq), n_seq, 6);
  const auto striped = Layout::striped(n_seq, 6);
  for (std::int64_t t = 0; t < n_seq; ++t) CHECK(layout.place(t) == striped.place(t));
}

TEST_CASE("bucket-striped equalises per-device bucket counts better than striped", "[sparse][balanced]") {
  const std::int64_t n_dev = 8;
  const std::int64_t n_seq = n_dev * 512;
  for (const double zipf : {0.0, 1.5}) {
    const models::HashMask mask(models::random_buckets(n_seq, 1, 8, zipf, 9), n_seq);
    const auto tg = models::token_groups(mask, n_seq);
    REQUIRE(tg.groups.size() == 2);  // one head: its query and its key buckets
    const auto balanced = worst_spread(tg, models::bucket_striped(tg, n_seq, n_dev));
    const auto striped = worst_spread(tg, Layout::striped(n_seq, n_dev));
    CAPTURE(zipf, balanced, striped);
    // Query and key buckets are independent, so both cannot be exact at once; the greedy deal
    // keeps the spread to a few tokens while random striping drifts like sqrt(count).
    CHECK(balanced <= 4);
    CHECK(balanced * 3 <= striped);
  }
}

TEST_CASE("bucket-striped lowers the per-round maximum of visited tiles vs striped", "[sparse][balanced]") {
  const std::int64_t n_dev = 8;
  const std::int64_t n_seq = n_dev * 1024;
  const models::TileShape tile{32, 32};

  SECTION("skewed random buckets (Zipf 1.5), several heads") {
    double ratio_sum = 0;
    int trials = 0;
    for (const std::uint64_t seed : {1, 2, 3}) {
      const models::HashMask mask(models::random_buckets(n_seq, 4, 16, 1.5, seed), n_seq);
      const auto balanced = models::bucket_striped(models::token_groups(mask, n_seq), n_seq, n_dev);
      const auto b = sum_round_max_tiles(balanced, mask, tile);
      const auto s = sum_round_max_tiles(Layout::striped(n_seq, n_dev), mask, tile);
      CAPTURE(seed, b, s);
      ratio_sum += static_cast<double>(b) / static_cast<double>(s);
      ++trials;
    }
    // Striped is already balanced in expectation here, and the round maximum is mostly whole
    // bucket squares plus tiles straddling bucket ends (docs/sparse-ring-study.md), so the gain
    // is small and one seed may lose: the mean over seeds must still be a gain.
    const double ratio = ratio_sum / trials;
    CHECK(ratio < 1.0);
    std::printf("[sparse] bucket-striped / striped, sum of per-round max visited tiles, zipf 1.5: %.4f\n", ratio);
  }

  SECTION("a bucket that follows the stripe period") {
    // Every token at a multiple of N falls in bucket 0, the rest in bucket 1 (queries and
    // keys). Striped puts all of bucket 0 on device 0: in every round i > 0, device 0 and
    // device i meet a block of the other bucket and idle, while the other N - 2 devices do a
    // whole half block; bucket-striped gives every device c/N tokens of bucket 0, so all N
    // share the round's work, (1/N^2 + (N-1)^2/N^2) of a half block each.
    models::BucketIds ids;
    ids.q.assign(1, std::vector<std::int64_t>(static_cast<std::size_t>(n_seq)));
    for (std::int64_t t = 0; t < n_seq; ++t) ids.q[0][static_cast<std::size_t>(t)] = t % n_dev == 0 ? 0 : 1;
    ids.k = ids.q;
    const models::HashMask mask(ids, n_seq);
    const auto balanced = models::bucket_striped(models::token_groups(mask, n_seq), n_seq, n_dev);
    const auto b = sum_round_max_tiles(balanced, mask, tile);
    const auto s = sum_round_max_tiles(Layout::striped(n_seq, n_dev), mask, tile);
    CAPTURE(b, s);
    CHECK(static_cast<double>(b) < 0.9 * static_cast<double>(s));
    std::printf("[sparse] bucket-striped / striped, sum of per-round max visited tiles, periodic buckets: %.4f\n",
                static_cast<double>(b) / static_cast<double>(s));
  }
}

TEST_CASE("bucket-rotated is a permutation of exact blocks in position order", "[sparse][balanced]") {
  for (const std::int64_t n_dev : {1, 2, 3, 5, 8}) {
    for (const double zipf : {0.0, 2.0}) {
      const std::int64_t n_seq = n_dev * 40;
      const models::HashMask mask(models::random_buckets(n_seq, 2, 7, zipf, 70 + n_dev), n_seq);
      const auto layout = models::mask_layout(models::LayoutSpec::parse("bucket-rotated"), mask, n_seq, n_dev);
      CAPTURE(n_dev, zipf);
      CHECK(layout.name() == "bucket-rotated");
      check_permutation(layout, n_seq, n_dev, [&](std::int64_t d, std::int64_t l, std::int64_t t) {
        if (l > 0) CHECK(layout.token(d, l - 1) < t);
      });
    }
  }
}

TEST_CASE("bucket-rotated cuts the per-round maximum of one head's visited tiles", "[sparse][balanced]") {
  // One head, independent uniform query and key buckets: contiguous and striped both leave a
  // device with whole bucket squares in every round; bucket-rotated trims most of them.
  const std::int64_t n_dev = 8;
  const std::int64_t n_seq = n_dev * 2048;
  const models::TileShape tile{32, 32};
  const models::HashMask mask(models::random_buckets(n_seq, 1, 8, 0.0, 5), n_seq);
  const auto rotated = models::mask_layout(models::LayoutSpec::parse("bucket-rotated"), mask, n_seq, n_dev);
  const auto r = sum_round_max_tiles(rotated, mask, tile);
  const auto c = sum_round_max_tiles(Layout::contiguous(n_seq, n_dev), mask, tile);
  const auto s = sum_round_max_tiles(Layout::striped(n_seq, n_dev), mask, tile);
  CAPTURE(r, c, s);
  const double vs_contiguous = static_cast<double>(r) / static_cast<double>(c);
  const double vs_striped = static_cast<double>(r) / static_cast<double>(s);
  CHECK(vs_contiguous < 0.85);
  CHECK(vs_striped < 0.85);
  std::printf("[sparse] bucket-rotated sum of per-round max visited tiles / contiguous %.4f, / striped %.4f\n",
              vs_contiguous, vs_striped);
}

TEST_CASE("bucket-striped needs an index-based mask", "[sparse][balanced][errors]") {
  const auto causal = models::make_causal();
  try {
    (void)models::mask_layout(models::LayoutSpec::parse("bucket-striped"), *causal, 64, 4);
    FAIL("no error");
  } catch (const models::InputError& e) {
    CHECK(e.field() == "layout");
    CHECK(e.message().find("causal") != std::string::npos);
  }
  // Query/key dropping balances the kept tokens.
  const models::QKDropMask qk(models::random_kept(64, 2, 0.5, 3), 64);
  const auto layout = models::mask_layout(models::LayoutSpec::parse("bucket-striped"), qk, 64, 4);
  CHECK(layout.n_dev() == 4);
  CHECK(worst_spread(models::token_groups(qk, 64), layout) <= 4);
  CHECK_THROWS_AS(models::mask_layout(models::LayoutSpec::parse("bucket-striped"), qk, 64, 5), models::InputError);
  CHECK_THROWS_AS(models::mask_layout(models::LayoutSpec::parse("bucket-rotated"), *causal, 64, 4), models::InputError);
  CHECK_THROWS_AS(models::mask_layout(models::LayoutSpec::parse("bucket-rotated"), qk, 64, 4), models::InputError);
  const models::HashMask hash(models::random_buckets(64, 1, 4, 0.0, 3), 64);
  CHECK_THROWS_AS(models::mask_layout(models::LayoutSpec::parse("bucket-rotated"), hash, 64, 5), models::InputError);
}
