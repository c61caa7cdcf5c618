// The shared validation layer on its own: checked products against 128-bit arithmetic, the
// layout bounds the counting-time estimate relies on, bounded file reading, typed JSON fields,
// and the size checks of resolve().
#include <sys/stat.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/io/checked.hpp"
#include "models/io/error.hpp"
#include "models/io/input_file.hpp"
#include "models/io/json_fields.hpp"
#include "models/workload/layout.hpp"
#include "models/io/limits.hpp"
#include "models/workload/mask.hpp"
#include "models/catalog/resolve.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim::models;
using ringsim::test::TempDir;

TEST_CASE("checked products refuse exactly the products that overflow int64", "[limits]") {
  std::mt19937_64 rng(7);
  __extension__ typedef __int128 i128;
  for (int trial = 0; trial < 20000; ++trial) {
    // Magnitudes spread over all bit widths, both signs.
    auto draw = [&] {
      const auto bits = static_cast<int>(rng() % 63);
      auto v = static_cast<std::int64_t>(rng() >> (63 - bits));
      return rng() % 4 == 0 ? -v : v;
    };
    const std::int64_t a = draw(), b = draw(), c = draw();
    const i128 exact_ab = static_cast<i128>(a) * b;
    bool fits = exact_ab >= INT64_MIN && exact_ab <= INT64_MAX;
    const i128 exact = fits ? exact_ab * c : 0;
    fits = fits && exact >= INT64_MIN && exact <= INT64_MAX;
    INFO(a << " x " << b << " x " << c);
    if (fits)
      CHECK(checked_product({a, b, c}, "f", "p") == static_cast<std::int64_t>(exact));
    else
      CHECK_THROWS_AS(checked_product({a, b, c}, "f", "p"), InputError);
  }
}

TEST_CASE("max_segments and max_span bound every range of every layout", "[limits]") {
  std::mt19937_64 rng(11);
  std::vector<std::int64_t> perm(96);
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
  std::shuffle(perm.begin(), perm.end(), rng);
  const std::vector<Layout> layouts = {Layout::contiguous(96, 4), Layout::striped(96, 4), Layout::zigzag(96, 4),
                                       Layout::block_cyclic(96, 4, 3), Layout::block_cyclic(96, 4, 1),
                                       Layout::block_cyclic(96, 2, 8), Layout::permutation(perm, 4)};
  for (const auto& l : layouts)
    for (std::int64_t d = 0; d < l.n_dev(); ++d)
      for (std::int64_t lo = 0; lo < l.block(); ++lo)
        for (std::int64_t hi = lo + 1; hi <= l.block(); ++hi) {
          std::vector<Progression> segs;
          l.segments(d, lo, hi, segs);
          std::int64_t mn = INT64_MAX, mx = INT64_MIN;
          for (const auto& p : segs) {
            mn = std::min(mn, p.start);
            mx = std::max(mx, p.last());
          }
          INFO(l.name() << " device " << d << " [" << lo << ", " << hi << ")");
          CHECK(static_cast<std::int64_t>(segs.size()) <= l.max_segments(hi - lo));
          CHECK(mx - mn + 1 <= l.max_span(hi - lo));
        }
}

TEST_CASE("input files: lines of any ending, refused when not regular, too large or too long", "[limits]") {
  const TempDir tmp;
  {
    InputFile f(tmp.write("a.txt", "one\r\ntwo\n\nthree"), "f", "test file", 100);
    std::string line;
    std::vector<std::string> lines;
    while (f.next_line(line)) lines.push_back(line);
    CHECK(lines == std::vector<std::string>{"one", "two", "", "three"});
    CHECK(f.line_number() == 4);
  }
  CHECK(InputFile(tmp.write("b.txt", "abc\ndef"), "f", "test file", 100).read_all() == "abc\ndef");
  CHECK_THROWS_AS(InputFile(tmp.write("c.txt", std::string(101, 'x')), "f", "test file", 100), InputError);
  CHECK_THROWS_AS(InputFile(tmp.dir(), "f", "test file", 100), InputError);
  CHECK_THROWS_AS(InputFile("/dev/zero", "f", "test file", 100), InputError);
  REQUIRE(::mkfifo(tmp.file("fifo").c_str(), 0600) == 0);
  CHECK_THROWS_AS(InputFile(tmp.file("fifo"), "f", "test file", 100), InputError);  // and does not block
  CHECK_THROWS_AS(InputFile(tmp.file("missing"), "f", "test file", 100), InputError);
  try {
    InputFile f(tmp.write("d.txt", "ok\n" + std::string(kMaxLineBytes + 1, 'x') + "\n"), "f", "test file", kMaxDataFileBytes);
    std::string line;
    while (f.next_line(line)) {
    }
    FAIL("a line longer than the limit was read");
  } catch (const InputError& e) {
    CHECK(e.line() == 2);
  }
}

