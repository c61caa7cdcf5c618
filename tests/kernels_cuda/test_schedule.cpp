// TileSchedule builder and validation: CPU only, always built and run.
#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/schedule.hpp"
#include "models/io/error.hpp"

using ringsim::kernels::build_schedule;
using ringsim::kernels::pair_allowed;
using ringsim::kernels::ScheduleSpec;
using ringsim::kernels::strided_positions;
using ringsim::kernels::TileItem;
using ringsim::kernels::TileKind;
using ringsim::kernels::TileSchedule;
using ringsim::models::InputError;

namespace {

// The block's mask, element by element, straight from the spec: the oracle the schedule must
// agree with.
bool spec_allows(const ScheduleSpec& spec, std::size_t q, std::size_t k) {
  const std::int32_t qb = spec.q_bucket.empty() ? 0 : spec.q_bucket[q];
  const std::int32_t kb = spec.k_bucket.empty() ? 0 : spec.k_bucket[k];
  return pair_allowed(spec.rule, spec.window, spec.q_pos[q], spec.k_pos[k], qb, kb);
}

// Every allowed pair lies in a listed tile and that tile's rule allows it; every pair of a
// listed tile is judged by the tile's rule exactly as the mask judges it; Full tiles hold only
// allowed pairs.
void check_against_oracle(const ScheduleSpec& spec, const TileSchedule& s) {
  REQUIRE_NOTHROW(s.validate());
  std::set<std::pair<std::int32_t, std::int32_t>> listed;
  for (const TileItem& it : s.items) listed.insert({it.q_tile, it.k_tile});
  // Assertions only on a mismatch: one per pair would dominate the run time under sanitizers.
  std::int64_t allowed_total = 0;
  for (std::int32_t q = 0; q < s.rows; ++q)
    for (std::int32_t k = 0; k < s.cols; ++k)
      if (spec_allows(spec, static_cast<std::size_t>(q), static_cast<std::size_t>(k))) {
        ++allowed_total;
        if (listed.count({q / s.tile_q, k / s.tile_k}) != 1) FAIL("allowed pair (" << q << ", " << k << ") in no listed tile");
      }
  for (const TileItem& it : s.items) {
    for (std::int32_t q = it.q_tile * s.tile_q; q < it.q_tile * s.tile_q + s.q_tile_rows(it.q_tile); ++q)
      for (std::int32_t k = it.k_tile * s.tile_k; k < it.k_tile * s.tile_k + s.k_tile_cols(it.k_tile); ++k) {
        const bool want = spec_allows(spec, static_cast<std::size_t>(q), static_cast<std::size_t>(k));
        if (s.allowed(it, q, k) != want || (it.kind == TileKind::Full && !want))
          FAIL("item (" << it.q_tile << ", " << it.k_tile << ") kind " << static_cast<int>(it.kind) << " misjudges pair ("
                        << q << ", " << k << "): mask says " << want);
      }
  }
  CHECK(s.allowed_pairs() == allowed_total);
}

TileSchedule minimal(std::int32_t rows, std::int32_t cols, std::int32_t tq, std::int32_t tk) {
  TileSchedule s;
  s.rows = rows;
  s.cols = cols;
  s.tile_q = tq;
  s.tile_k = tk;
  s.q_pos = strided_positions(0, 1, rows);
  s.k_pos = strided_positions(0, 1, cols);
  s.set_items({});
  return s;
}

}  // namespace

TEST_CASE("causal diagonal block lists the lower triangle of tiles", "[kernels][schedule]") {
  ScheduleSpec spec;
  spec.q_pos = strided_positions(0, 1, 256);
  spec.k_pos = strided_positions(0, 1, 256);
  spec.tile_q = spec.tile_k = 64;
  const TileSchedule s = build_schedule(spec);
  REQUIRE(s.q_tiles() == 4);
  REQUIRE(s.items.size() == 10);
  REQUIRE(s.q_tile_offsets == std::vector<std::int32_t>{0, 1, 3, 6, 10});
  for (const TileItem& it : s.items) CHECK(it.kind == (it.q_tile == it.k_tile ? TileKind::Causal : TileKind::Full));
  CHECK(s.visited_pairs() == 10 * 64 * 64);
  CHECK(s.allowed_pairs() == 256 * 257 / 2);
  check_against_oracle(spec, s);
}

