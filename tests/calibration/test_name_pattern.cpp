// The kernel-name patterns of the class rules (calibration/trace/name_pattern.hpp): the same
// matches as std::regex_search (ECMAScript, icase) on random patterns of the supported subset and
// random names (the oracle), work linear in the name whatever the pattern (a 100k-character name,
// an exponential pattern), and the constructs outside the subset refused at load with file and
// field. Work is counted in instructions visited, never timed.
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "calibration/trace/kernel_classes.hpp"
#include "calibration/trace/name_pattern.hpp"
#include "models/io/error.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trace_support.hpp"

using namespace ringsim;
using calibration::NamePattern;
using calibration::OpClass;

namespace {

// A random pattern of the subset. Quantified groups hold no quantifier themselves, which keeps
// std::regex (the oracle, a backtracker) quick on the short names it is given.
class RandomPattern {
 public:
  explicit RandomPattern(std::uint32_t seed) : rng_(seed) {}

  std::string make() { return sequence(0, true); }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string sequence(int depth, bool may_quantify) {
    std::string s;
    const int n = 1 + pick(3);
    for (int i = 0; i < n; ++i) s += item(depth, may_quantify);
    if (pick(4) == 0) s += "|" + item(depth, may_quantify);
    return s;
  }

  std::string item(int depth, bool may_quantify) {
    static const char* const kLiterals[] = {"a", "b", "A", "_", ":", "1", "c", "\\.", "\\:"};
    static const char* const kClasses[] = {"[ab]", "[^a]", "[a-c]", "\\w", "\\d", "\\W", "[A-B_]", "[^B1]", "\\s", "[:]", "."};
    static const char* const kAsserts[] = {"^", "$", "\\b", "\\B"};
    static const char* const kQuantifiers[] = {"*", "+", "?", "{0,2}", "{1,3}", "{2}", "*?", "+?", "{1,}"};
    std::string atom;
    switch (pick(depth > 1 ? 6 : 9)) {
      case 0:
      case 1:
      case 2: atom = kLiterals[pick(9)]; break;
      case 3:
      case 4: atom = kClasses[pick(11)]; break;
      case 5: return kAsserts[pick(4)];
      default: {
        const bool quantified = may_quantify && pick(2) == 0;
        atom = std::string(pick(2) ? "(" : "(?:") + sequence(depth + 1, !quantified) + ")";
        if (quantified) atom += kQuantifiers[pick(9)];
        return atom;
      }
    }
    if (may_quantify && pick(3) == 0) atom += kQuantifiers[pick(9)];
    return atom;
  }

  std::mt19937 rng_;
};

std::uint64_t bound(const NamePattern& p, std::size_t length) { return 2 * p.program_size() * (length + 1); }

}  // namespace

TEST_CASE("name patterns match as std::regex_search does (ECMAScript, case-insensitive)", "[trace][pattern]") {
  RandomPattern patterns(20240617);
  std::mt19937 rng(7);
  const std::string alphabet = "abcAB_:1 .";
  std::size_t compared = 0, matched = 0;
  for (int t = 0; t < 400; ++t) {
    const std::string p = patterns.make();
    INFO("pattern " << p);
    const std::regex oracle(p, std::regex::ECMAScript | std::regex::icase);
    const auto mine = NamePattern::compile(p);
    for (int k = 0; k < 15; ++k) {
      std::string name;
      const int length = std::uniform_int_distribution<int>(0, 8)(rng);
      for (int i = 0; i < length; ++i) name += alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)];
      INFO("name '" << name << "'");
      std::uint64_t steps = 0;
      const bool found = mine.search(name, &steps);
      CHECK(found == std::regex_search(name, oracle));
      CHECK(steps <= bound(mine, name.size()));
      ++compared, matched += found;
    }
  }
  // Both outcomes well represented: the oracle is not trivially agreed with.
  CHECK(matched > compared / 10);
  CHECK(compared - matched > compared / 10);
}

