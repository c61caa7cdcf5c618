// Fast per-tile counts of the index-based masks against the brute-force oracle, and their
// reduction to the causal mask.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>

#include "models/workload/balanced_layout.hpp"
#include "models/io/error.hpp"
#include "models/workload/sparse_gen.hpp"
#include "models/workload/sparse_mask.hpp"
#include "models/workload/sparse_rows_cache.hpp"
#include "models/workload/workload.hpp"
#include "oracle.hpp"

using namespace ringsim;
using models::Layout;
using models::TileShape;

namespace {

struct Case {
  std::int64_t n_dev;
  std::int64_t block;
};

// Every layout factory that accepts (n_seq, n_dev), plus a random permutation (local order is
// then not position order, which SCFA's compaction must sort out).
std::vector<Layout> layouts_for(const Case& c, std::uint64_t seed) {
  const std::int64_t n_seq = c.n_dev * c.block;
  std::vector<Layout> out{Layout::contiguous(n_seq, c.n_dev), Layout::striped(n_seq, c.n_dev)};
  if (c.block % 2 == 0) out.push_back(Layout::zigzag(n_seq, c.n_dev));
  for (const std::int64_t w : {2, 3})
    if (c.block % w == 0 && w < c.block) out.push_back(Layout::block_cyclic(n_seq, c.n_dev, w));
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n_seq));
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  out.push_back(Layout::permutation(perm, c.n_dev));
  return out;
}

const std::vector<Case> kCases{{1, 12}, {2, 12}, {3, 10}, {4, 8}, {4, 30}, {5, 6}};

std::vector<TileShape> tiles_for(std::int64_t block) {
  return {{1, 1}, {3, 5}, {4, 4}, {7, 2}, {16, 16}, {block, block}, {block + 3, 2}};
}

template <class M>
void check_against_oracle(const M& mask, const Layout& layout, test::Rule rule) {
  for (const auto tile : tiles_for(layout.block())) {
    for (std::int64_t head = 0; head < mask.heads(); ++head) {
      for (std::int64_t qd = 0; qd < layout.n_dev(); ++qd) {
        const auto q_rows = test::oracle_rows(mask, layout, qd, head, true);
        for (std::int64_t kd = 0; kd < layout.n_dev(); ++kd) {
          const auto k_rows = test::oracle_rows(mask, layout, kd, head, false);
          const auto expected = test::oracle_tiles(mask, q_rows, k_rows, tile, head, rule);
          const auto got = test::fast_tiles(mask, layout, qd, kd, tile, head);
          INFO(mask.name() << " layout " << layout.name() << " N=" << layout.n_dev() << " c=" << layout.block()
                           << " tile " << tile.q << "x" << tile.k << " head " << head << " block (" << qd << ", "
                           << kd << ")");
          REQUIRE(got.size() == expected.size());
          for (std::size_t i = 0; i < got.size(); ++i) {
            INFO("tile (" << expected[i].q_tile << ", " << expected[i].k_tile << ") expected allowed "
                          << expected[i].allowed << " visited " << expected[i].visited << ", got "
                          << got[i].allowed << " " << got[i].visited);
            REQUIRE(test::same(got[i], expected[i]));
            // The kernel never skips a tile that holds an allowed pair.
            REQUIRE((expected[i].allowed == 0 || expected[i].visited));
          }
        }
      }
    }
  }
}

// Tile sequences of two masks over the same block, compared field by field.
void require_same_tiles(const models::Mask& a, const models::Mask& b, const Layout& layout, TileShape tile,
                        std::int64_t head_b) {
  for (std::int64_t qd = 0; qd < layout.n_dev(); ++qd) {
    for (std::int64_t kd = 0; kd < layout.n_dev(); ++kd) {
      const auto ta = test::fast_tiles(a, layout, qd, kd, tile, 0);
      const auto tb = test::fast_tiles(b, layout, qd, kd, tile, head_b);
      INFO(layout.name() << " tile " << tile.q << "x" << tile.k << " block (" << qd << ", " << kd << ")");
      REQUIRE(ta.size() == tb.size());
      for (std::size_t i = 0; i < ta.size(); ++i) REQUIRE(test::same(ta[i], tb[i]));
    }
  }
}

}  // namespace