TEST_CASE("contiguous off-diagonal blocks are all full or all skipped", "[kernels][schedule]") {
  ScheduleSpec spec;
  spec.q_pos = strided_positions(512, 1, 128);
  spec.tile_q = spec.tile_k = 32;
  SECTION("earlier K/V block") {
    spec.k_pos = strided_positions(0, 1, 128);
    const TileSchedule s = build_schedule(spec);
    CHECK(s.items.size() == 16);
    CHECK(std::all_of(s.items.begin(), s.items.end(), [](const TileItem& it) { return it.kind == TileKind::Full; }));
  }
  SECTION("later K/V block") {
    spec.k_pos = strided_positions(1024, 1, 128);
    const TileSchedule s = build_schedule(spec);
    CHECK(s.items.empty());
    CHECK(s.q_tile_offsets == std::vector<std::int32_t>(5, 0));
    CHECK(s.visited_pairs() == 0);
  }
}

TEST_CASE("striped blocks: every tile on or below the diagonal is partial", "[kernels][schedule]") {
  // Device 1 of a ring of 4, holding the K/V of device 2 (j < k: strictly lower triangle).
  ScheduleSpec spec;
  spec.q_pos = strided_positions(1, 4, 128);
  spec.k_pos = strided_positions(2, 4, 128);
  spec.tile_q = spec.tile_k = 32;
  const TileSchedule s = build_schedule(spec);
  CHECK(s.items.size() == 10);
  check_against_oracle(spec, s);
  CHECK(s.allowed_pairs() == 128 * 127 / 2);
}

TEST_CASE("short last tiles and tiles larger than the block", "[kernels][schedule]") {
  ScheduleSpec spec;
  spec.q_pos = strided_positions(100, 1, 100);
  spec.k_pos = strided_positions(37, 3, 70);
  spec.tile_q = 64;
  spec.tile_k = 48;
  TileSchedule s = build_schedule(spec);
  CHECK(s.q_tile_rows(1) == 36);
  CHECK(s.k_tile_cols(1) == 22);
  check_against_oracle(spec, s);
  spec.tile_q = 512;
  spec.tile_k = 512;
  s = build_schedule(spec);
  CHECK(s.q_tiles() == 1);
  CHECK(s.k_tiles() == 1);
  check_against_oracle(spec, s);
}

TEST_CASE("builder agrees with the element oracle on random blocks", "[kernels][schedule]") {
  std::mt19937 rng(20240611);
  for (int trial = 0; trial < 60; ++trial) {
    ScheduleSpec spec;
    const int rows = std::uniform_int_distribution<int>(1, 150)(rng);
    const int cols = std::uniform_int_distribution<int>(1, 150)(rng);
    const bool sorted = trial % 2 == 0;  // sorted: contiguous/striped-like; unsorted: permutations
    auto draw = [&](int n) {
      std::vector<std::int32_t> p(static_cast<std::size_t>(n));
      for (auto& x : p) x = std::uniform_int_distribution<std::int32_t>(0, 300)(rng);
      if (sorted) std::sort(p.begin(), p.end());
      return p;
    };
    spec.q_pos = draw(rows);
    spec.k_pos = draw(cols);
    spec.tile_q = std::uniform_int_distribution<int>(1, 70)(rng);
    spec.tile_k = std::uniform_int_distribution<int>(1, 70)(rng);
    spec.rule = static_cast<TileKind>(trial % 4);
    if (spec.rule == TileKind::Window) spec.window = std::uniform_int_distribution<int>(1, 120)(rng);
    if (spec.rule == TileKind::IndexRanges && trial % 8 == 3) {
      // Hash-sparse style: few buckets, tokens sorted by bucket (stable, positions increasing).
      auto buckets = [&](std::vector<std::int32_t>& pos) {
        std::vector<std::pair<std::int32_t, std::int32_t>> bp;
        for (const auto p : pos) bp.emplace_back(std::uniform_int_distribution<std::int32_t>(0, 3)(rng), p);
        std::stable_sort(bp.begin(), bp.end());
        std::vector<std::int32_t> b;
        pos.clear();
        for (const auto& [bucket, p] : bp) {
          b.push_back(bucket);
          pos.push_back(p);
        }
        return b;
      };
      spec.q_bucket = buckets(spec.q_pos);
      spec.k_bucket = buckets(spec.k_pos);
    }
    INFO("trial " << trial << " rule " << static_cast<int>(spec.rule) << " rows " << rows << " cols " << cols);
    const ScheduleSpec copy = spec;
    const TileSchedule s = build_schedule(std::move(spec));
    check_against_oracle(copy, s);
    if (copy.rule == TileKind::Causal) {
      // The causal skip is exact: every listed tile holds an allowed pair.
      for (const TileItem& it : s.items) {
        bool any = false;
        for (std::int32_t q = it.q_tile * s.tile_q; q < it.q_tile * s.tile_q + s.q_tile_rows(it.q_tile) && !any; ++q)
          for (std::int32_t k = it.k_tile * s.tile_k; k < it.k_tile * s.tile_k + s.k_tile_cols(it.k_tile); ++k)
            if (s.allowed(it, q, k)) {
              any = true;
              break;
            }
        CHECK(any);
      }
    }
  }
}

