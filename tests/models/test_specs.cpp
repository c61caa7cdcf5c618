// The typed values a scenario arrives as (LayoutSpec, MaskSpec, DocumentsSpec, Strategy): every
// family ringsim knows parses, keeps its text and names the family implementations list; every
// malformed parameter is refused at the parse with its field, before anything is built.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/implementations/strategy.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "models/workload/documents.hpp"
#include "models/workload/documents_spec.hpp"
#include "models/workload/layout_spec.hpp"
#include "models/workload/mask_spec.hpp"

using namespace ringsim::models;

namespace {

// One valid spelling of every family (the lists below must cover known_*_families()).
const std::vector<std::string> kLayouts = {"contiguous", "ring",           "striped",        "zigzag",
                                           "cyclic:4",   "perm:tokens.txt", "bucket-striped", "bucket-rotated",
                                           "doc-zigzag", "doc-zigzag-docmajor", "ptrr",       "ptrr:64"};
const std::vector<std::string> kMasks = {"causal", "full",        "window:64", "docs:starts.txt", "qkdrop:0.25",
                                         "hash:8", "hash:8:zipf:1.5", "lsh:8", "lsh:8:32", "qkfile:q.csv",
                                         "hashfile:h.csv"};

template <class F>
std::string field_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.field();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("every layout family parses once, keeps its text and names its family", "[specs]") {
  std::vector<std::string> families;
  for (const auto& t : kLayouts) {
    INFO(t);
    const auto l = LayoutSpec::parse(t);
    CHECK(l.text() == t);
    const auto name = t.substr(0, t.find(':'));
    CHECK(l.family_name() == (name == "ring" ? std::string("contiguous") : name));
    families.push_back(l.family_name());
    // Built from a mask, from documents, or from n_seq alone: exactly one of them.
    const bool plain = !l.from_mask() && !l.from_documents();
    CHECK(l.from_mask() + l.from_documents() + plain == 1);
    CHECK(l.is_permutation() == (l.family() == LayoutFamily::Permutation || !plain));
  }
  for (const auto& f : known_layout_families())
    CHECK(std::find(families.begin(), families.end(), f) != families.end());
  CHECK(LayoutSpec::parse("cyclic:4").width() == 4);
  CHECK(LayoutSpec::parse("perm:tokens.txt").file() == "tokens.txt");
  CHECK(LayoutSpec::parse("ptrr").block() == kDefaultPtrrBlock);
  CHECK(LayoutSpec::parse("ptrr:64").block() == 64);
  CHECK(LayoutSpec{} == LayoutSpec::parse("contiguous"));
}

TEST_CASE("a malformed layout is refused at the parse, with field layout", "[specs][errors]") {
  for (const char* bad : {"", "spiral", "cyclic", "cyclic:", "cyclic:0", "cyclic:-2", "cyclic:x", "perm:", "striped:2",
                          "zigzag:3", "doc-zigzag:4", "bucket-striped:1", "ptrr:0", "ptrr:x", "ring:1"}) {
    INFO(bad);
    CHECK(field_of([&] { (void)LayoutSpec::parse(bad); }) == "layout");
  }
}

TEST_CASE("every mask family parses once, with its parameters", "[specs]") {
  std::vector<std::string> families;
  for (const auto& t : kMasks) {
    INFO(t);
    const auto m = MaskSpec::parse(t);
    CHECK(m.text() == t);
    CHECK(m.family_name() == t.substr(0, t.find(':')));
    families.push_back(m.family_name());
  }
  for (const auto& f : known_mask_families())
    CHECK(std::find(families.begin(), families.end(), f) != families.end());
  CHECK(MaskSpec::parse("window:64").window() == 64);
  CHECK(MaskSpec::parse("qkdrop:0.25").drop_rate() == 0.25);
  CHECK(MaskSpec::parse("hash:8:zipf:1.5").buckets() == 8);
  CHECK(MaskSpec::parse("hash:8:zipf:1.5").zipf() == 1.5);
  CHECK(MaskSpec::parse("hash:8").zipf() == 0);
  CHECK(MaskSpec::parse("lsh:8").dim() == 64);
  CHECK(MaskSpec::parse("lsh:8:32").dim() == 32);
  CHECK(MaskSpec::parse("hashfile:h.csv").file() == "h.csv");
  for (const char* sparse : {"qkdrop:0.5", "hash:4", "lsh:4", "qkfile:a", "hashfile:b"}) CHECK(MaskSpec::parse(sparse).sparse());
  for (const char* dense : {"causal", "full", "window:8", "docs:f"}) CHECK_FALSE(MaskSpec::parse(dense).sparse());
  CHECK(MaskSpec::packed_documents().family_name() == "docs");
  CHECK(MaskSpec::packed_documents().file().empty());
}

TEST_CASE("a malformed mask is refused at the parse, with field mask", "[specs][errors]") {
  for (const char* bad : {"", "triangle", "causal:1", "full:x", "window", "window:0", "window:-3", "qkdrop", "qkdrop:1.5",
                          "qkdrop:-0.1", "qkdrop:x", "hash:0", "hash:x", "hash:4:zipf", "hash:4:zipf:-1", "hash:4:pareto:1",
                          "lsh:8:32:1", "lsh:x", "qkfile:", "hashfile:", "docs:"}) {
    INFO(bad);
    CHECK(field_of([&] { (void)MaskSpec::parse(bad); }) == "mask");
  }
}

TEST_CASE("documents parse once: a file, a log-normal draw, or lengths given by the caller", "[specs]") {
  const auto l = DocumentsSpec::parse("lognormal:2000:1.5:42:16");
  CHECK(l.source() == DocumentsSource::Lognormal);
  CHECK(l.mean() == 2000);
  CHECK(l.sigma() == 1.5);
  CHECK(l.seed() == 42);
  CHECK(l.quantum() == 16);
  CHECK(DocumentsSpec::parse("lognormal:2000:1.5:42").quantum() == 1);
  // The parsed draw is the one Documents::lognormal makes from the same numbers.
  CHECK(Documents::make(l, 1 << 16).lengths == Documents::lognormal(2000, 1.5, 42, 16, 1 << 16).lengths);
  const auto f = DocumentsSpec::parse("lengths.csv");
  CHECK(f.source() == DocumentsSource::File);
  CHECK(f.file() == "lengths.csv");
  const auto g = DocumentsSpec::given("packed");
  CHECK(g.source() == DocumentsSource::Given);
  CHECK(g.text() == "packed");
  // Lengths handed over by a planner are never read from a file of that name.
  CHECK(field_of([&] { (void)Documents::make(g, 1024); }) == "docs");
  for (const char* bad : {"", "lognormal:", "lognormal:1:2", "lognormal:x:1:1", "lognormal:100:1:-1", "lognormal:100:1:1:0",
                          "lognormal:100:1:1:2:3"}) {
    INFO(bad);
    CHECK(field_of([&] { (void)DocumentsSpec::parse(bad); }) == "docs");
  }
}

TEST_CASE("strategies name their family whatever the spelling", "[specs]") {
  CHECK(Strategy{}.family_name() == "ring");
  CHECK(Strategy::parse("all-gather").family_name() == "allgather");
  CHECK(Strategy::parse("hybrid:2x4").family_name() == "usp");
  CHECK(Strategy::parse("usp:2x4:ring-inner").family_name() == "usp");
  CHECK(Strategy::parse("double-ring:2").family_name() == "double-ring");
  CHECK(Strategy::parse("ulysses").text() == "ulysses");
  for (const auto& f : Strategy::families()) {
    const std::string example = f == "usp" ? "usp:2x2" : f == "double-ring" ? "double-ring:2" : f;
    CHECK(Strategy::parse(example).family_name() == f);
  }
  CHECK(parse_strategies({"ring", "ulysses"}).size() == 2);
  CHECK(field_of([] { (void)parse_strategies({"ring", "spiral"}); }) == "cp");
}

TEST_CASE("token counts and rates read as the outputs print them", "[specs][parse]") {
  using ringsim::models::parse_metric_rate;
  using ringsim::models::parse_token_count;
  // Any integer, and any multiple of 1024 (of 1024^2) written with k (M), reads back as itself.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const auto n = static_cast<std::int64_t>(rng() % (std::int64_t{1} << 40)) + 1;
    CHECK(parse_token_count(std::to_string(n), "seq") == n);
    CHECK(parse_token_count(std::to_string(n % 100000 + 1) + "k", "seq") == (n % 100000 + 1) * 1024);
    CHECK(parse_token_count(std::to_string(n % 1000 + 1) + "M", "seq") == (n % 1000 + 1) * 1024 * 1024);
  }
  CHECK(parse_token_count("128k", "seq") == 131072);
  CHECK(parse_token_count("1M", "seq") == 1048576);
  CHECK(parse_token_count("1.5k", "seq") == 1536);
  CHECK(parse_token_count(" 2G ", "seq") == std::int64_t{2} << 30);
  for (const char* bad : {"0", "-1", "1e9", "0x10", "1.5", "nan", "inf", "", "k", "1.0001k", "12kk", "+5", "1048577G",
                          "4611686018427387904"}) {
    try {
      (void)parse_token_count(bad, "seq");
      FAIL(std::string("accepted ") + bad);
    } catch (const ringsim::models::InputError& e) {
      CHECK(e.field() == "seq");
    }
  }
  // A KV cache's tokens: the same forms, or 0, up to a bound.
  using ringsim::models::parse_token_count_or_zero;
  CHECK(parse_token_count_or_zero("0", "cached-tokens", 1 << 20) == 0);
  CHECK(parse_token_count_or_zero(" 0 ", "cached-tokens", 1 << 20) == 0);
  CHECK(parse_token_count_or_zero("128k", "cached-tokens", 1 << 20) == 131072);
  CHECK(parse_token_count_or_zero("1M", "cached-tokens", 1 << 20) == 1 << 20);
  for (const char* bad : {"1025k", "-1", "00k", "1.5", ""})
    try {
      (void)parse_token_count_or_zero(bad, "cached-tokens", 1 << 20);
      FAIL(std::string("accepted ") + bad);
    } catch (const ringsim::models::InputError& e) {
      CHECK(e.field() == "cached-tokens");
    }
  CHECK(parse_metric_rate("200k", "rate") == 200000);
  CHECK(parse_metric_rate("34.7 k", "rate") == Approx(34700));
  CHECK(parse_metric_rate("1.5M", "rate") == Approx(1.5e6));
  CHECK(parse_metric_rate("250", "rate") == 250);
  CHECK(parse_metric_rate("1e6", "rate") == 1e6);
  for (const char* bad : {"0", "-3", "-1e5", "nan", "inf", "1e400", "k", "200 kk"})
    CHECK_THROWS_AS(parse_metric_rate(bad, "rate"), ringsim::models::InputError);
}