TEST_CASE("QK-drop tiles equal the brute-force oracle", "[sparse][qkdrop]") {
  std::uint64_t seed = 1;
  for (const auto& c : kCases) {
    for (const double rate : {0.0, 0.3, 0.7, 0.95, 1.0}) {
      const std::int64_t n_seq = c.n_dev * c.block;
      const models::QKDropMask mask(models::random_kept(n_seq, 2, rate, ++seed), n_seq,
                                    "qkdrop:" + std::to_string(rate));
      for (const auto& layout : layouts_for(c, seed)) check_against_oracle(mask, layout, test::Rule::QK);
    }
  }
}

TEST_CASE("hash tiles equal the brute-force oracle", "[sparse][hash]") {
  std::uint64_t seed = 100;
  for (const auto& c : kCases) {
    const std::int64_t n_seq = c.n_dev * c.block;
    // 40 buckets over blocks of <= 30 tokens leave most buckets empty on every device.
    for (const std::int64_t nb : {1, 2, 5, 40}) {
      for (const double s : {0.0, 1.5}) {
        const models::HashMask mask(models::random_buckets(n_seq, 2, nb, s, ++seed), n_seq,
                                    "hash:" + std::to_string(nb) + ":zipf:" + std::to_string(s));
        for (const auto& layout : layouts_for(c, seed)) check_against_oracle(mask, layout, test::Rule::Hash);
      }
    }
    const models::HashMask lsh(models::random_lsh_buckets(n_seq, 2, 4, 3, ++seed), n_seq, "lsh:4:3");
    for (const auto& layout : layouts_for(c, seed)) check_against_oracle(lsh, layout, test::Rule::Hash);
  }
}

TEST_CASE("bucket-striped and bucket-rotated tiles and ring totals equal the brute-force oracle", "[sparse][balanced]") {
  // The layout is built from the mask it is counted with, for hash (uniform and skewed,
  // several heads) and query/key dropping; the ring's total pairs are every allowed pair once.
  std::uint64_t seed = 300;
  for (const auto& c : kCases) {
    const std::int64_t n_seq = c.n_dev * c.block;
    std::vector<std::unique_ptr<models::Mask>> masks;
    masks.push_back(std::make_unique<models::HashMask>(models::random_buckets(n_seq, 2, 3, 0.0, ++seed), n_seq));
    masks.push_back(std::make_unique<models::HashMask>(models::random_buckets(n_seq, 3, 6, 1.5, ++seed), n_seq));
    masks.push_back(std::make_unique<models::QKDropMask>(models::random_kept(n_seq, 2, 0.4, ++seed), n_seq));
    for (const auto& mask : masks) {
      std::int64_t brute = 0;
      for (std::int64_t h = 0; h < mask->heads(); ++h)
        for (std::int64_t q = 0; q < n_seq; ++q)
          for (std::int64_t p = 0; p <= q; ++p) brute += mask->allowed(q, p, h);
      for (const char* spec : {"bucket-striped", "bucket-rotated"}) {
        if (std::string(spec) == "bucket-rotated" && mask->kind() != models::MaskKind::Hash) continue;
        const auto layout = models::mask_layout(models::LayoutSpec::parse(spec), *mask, n_seq, c.n_dev);
        if (const auto* hash = dynamic_cast<const models::HashMask*>(mask.get()))
          check_against_oracle(*hash, layout, test::Rule::Hash);
        else
          check_against_oracle(dynamic_cast<const models::QKDropMask&>(*mask), layout, test::Rule::QK);
        const models::Workload w(layout, *mask, {3, 2}, 0);
        CHECK(w.totals().allowed_pairs == brute);
      }
    }
  }
}