TEST_CASE("buckets prune tiles whose bucket ranges do not meet", "[kernels][schedule]") {
  ScheduleSpec spec;
  spec.rule = TileKind::IndexRanges;
  spec.q_pos = strided_positions(1000, 1, 64);
  spec.k_pos = strided_positions(0, 1, 64);
  spec.q_bucket.assign(64, 0);
  spec.k_bucket.assign(64, 0);
  std::fill(spec.q_bucket.begin() + 32, spec.q_bucket.end(), 1);
  std::fill(spec.k_bucket.begin() + 32, spec.k_bucket.end(), 1);
  spec.tile_q = spec.tile_k = 32;
  const ScheduleSpec copy = spec;
  const TileSchedule s = build_schedule(spec);
  // Only the two same-bucket tiles remain, and they are full (all keys earlier, one bucket).
  REQUIRE(s.items.size() == 2);
  CHECK(s.items[0] == TileItem{0, 0, TileKind::Full, 0});
  CHECK(s.items[1] == TileItem{1, 1, TileKind::Full, 0});
  check_against_oracle(copy, s);
}

TEST_CASE("index ranges without buckets build causal items", "[kernels][schedule]") {
  ScheduleSpec spec;
  spec.rule = TileKind::IndexRanges;
  spec.q_pos = {3, 9, 10, 40};
  spec.k_pos = {5, 11, 12, 50};
  spec.tile_q = spec.tile_k = 2;
  const ScheduleSpec copy = spec;
  const TileSchedule s = build_schedule(spec);
  for (const TileItem& it : s.items) CHECK(it.kind != TileKind::IndexRanges);
  check_against_oracle(copy, s);
}

TEST_CASE("window tiles: full inside the band, skipped outside", "[kernels][schedule]") {
  ScheduleSpec spec;
  spec.rule = TileKind::Window;
  spec.window = 64;
  spec.q_pos = strided_positions(0, 1, 256);
  spec.k_pos = strided_positions(0, 1, 256);
  spec.tile_q = spec.tile_k = 32;
  const ScheduleSpec copy = spec;
  const TileSchedule s = build_schedule(spec);
  // Per q tile t: k tile t-2 is partial (the band's lower edge), t-1 full, t the diagonal;
  // t-3 lies wholly outside the band.
  for (const TileItem& it : s.items) {
    CHECK(it.q_tile - it.k_tile <= 2);
    CHECK(it.k_tile <= it.q_tile);
    CHECK((it.kind == TileKind::Full) == (it.q_tile - it.k_tile == 1));
    if (it.kind == TileKind::Window) CHECK(it.window == 64);
  }
  check_against_oracle(copy, s);
}

TEST_CASE("set_items sorts, groups and rejects duplicates", "[kernels][schedule]") {
  TileSchedule s = minimal(100, 100, 32, 32);
  s.set_items({{2, 1, TileKind::Full, 0}, {0, 3, TileKind::Causal, 0}, {2, 0, TileKind::Window, 5}, {0, 0, TileKind::Full, 0}});
  CHECK(s.q_tile_offsets == std::vector<std::int32_t>{0, 2, 2, 4, 4});
  CHECK(s.items[0] == TileItem{0, 0, TileKind::Full, 0});
  CHECK(s.items[1] == TileItem{0, 3, TileKind::Causal, 0});
  CHECK(s.items[2] == TileItem{2, 0, TileKind::Window, 5});
  CHECK_THROWS_AS(s.set_items({{1, 1, TileKind::Full, 0}, {1, 1, TileKind::Causal, 0}}), InputError);
  CHECK_THROWS_AS(s.set_items({{4, 0, TileKind::Full, 0}}), InputError);
  CHECK_THROWS_AS(s.set_items({{0, 4, TileKind::Full, 0}}), InputError);
  CHECK_THROWS_AS(s.set_items({{0, 0, TileKind::Window, 0}}), InputError);
  CHECK_THROWS_AS(s.set_items({{0, 0, static_cast<TileKind>(7), 0}}), InputError);
}

