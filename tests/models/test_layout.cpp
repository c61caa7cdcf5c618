#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

#include "models/io/error.hpp"
#include "models/workload/layout.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim::models;

namespace {

std::vector<Layout> all_layouts(std::int64_t n_seq, std::int64_t n, std::mt19937_64& rng) {
  std::vector<Layout> v{Layout::contiguous(n_seq, n), Layout::striped(n_seq, n)};
  const std::int64_t c = n_seq / n;
  if (c % 2 == 0) v.push_back(Layout::zigzag(n_seq, n));
  for (std::int64_t w = 1; w <= c; ++w)
    if (c % w == 0 && (w == 1 || w == c || w == 2 || w == 3 || w == c / 2)) v.push_back(Layout::block_cyclic(n_seq, n, w));
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n_seq));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  v.push_back(Layout::permutation(perm, n));
  return v;
}

}  // namespace

TEST_CASE("layouts map tokens to (device, local) and back, as specified", "[layout]") {
  std::mt19937_64 rng(7);
  for (std::int64_t n : {1, 2, 3, 4, 8}) {
    for (std::int64_t c : {2, 4, 6, 12}) {
      const std::int64_t n_seq = n * c;
      for (const auto& l : all_layouts(n_seq, n, rng)) {
        INFO(l.name() << " n=" << n << " c=" << c);
        std::vector<int> seen(static_cast<std::size_t>(n_seq), 0);
        for (std::int64_t t = 0; t < n_seq; ++t) {
          const auto p = l.place(t);
          REQUIRE(p.device >= 0);
          REQUIRE(p.device < n);
          REQUIRE(p.local >= 0);
          REQUIRE(p.local < c);
          REQUIRE(l.token(p.device, p.local) == t);
          ++seen[static_cast<std::size_t>(p.device * c + p.local)];
        }
        REQUIRE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));
      }
    }
  }
}

TEST_CASE("layout definitions match the issue's formulas", "[layout]") {
  const std::int64_t n = 4, c = 8, n_seq = n * c;
  const auto striped = Layout::striped(n_seq, n);
  const auto zigzag = Layout::zigzag(n_seq, n);
  const auto cyc = Layout::block_cyclic(n_seq, n, 2);
  for (std::int64_t t = 0; t < n_seq; ++t) {
    CHECK(striped.place(t) == Placement{t % n, t / n});
    CHECK(cyc.place(t) == Placement{(t / 2) % n, (t / (2 * n)) * 2 + t % 2});
  }
  // zigzag: device j holds chunk j then chunk 2N-1-j of 2N chunks of c/2 tokens.
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t l = 0; l < c; ++l) {
      const std::int64_t chunk = l < c / 2 ? j : 2 * n - 1 - j;
      CHECK(zigzag.token(j, l) == chunk * (c / 2) + l % (c / 2));
    }
  // w = 1 is striped and w = c is contiguous.
  const auto w1 = Layout::block_cyclic(n_seq, n, 1);
  const auto wc = Layout::block_cyclic(n_seq, n, c);
  const auto contiguous = Layout::contiguous(n_seq, n);
  for (std::int64_t t = 0; t < n_seq; ++t) {
    CHECK(w1.place(t) == striped.place(t));
    CHECK(wc.place(t) == contiguous.place(t));
  }
}

TEST_CASE("segments list exactly the positions of a local range, in order", "[layout]") {
  std::mt19937_64 rng(11);
  for (std::int64_t n : {1, 2, 5}) {
    for (std::int64_t c : {4, 12, 30}) {
      for (const auto& l : all_layouts(n * c, n, rng)) {
        for (std::int64_t d = 0; d < n; ++d) {
          for (int trial = 0; trial < 20; ++trial) {
            std::int64_t lo = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c));
            std::int64_t hi = lo + 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c - lo));
            std::vector<Progression> segs;
            l.segments(d, lo, hi, segs);
            std::vector<std::int64_t> got, want;
            for (const auto& p : segs)
              for (std::int64_t i = 0; i < p.count; ++i) got.push_back(p.start + i * p.stride);
            for (std::int64_t x = lo; x < hi; ++x) want.push_back(l.token(d, x));
            std::sort(got.begin(), got.end());
            std::sort(want.begin(), want.end());
            INFO(l.name() << " d=" << d << " [" << lo << "," << hi << ")");
            REQUIRE(got == want);
          }
        }
      }
    }
  }
}

TEST_CASE("bad layout input is rejected with the field named", "[layout][errors]") {
  CHECK_THROWS_AS(Layout::contiguous(10, 3), InputError);
  CHECK_THROWS_AS(Layout::contiguous(0, 2), InputError);
  CHECK_THROWS_AS(Layout::striped(8, -1), InputError);
  CHECK_THROWS_AS(Layout::zigzag(6, 2), InputError);  // odd block
  CHECK_THROWS_AS(Layout::block_cyclic(16, 2, 3), InputError);
  CHECK_THROWS_AS(Layout::block_cyclic(16, 2, 0), InputError);
  CHECK_THROWS_AS(Layout::permutation({0, 1, 1, 3}, 2), InputError);
  CHECK_THROWS_AS(Layout::permutation({0, 1, 2, 7}, 2), InputError);
  CHECK_THROWS_AS(Layout::make(LayoutSpec::parse("spiral"), 8, 2), InputError);
  CHECK_THROWS_AS(Layout::make(LayoutSpec::parse("cyclic:x"), 8, 2), InputError);
  CHECK_THROWS_AS(Layout::make(LayoutSpec::parse("perm:/nonexistent/file"), 8, 2), InputError);
  try {
    (void)Layout::contiguous(10, 3);
  } catch (const InputError& e) {
    CHECK(e.field() == "n_seq");
    CHECK(std::string(e.what()).find("not divisible") != std::string::npos);
  }
  CHECK(Layout::make(LayoutSpec::parse("ring"), 8, 2).kind() == LayoutKind::Contiguous);
}

TEST_CASE("a permutation file's errors name the line of the offending token", "[layout][errors]") {
  const ringsim::test::TempDir tmp;
  const std::string path = tmp.write("perm.txt", "# four tokens, two per line\n0 1\n\n1 3\n");
  try {
    (void)Layout::make(LayoutSpec::parse("perm:" + path), 4, 2);
    FAIL("duplicate token accepted");
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.line() == 4);
    CHECK(std::string(e.what()).find("twice") != std::string::npos);
  }
  (void)tmp.write("perm.txt", "3 2 1 0\n");
  CHECK(Layout::make(LayoutSpec::parse("perm:" + path), 4, 2).token(1, 1) == 0);
}