TEST_CASE("hash bucket ids need not be dense", "[sparse][hash]") {
  // Large, sparse ids take the sort-based ranking path; the tiles must not change.
  const std::int64_t n_seq = 24;
  auto ids = models::random_buckets(n_seq, 1, 3, 0.0, 7);
  auto big = ids;
  for (auto* side : {&big.q[0], &big.k[0]})
    for (auto& b : *side) b = b * 1'000'000'007 + 5;
  const models::HashMask small_ids(ids, n_seq);
  const models::HashMask big_ids(big, n_seq);
  CHECK(big_ids.query_bucket(3, 0) == ids.q[0][3] * 1'000'000'007 + 5);
  CHECK(big_ids.bucket_count(0) == small_ids.bucket_count(0));
  for (const auto& layout : layouts_for({3, 8}, 9)) {
    require_same_tiles(small_ids, big_ids, layout, {3, 2}, 0);
    check_against_oracle(big_ids, layout, test::Rule::Hash);
  }
}

TEST_CASE("drop rate 0 and one bucket equal the causal mask exactly", "[sparse][causal]") {
  const auto causal = models::make_causal();
  for (const auto& c : kCases) {
    const std::int64_t n_seq = c.n_dev * c.block;
    const models::QKDropMask keep_all(models::random_kept(n_seq, 1, 0.0, 3), n_seq);
    models::BucketIds one;
    one.q.assign(1, std::vector<std::int64_t>(static_cast<std::size_t>(n_seq), 7));
    one.k = one.q;
    const models::HashMask one_bucket(one, n_seq);
    auto layouts = layouts_for(c, 5);
    layouts.pop_back();  // the permutation: causal tiles follow local order, SCFA's position order
    for (const auto& layout : layouts) {
      for (const auto tile : tiles_for(c.block)) {
        require_same_tiles(*causal, keep_all, layout, tile, 0);
        require_same_tiles(*causal, one_bucket, layout, tile, 0);
      }
    }
  }
}

TEST_CASE("stranded queries: a visited row with no allowed key", "[sparse][stranded]") {
  // One device, so the block is the whole sequence. Query 1 is kept but every key before it
  // is dropped: alone in a tile it is skipped; sharing a tile with query 5 it is computed and
  // contributes nothing (the kernel's empty-softmax guard).
  const Layout layout = Layout::contiguous(8, 1);
  models::KeptPositions kept;
  kept.q = {{1, 5, 6}};
  kept.k = {{2, 5}};
  const models::QKDropMask mask(kept, 8);
  const auto tiles = test::fast_tiles(mask, layout, 0, 0, {1, 1}, 0);
  REQUIRE(tiles.size() == 6);
  // Row of query 1: keys 2 and 5 are both later.
  CHECK(tiles[0].allowed == 0);
  CHECK_FALSE(tiles[0].visited);
  CHECK(tiles[1].allowed == 0);
  CHECK_FALSE(tiles[1].visited);
  // Queries 5 and 6 see both keys.
  for (std::size_t i = 2; i < 6; ++i) CHECK((tiles[i].allowed == 1 && tiles[i].visited));
  // With 2x2 tiles, queries {1, 5} x keys {2, 5}: query 5 sees both keys, query 1 none.
  const auto coarse = test::fast_tiles(mask, layout, 0, 0, {2, 2}, 0);
  REQUIRE(coarse.size() == 2);
  CHECK(coarse[0].allowed == 2);
  CHECK(coarse[0].visited);
  CHECK(coarse[1].allowed == 2);

  // Hash: bucket 0's only key (position 4) comes after query 2 of bucket 0.
  models::BucketIds b;
  b.q = {{1, 1, 0, 1, 1, 1, 1, 1}};
  b.k = {{1, 1, 1, 1, 0, 1, 1, 1}};
  const models::HashMask hash(b, 8);
  const auto ht = test::fast_tiles(hash, layout, 0, 0, {1, 1}, 0);
  REQUIRE(ht.size() == 64);
  // Sorted rows: bucket 0 first, so query row 0 is position 2 and key row 0 is position 4.
  CHECK(ht[0].allowed == 0);
  CHECK_FALSE(ht[0].visited);
  std::int64_t row0_allowed = 0;
  for (std::size_t i = 0; i < 8; ++i) row0_allowed += ht[i].allowed;
  CHECK(row0_allowed == 0);
}

TEST_CASE("devices that keep nothing have no tiles", "[sparse][qkdrop]") {
  const Layout layout = Layout::contiguous(16, 2);
  models::KeptPositions kept;
  kept.q = {{1, 2, 3}};        // only device 0 keeps queries
  kept.k = {{9, 10, 11, 12}};  // only device 1 keeps keys
  const models::QKDropMask mask(kept, 16);
  CHECK(test::fast_tiles(mask, layout, 1, 0, {4, 4}, 0).empty());
  CHECK(test::fast_tiles(mask, layout, 0, 0, {4, 4}, 0).empty());
  const auto t = test::fast_tiles(mask, layout, 0, 1, {4, 4}, 0);
  REQUIRE(t.size() == 1);
  CHECK(t[0].rows == 3);
  CHECK(t[0].cols == 4);
  CHECK(t[0].allowed == 0);
  CHECK_FALSE(t[0].visited);  // every key is in the queries' future
}

TEST_CASE("count over progressions equals brute force, summed over heads", "[sparse][count]") {
  std::mt19937_64 rng(11);
  const std::int64_t n_seq = 60;
  const models::QKDropMask qk(models::random_kept(n_seq, 3, 0.4, 1), n_seq);
  const models::HashMask hash(models::random_buckets(n_seq, 3, 4, 0.0, 2), n_seq);
  for (int trial = 0; trial < 200; ++trial) {
    auto prog = [&] {
      const auto stride = static_cast<std::int64_t>(rng() % 5) + 1;
      const auto start = static_cast<std::int64_t>(rng() % 40);
      const auto count = static_cast<std::int64_t>(rng() % 12);
      return models::Progression{start, stride, count};
    };
    const std::vector<models::Progression> q{prog(), prog()};
    const std::vector<models::Progression> k{prog()};
    for (const models::Mask* m : {static_cast<const models::Mask*>(&qk), static_cast<const models::Mask*>(&hash)}) {
      std::int64_t expected = 0;
      for (std::int64_t h = 0; h < m->heads(); ++h)
        for (const auto& a : q)
          for (std::int64_t i = 0; i < a.count; ++i)
            for (const auto& b : k)
              for (std::int64_t j = 0; j < b.count; ++j)
                expected += m->allowed(a.start + i * a.stride, b.start + j * b.stride, h);
      REQUIRE(m->count(q, k) == expected);
    }
  }
}

TEST_CASE("sparse masks report their heads and reject bad blocks", "[sparse]") {
  const models::QKDropMask qk(models::random_kept(16, 3, 0.5, 1), 16);
  const models::HashMask hash(models::random_buckets(16, 2, 4, 0.0, 1), 16);
  CHECK(qk.heads() == 3);
  CHECK(hash.heads() == 2);
  CHECK(qk.kind() == models::MaskKind::QKDrop);
  CHECK(hash.kind() == models::MaskKind::Hash);
  CHECK_FALSE(qk.shift_invariant());
  CHECK_FALSE(qk.order_only());
  CHECK_FALSE(hash.shift_invariant());
  CHECK_FALSE(hash.order_only());
  auto noop = [](const models::TileCount&) {};
  CHECK_THROWS_AS(qk.visit_block(Layout::contiguous(16, 2), 0, 0, {4, 4}, 3, noop), std::out_of_range);
  CHECK_THROWS_AS(hash.visit_block(Layout::contiguous(16, 2), 2, 0, {4, 4}, 0, noop), std::out_of_range);
  CHECK_THROWS_AS(hash.visit_block(Layout::contiguous(32, 2), 0, 0, {4, 4}, 0, noop), models::InputError);
  CHECK_THROWS_AS(hash.visit_block(Layout::contiguous(16, 2), 0, 0, {0, 4}, 0, noop), models::InputError);
  CHECK_FALSE(qk.allowed(5, 3, 7));  // head out of range
  CHECK_FALSE(hash.allowed(20, 3, 0));  // position out of range
  // The kept lists come back as given.
  const auto kept = models::random_kept(16, 3, 0.5, 1);
  CHECK(qk.kept().q == kept.q);
  CHECK(qk.kept().k == kept.k);
  CHECK(qk.kept_query_count(1) == static_cast<std::int64_t>(kept.q[1].size()));
}

TEST_CASE("the per-device rows memo builds once, evicts by size, tells permutations apart", "[sparse][cache]") {
  const Layout striped = Layout::striped(64, 4);
  int builds = 0;
  auto build = [&] {
    ++builds;
    models::SortedRows r;
    r.key.assign(100, 1);  // ~800 bytes
    return r;
  };
  models::SparseRowsCache cache(2000);  // room for two entries
  const auto a = cache.get(striped, 0, 1, true, build);
  CHECK(cache.get(striped, 0, 1, true, build) == a);
  CHECK(builds == 1);
  (void)cache.get(striped, 0, 1, false, build);  // other side
  (void)cache.get(striped, 1, 1, true, build);   // other head: evicts the first entry
  CHECK(builds == 3);
  (void)cache.get(striped, 0, 1, true, build);
  CHECK(builds == 4);
  CHECK(a->key.size() == 100);  // handed-out rows outlive eviction
  // Different layouts of the same kind differ in n_dev or width, so they never share entries.
  (void)cache.get(Layout::block_cyclic(64, 4, 2), 0, 1, true, build);
  (void)cache.get(Layout::block_cyclic(64, 4, 4), 0, 1, true, build);
  CHECK(builds == 6);
  // Permutations: once per instance (copies share it); an equal permutation built again is
  // another instance and is built again.
  const Layout perm = Layout::permutation({1, 0, 2, 3}, 2);
  (void)cache.get(perm, 0, 0, true, build);
  (void)cache.get(perm, 0, 0, true, build);
  CHECK(builds == 7);
  const Layout copy = perm;
  (void)cache.get(copy, 0, 0, true, build);
  CHECK(builds == 7);
  const Layout again = Layout::permutation({1, 0, 2, 3}, 2);
  (void)cache.get(again, 0, 0, true, build);
  CHECK(builds == 8);
}

TEST_CASE("a key tile straddling into the next bucket defeats the causal trim", "[sparse][hash][trim]") {
  // One device, tile 2x2, bucket = position parity except position 14 (bucket 1). Sorted keys:
  // bucket 0 = 0 2 4 6 8 10 12, bucket 1 = 1 3 5 7 9 11 13 14 15, so key tile 3 holds {12, 1}:
  // its smallest position (1) is <= the largest of query tile {0, 2}, and the kernel keeps every
  // key tile up to it although only tile 0 holds an allowed pair. Moving position 14 back to
  // bucket 0 aligns the bucket end with a tile end and the same query tile visits one tile.
  const Layout layout = Layout::contiguous(16, 1);
  models::BucketIds straddle;
  straddle.q.assign(1, std::vector<std::int64_t>(16));
  for (std::int64_t p = 0; p < 16; ++p) straddle.q[0][static_cast<std::size_t>(p)] = p % 2;
  auto aligned = straddle;
  aligned.k = aligned.q;
  straddle.q[0][14] = 1;
  straddle.k = straddle.q;
  auto first_row = [&](const models::BucketIds& ids) {
    const models::HashMask mask(ids, 16);
    std::int64_t visited = 0;
    std::int64_t computed = 0;
    for (const auto& t : test::fast_tiles(mask, layout, 0, 0, {2, 2}, 0))
      if (t.q_tile == 0) {
        visited += t.visited;
        computed += t.allowed > 0;
      }
    return std::pair{visited, computed};
  };
  CHECK(first_row(straddle) == std::pair<std::int64_t, std::int64_t>{4, 1});
  CHECK(first_row(aligned) == std::pair<std::int64_t, std::int64_t>{1, 1});
}

TEST_CASE("on a striped block a bucket run is trimmed only where no key tile straddles into the next bucket", "[sparse][hash][trim]") {
  // The mechanism of docs/sparse-ring-study.md at a smaller size: query tiles of a bucket whose
  // key run ends inside a tile visit the whole run (that tile straddles into the next bucket,
  // whose earliest key is early on every striped device); a run that ends on a tile edge, and
  // the last bucket's run (no next bucket), are trimmed to about the causal half.
  const std::int64_t n_dev = 8;
  const std::int64_t n_seq = n_dev * 4096;
  const models::HashMask mask(models::random_buckets(n_seq, 1, 8, 0.0, 1), n_seq);
  const Layout layout = Layout::striped(n_seq, n_dev);
  const auto q = mask.query_rows(layout, 1, 0);
  const std::int64_t tq = 64;
  std::vector<std::int64_t> bucket_of_tile;  // 8: the tile spans two buckets
  for (std::int64_t i = 0; i < q.size(); i += tq) {
    const std::int64_t last = std::min(i + tq, q.size()) - 1;
    bucket_of_tile.push_back(q.group(i) == q.group(last) ? q.group(i) : 8);
  }
  std::vector<double> visited(9, 0);
  std::vector<double> computed(9, 0);
  mask.visit_block(layout, 1, 0, {tq, tq}, 0, [&](const models::TileCount& t) {
    const auto b = static_cast<std::size_t>(bucket_of_tile[static_cast<std::size_t>(t.q_tile)]);
    visited[b] += t.visited;
    computed[b] += t.allowed > 0;
  });
  // Key tiles holding any key of bucket b, and query tiles wholly inside bucket b.
  const auto k = mask.key_rows(layout, 0, 0);
  std::vector<std::int64_t> first_tile(8, -1);
  std::vector<std::int64_t> last_tile(8, -1);
  std::vector<bool> ends_on_tile_edge(8, false);
  for (std::int64_t j = 0; j < k.size(); ++j) {
    const auto b = static_cast<std::size_t>(k.group(j));
    if (first_tile[b] < 0) first_tile[b] = j / tq;
    last_tile[b] = j / tq;
    ends_on_tile_edge[b] = (j + 1) % tq == 0;
  }
  int straddling = 0;
  for (std::size_t b = 0; b < 7; ++b) {
    const auto q_tiles = std::count(bucket_of_tile.begin(), bucket_of_tile.end(), static_cast<std::int64_t>(b));
    CAPTURE(b, visited[b], computed[b], q_tiles, ends_on_tile_edge[b]);
    if (ends_on_tile_edge[b]) {
      // No key tile straddles into bucket b + 1: the trim works as for the last bucket.
      CHECK(visited[b] == computed[b]);
    } else {
      ++straddling;
      CHECK(visited[b] == static_cast<double>(q_tiles * (last_tile[b] - first_tile[b] + 1)));
      CHECK(computed[b] < 0.8 * visited[b]);
    }
  }
  CHECK(straddling >= 5);  // a bucket end meets a tile edge with probability 1/64
  CAPTURE(visited[7], computed[7]);
  CHECK(visited[7] == computed[7]);
  std::printf("[sparse] striped block (1, 0), hash:8, tile 64: bucket 0 visits %.0f tiles, computes %.0f; last bucket "
              "visits %.0f, computes %.0f\n",
              visited[0], computed[0], visited[7], computed[7]);
}