TEST_CASE("a name of 100k characters and an exponential pattern: work linear in the name", "[trace][pattern][hostile]") {
  // std::regex recursed once per character here (`.*` over 100k characters overflowed the stack)
  // and backtracked exponentially on (a+)+b over a run of a's.
  const std::string middle(100000, 'x');
  const auto sdpa = NamePattern::compile("sdpa.*fprop");
  std::uint64_t steps = 0;
  CHECK(sdpa.search("cudnn_generated_fort_native_sdpa_" + middle + "_fprop_kernel", &steps));
  CHECK(steps <= bound(sdpa, middle.size() + 50));
  CHECK_FALSE(sdpa.search("cudnn_generated_fort_native_sdpa_" + middle, &steps));

  const auto exponential = NamePattern::compile("(a+)+b");
  std::uint64_t short_steps = 0, long_steps = 0;
  CHECK_FALSE(exponential.search(std::string(20000, 'a'), &short_steps));
  CHECK_FALSE(exponential.search(std::string(40000, 'a'), &long_steps));
  CHECK(long_steps <= bound(exponential, 40000));
  // Twice the name, twice the work (within a few instructions): linear, not exponential.
  CHECK(static_cast<double>(long_steps) / static_cast<double>(short_steps) == Approx(2.0).epsilon(0.01));
  CHECK(exponential.search(std::string(40000, 'a') + "b"));
  for (const char* p : {"(a|a)*c", "(a*)*c", "((a+)+)+c", "(a|aa)+c", "(x+x+)+y"}) {
    INFO(p);
    const auto q = NamePattern::compile(p);
    CHECK_FALSE(q.search(std::string(30000, p[1] == 'x' ? 'x' : 'a'), &steps));
    CHECK(steps <= bound(q, 30000));
  }
}

TEST_CASE("the kernel classes of a 100k-character name: no crash, the right class", "[trace][pattern][hostile]") {
  const auto& k = test::trace_classes();
  calibration::GpuOp op;
  const std::string filler(100000, 'x');
  op.name = "cudnn_generated_fort_native_sdpa_sm90_" + filler + "_flash_fprop_kernel";
  CHECK(k.classify(op) == OpClass::AttentionFwd);
  op.name = "void dpsk::ep::internode::combine<false, 8>(" + filler + ")";
  CHECK(k.classify(op) == OpClass::Collective);
  op.name = "void some::kernel<" + filler + ">";
  CHECK(k.classify(op) == OpClass::Other);
  op.name = std::string(100000, 'a');  // the exponential pattern's favourite
  CHECK(k.classify(op) == OpClass::Other);
}

TEST_CASE("patterns outside the subset are refused at load, naming the file, rule and reason", "[trace][pattern]") {
  const auto refused = [](const char* p, const char* reason) {
    INFO(p);
    CHECK_THROWS_WITH(NamePattern::compile(p), Catch::Contains(reason));
  };
  refused("(a)\\1", "back-references");
  refused("a(?=b)", "lookaround");
  refused("(?<n>a)", "lookaround");
  refused("(unclosed", "unbalanced '('");
  refused("a)", "unbalanced ')'");
  refused("[ab", "unbalanced '['");
  refused("*a", "nothing to repeat");
  refused("a**", "two quantifiers");
  refused("^*", "after an assertion");
  refused("a{2,1}", "m < n");
  refused("a{1001}", "above 1000");
  refused("a{", "starts a repetition");
  refused("\\u0041", "\\u is not supported");
  refused("[z-a]", "out of order");
  refused("\\", "ending in a backslash");
  refused(std::string(64 + 1, '(').append("a").append(65, ')').c_str(), "nested deeper than 64");
  refused(std::string(4097, 'a').c_str(), "longer than 4096");
  refused("(((a{1000}){1000}){1000})", "more than 50000 instructions");
  // What the subset holds, as ECMAScript reads it.
  CHECK(NamePattern::compile("nccl(Dev)?Kernel_(SendRecv|Send|Recv)").search("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"));
  CHECK(NamePattern::compile("^bmm_[a-z0-9]+_[a-z0-9]+_Fp32_").search("bmm_MxE4m3_MxE2m1MxE4m3_Fp32_Ab32_Bb32"));
  CHECK_FALSE(NamePattern::compile("^bmm_").search("xbmm_Bfloat16"));
  CHECK(NamePattern::compile("Gen\\b").search("fmhaSm100aKernel_QkvE4m3OBfloat16H128PagedKvDenseP64VarSeqQ8Kv128StaticSwapsAbForGen"));
  CHECK(NamePattern::compile("[\\]x]\\x41").search("]a"));
  CHECK(NamePattern::compile("a{2,}?$").search("baa"));
  CHECK_FALSE(NamePattern::compile("[]").search("anything"));

  test::TempDir dir;
  try {
    (void)calibration::KernelClasses::load(
        dir.write("c.json", R"({"rules": [{"class": "gemm", "patterns": ["gemm"]}, {"class": "other", "patterns": ["ok", "(a)\\1"]}]})"));
    FAIL("accepted");
  } catch (const models::InputError& e) {
    CHECK(e.file() == dir.file("c.json"));
    CHECK(e.field() == "rules[1].patterns");
    CHECK_THAT(std::string(e.what()), Catch::Contains("pattern 1") && Catch::Contains("back-references"));
  }
}