TEST_CASE("validate names the broken field", "[kernels][schedule]") {
  const TileSchedule good = minimal(64, 64, 16, 16);
  REQUIRE_NOTHROW(good.validate());
  auto field_of = [](const TileSchedule& s) {
    try {
      s.validate();
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  TileSchedule s = good;
  s.q_pos.pop_back();
  CHECK(field_of(s) == "q_pos");
  s = good;
  s.k_pos[3] = -1;
  CHECK(field_of(s) == "k_pos");
  s = good;
  s.q_bucket.assign(64, 0);
  CHECK(field_of(s) == "q_bucket");
  s.k_bucket.assign(63, 0);
  CHECK(field_of(s) == "k_bucket");
  s = good;
  s.q_tile_offsets.pop_back();
  CHECK(field_of(s) == "q_tile_offsets");
  s = good;
  s.items = {{1, 0, TileKind::Full, 0}};
  s.q_tile_offsets = {0, 1, 1, 1, 1};  // the item sits in q tile 0's group but says q tile 1
  CHECK(field_of(s) == "items");
  s.items = {{0, 2, TileKind::Full, 0}, {0, 1, TileKind::Full, 0}};
  s.q_tile_offsets = {0, 2, 2, 2, 2};
  CHECK(field_of(s) == "items");
  s = good;
  s.tile_k = 0;
  CHECK(field_of(s) == "tile_k");
  s = good;
  s.rows = 0;
  CHECK(field_of(s) == "rows");
}

TEST_CASE("build_schedule rejects inconsistent specs", "[kernels][schedule]") {
  ScheduleSpec spec;
  spec.q_pos = strided_positions(0, 1, 8);
  spec.k_pos = strided_positions(0, 1, 8);
  spec.rule = TileKind::Window;
  spec.window = 0;
  CHECK_THROWS_AS(build_schedule(spec), InputError);
  spec.rule = TileKind::Causal;
  spec.q_bucket.assign(8, 0);
  spec.k_bucket.assign(8, 0);
  CHECK_THROWS_AS(build_schedule(spec), InputError);
  spec.rule = TileKind::IndexRanges;
  spec.k_bucket.clear();
  CHECK_THROWS_AS(build_schedule(spec), InputError);
  spec.q_bucket.clear();
  spec.tile_q = 0;
  CHECK_THROWS_AS(build_schedule(spec), InputError);
  spec.tile_q = 8;
  spec.q_pos.clear();
  CHECK_THROWS_AS(build_schedule(spec), InputError);
}

TEST_CASE("strided positions", "[kernels][schedule]") {
  CHECK(strided_positions(3, 4, 4) == std::vector<std::int32_t>{3, 7, 11, 15});
  CHECK(strided_positions(0, 1, 0).empty());
  CHECK_THROWS_AS(strided_positions(0, 0, 4), InputError);
  CHECK_THROWS_AS(strided_positions(-1, 1, 4), InputError);
  CHECK_THROWS_AS(strided_positions(2'000'000'000, 1'000'000, 1000), InputError);
}

TEST_CASE("element rule", "[kernels][schedule]") {
  STATIC_REQUIRE(pair_allowed(TileKind::Full, 0, 0, 100, 1, 2));
  STATIC_REQUIRE(pair_allowed(TileKind::Causal, 0, 5, 5, 0, 0));
  STATIC_REQUIRE(!pair_allowed(TileKind::Causal, 0, 5, 6, 0, 0));
  STATIC_REQUIRE(pair_allowed(TileKind::Window, 3, 10, 8, 0, 0));
  STATIC_REQUIRE(!pair_allowed(TileKind::Window, 3, 10, 7, 0, 0));
  STATIC_REQUIRE(pair_allowed(TileKind::IndexRanges, 0, 10, 7, 2, 2));
  STATIC_REQUIRE(!pair_allowed(TileKind::IndexRanges, 0, 10, 7, 2, 3));
  STATIC_REQUIRE(!pair_allowed(TileKind::IndexRanges, 0, 7, 10, 2, 2));
}