TEST_CASE("typed JSON fields: integers, ranges, enumerations, duplicates and parser overflow", "[limits]") {
  const auto doc = parse_json_text(R"({"a": 4, "b": 4.0, "c": 4.5, "d": 18446744073709551615, "e": "x", "f": {"value": 0.5, "source": "s"}})", "t.json");
  const JsonFields f(doc, "t.json");
  CHECK(f.integer("a", 1, 8) == 4);
  CHECK(f.integer("b", 1, 8) == 4);
  CHECK_THROWS_AS(f.integer("c", 1, 8), InputError);
  CHECK_THROWS_AS(f.integer("d", 1, INT64_MAX), InputError);
  CHECK_THROWS_AS(f.integer("a", 5, 8), InputError);
  CHECK_THROWS_AS(f.integer("e", 1, 8), InputError);
  CHECK(f.integer_or("missing", 1, 8, 3) == 3);
  CHECK(f.one_of_or("e", {"x", "y"}, "y") == "x");
  CHECK_THROWS_AS(f.one_of_or("e", {"y"}, "y"), InputError);
  CHECK_THROWS_AS(f.count_sourced("f", 1, 8), InputError);
  CHECK(f.sourced_in("f", 0.5, 1) == 0.5);
  CHECK_THROWS_AS(f.sourced_in("f", 0.6, 1), InputError);
  CHECK_THROWS_AS(parse_json_text(R"({"a": 1, "a": 2})", "t.json"), InputError);
  CHECK_THROWS_AS(parse_json_text(R"({"a": 1e400})", "t.json"), InputError);
  CHECK_THROWS_AS(parse_json_text(std::string(100, '[') + std::string(100, ']'), "t.json"), InputError);
  CHECK_NOTHROW(parse_json_text(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]})", "t.json"));  // same key, other objects
}

TEST_CASE("resolve refuses sizes before building anything, naming the field", "[limits]") {
  const Catalog catalog;
  auto refused_field = [&](ScenarioSpec s) -> std::string {
    try {
      (void)resolve(s, catalog);
    } catch (const InputError& e) {
      return e.field();
    }
    return "accepted";
  };
  ScenarioSpec s;
  s.model = "attn:8:8:64";
  s.sp = 8;
  s.n_seq = 65536;
  CHECK(refused_field(s) == "accepted");
  s.n_seq = std::int64_t{1} << 40;  // n_seq^2 overflows
  CHECK(refused_field(s) == "n_seq");
  s.n_seq = 65536;
  s.batch = std::int64_t{1} << 40;
  CHECK(refused_field(s) == "batch");
  s.batch = 1;
  s.sp = std::int64_t{1} << 21;
  CHECK(refused_field(s) == "sp");
  s.sp = 1;
  s.n_seq = std::int64_t{1} << 26;
  s.mask = ringsim::models::MaskSpec::parse("window:100");
  s.tile = TileShape{1, 1};  // 2^52 tiles to visit one by one
  CHECK(refused_field(s) == "tile");
  s.mask = ringsim::models::MaskSpec::parse("causal");         // the causal shortcut walks 2 x 2^26 tiles: accepted
  CHECK(refused_field(s) == "accepted");
}
