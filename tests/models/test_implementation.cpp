// The implementation axis: every implementation file loads and cites the code it describes,
// profiles are keyed by (hardware, implementation), the default is the most preferred
// implementation that offers what the scenario asks for, and an implementation that does not
// offer something says what it does offer.
#include <filesystem>
#include <random>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/analytic/analytic.hpp"
#include "models/families/attention_cost.hpp"
#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"
#include "models/catalog/resolve.hpp"

using namespace ringsim::models;
namespace fs = std::filesystem;

TEST_CASE("every implementation loads, cites code at a commit and offers only known families", "[config][impl]") {
  const Catalog cat;
  const auto names = cat.implementation_names();
  REQUIRE(names.size() >= 3);
  const auto families = attention_cost_families();
  for (const auto& n : names) {
    INFO(n);
    const auto im = cat.implementation(n);
    CHECK(im.name == n);
    CHECK_FALSE(im.sources.empty());
    for (const auto& s : im.sources) CHECK(s.commit.size() == 40);
    for (const auto& l : im.layouts) CHECK(std::find(known_layout_families().begin(), known_layout_families().end(), l) !=
                                           known_layout_families().end());
    for (const auto& m : im.masks) CHECK(std::find(known_mask_families().begin(), known_mask_families().end(), m) !=
                                         known_mask_families().end());
    for (const auto& c : im.strategies)
      CHECK(std::find(Strategy::families().begin(), Strategy::families().end(), c) != Strategy::families().end());
    CHECK(std::find(families.begin(), families.end(), im.kernel) != families.end());
  }
}

TEST_CASE("profiles live under their implementation and name it", "[config][impl]") {
  const Catalog cat;
  const auto hardware = cat.hardware_names();
  std::int64_t seen = 0;
  for (const auto& impl : cat.implementation_names()) {
    const fs::path dir = fs::path(cat.root()) / "configs" / "profiles" / impl;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      const auto hw_name = e.path().stem().string();
      INFO(e.path().string());
      REQUIRE(std::find(hardware.begin(), hardware.end(), hw_name) != hardware.end());
      const auto p = cat.profile("", cat.hardware(hw_name), impl);
      CHECK(p.implementation == impl);
      CHECK(p.hardware == hw_name);
      CHECK(p.name == impl + "/" + hw_name);
      ++seen;
    }
  }
  CHECK(seen >= 4);
  // No profile file: spec defaults, marked uncalibrated, still keyed by the implementation.
  const auto p = cat.profile("", cat.hardware("b200"), "ringsim-tiles");
  CHECK_FALSE(p.provenance.calibrated);
  CHECK(p.implementation == "ringsim-tiles");
  // A profile of one implementation cannot time another.
  CHECK_THROWS_AS(cat.profile("jax-blockwise/a100-80gb", cat.hardware("a100-80gb"), "scfa"), InputError);
}

TEST_CASE("the default implementation is the most preferred one that offers the scenario", "[impl]") {
  // Brute force over the catalog: the choice offers everything asked, and nothing preferred does.
  const Catalog cat;
  std::vector<Implementation> all;
  for (const auto& n : cat.implementation_names()) all.push_back(cat.implementation(n));
  std::vector<std::vector<LayoutSpec>> layout_sets;
  for (const auto& set : std::vector<std::vector<std::string>>{
           {}, {"contiguous"}, {"contiguous", "striped"}, {"zigzag"}, {"cyclic:4"}, {"contiguous", "striped", "zigzag"}})
    layout_sets.push_back(parse_layouts(set));
  const Strategy ring;
  std::int64_t checked = 0;
  for (const auto phase : {RunPhase::Train, RunPhase::Prefill, RunPhase::Decode})
  for (const auto& hw_name : cat.hardware_names()) {
    const auto hw = cat.hardware(hw_name);
    for (const char* mask_text : {"causal", "full", "window:64", "hash:8", "qkdrop:0.5"})
      for (const auto& layouts : layout_sets) {
        INFO(to_string(phase) << " on " << hw_name << " " << mask_text);
        const auto mask = MaskSpec::parse(mask_text);
        auto offers = [&](const Implementation& im) {
          // A ring library's steps decide which layouts run under which mask (zigzag and stripe
          // steps are causal only): Implementation::offers, what check_offers accepts; and it
          // runs the phase (a serving stack no training step).
          return im.runs_phase(phase) && im.runs_on(hw.kind) && im.offers_mask(mask) && im.offers_strategy(ring) &&
                 std::all_of(layouts.begin(), layouts.end(), [&](const auto& l) { return im.offers(hw.kind, l, mask, ring); });
        };
        const bool any = std::any_of(all.begin(), all.end(), offers);
        if (!any) {
          CHECK_THROWS_AS(cat.default_implementation(hw, mask, ring, layouts, false, phase), InputError);
          continue;
        }
        const auto d = cat.default_implementation(hw, mask, ring, layouts, false, phase);
        CHECK(offers(d));
        // A production library before a research kernel before the reference kernels, then preference.
        auto rank = [](const Implementation& im) { return std::pair{static_cast<int>(im.maturity), im.preference}; };
        for (const auto& im : all)
          if (offers(im)) CHECK(rank(d) <= rank(im));
        // production_only: the same among production libraries, or none.
        const bool any_production = std::any_of(all.begin(), all.end(), [&](const Implementation& im) {
          return offers(im) && im.maturity == Maturity::Production;
        });
        if (any_production) {
          const auto p = cat.default_implementation(hw, mask, ring, layouts, true, phase);
          CHECK(p.maturity == Maturity::Production);
          if (d.maturity == Maturity::Production) CHECK(p.name == d.name);
        } else {
          CHECK_THROWS_AS(cat.default_implementation(hw, mask, ring, layouts, true, phase), InputError);
        }
        ++checked;
      }
  }
  CHECK(checked > 150);
}

TEST_CASE("an implementation says which phases it runs, and a scenario of another phase is refused", "[impl][phase]") {
  const Catalog cat;
  // The training libraries run every phase (their forward is a prefill's); the serving stack runs
  // prefill and decode, and is what those phases choose on a GPU when no library is named.
  const auto rfa = cat.implementation("ring-flash-attn");
  for (const auto phase : {RunPhase::Train, RunPhase::Prefill, RunPhase::Decode}) CHECK(rfa.runs_phase(phase));
  const auto serve = cat.implementation("cp-serve");
  CHECK_FALSE(serve.runs_phase(RunPhase::Train));
  CHECK(serve.runs_phase(RunPhase::Prefill));
  CHECK(serve.runs_phase(RunPhase::Decode));
  CHECK(serve.phases_text() == "prefill and decode");
  const auto h100 = cat.hardware("h100-sxm");
  const Strategy ring;
  const auto causal = MaskSpec::parse("causal");
  const auto zigzag = parse_layouts({"zigzag"});
  CHECK(cat.default_implementation(h100, causal, ring, zigzag, true, RunPhase::Prefill).name == "cp-serve");
  CHECK(cat.default_implementation(h100, causal, ring, {}, true, RunPhase::Decode).name == "cp-serve");
  CHECK(cat.default_implementation(h100, causal, ring, zigzag, true, RunPhase::Train).name != "cp-serve");

  ScenarioSpec s;
  s.hardware = "h100-sxm";
  s.model = "llama3-8b";
  s.sp = 8;
  s.n_seq = 65536;
  s.layout = LayoutSpec::parse("zigzag");
  s.impl = "cp-serve";
  try {
    (void)resolve(s, cat);  // a training step (ScenarioSpec's phase by default)
    FAIL("a training step ran on a serving stack");
  } catch (const InputError& e) {
    CHECK(e.field() == "impl");
    CHECK_THAT(std::string(e.what()), Catch::Contains("prefill and decode only") && Catch::Contains("--phase"));
  }
  s.phase = RunPhase::Prefill;
  CHECK(resolve(s, cat).impl.name == "cp-serve");

  // The file's "phases": known names once each; a flash ring library that never trains needs no
  // training ring steps.
  auto j = read_json_file(cat.root() + "/configs/implementations/cp-serve.json");
  j["phases"] = nlohmann::json::array({"prefill", "serve"});
  CHECK_THROWS_WITH(Implementation::from_json(j, "x.json", cat.root() + "/configs"), Catch::Contains("phases"));
  j["phases"] = nlohmann::json::array({"decode", "decode"});
  CHECK_THROWS_WITH(Implementation::from_json(j, "x.json", cat.root() + "/configs"), Catch::Contains("named twice"));
  j["phases"] = nlohmann::json::array();
  CHECK_THROWS_AS(Implementation::from_json(j, "x.json", cat.root() + "/configs"), InputError);
  j["phases"] = nlohmann::json::array({"train", "prefill"});
  CHECK_THROWS_WITH(Implementation::from_json(j, "x.json", cat.root() + "/configs"), Catch::Contains("ring_steps"));
  j.erase("phases");
  CHECK_THROWS_WITH(Implementation::from_json(j, "x.json", cat.root() + "/configs"), Catch::Contains("ring_steps"));
}

TEST_CASE("an implementation says how far a user can deploy it", "[impl][config]") {
  const Catalog cat;
  CHECK(cat.implementation("ring-flash-attn").maturity == Maturity::Production);
  CHECK(cat.implementation("te-p2p").maturity == Maturity::Production);
  CHECK(cat.implementation("scfa").maturity == Maturity::Research);
  CHECK(cat.implementation("jax-blockwise").maturity == Maturity::Research);
  CHECK(cat.implementation("ringsim-tiles").maturity == Maturity::Reference);
  auto j = read_json_file(cat.root() + "/configs/implementations/scfa.json");
  j["maturity"] = "experimental";
  try {
    (void)Implementation::from_json(j, "x.json", cat.root() + "/configs");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.field() == "maturity");
  }
  j.erase("maturity");
  CHECK_THROWS_AS(Implementation::from_json(j, "x.json", cat.root() + "/configs"), InputError);
}

TEST_CASE("an implementation that does not offer something names what it offers", "[impl][errors]") {
  const Catalog cat;
  ScenarioSpec s;
  s.hardware = "a100-80gb";
  s.model = "ringattn-1b";
  s.sp = 4;
  s.n_seq = 16384;
  s.impl = "jax-blockwise";
  s.layout = ringsim::models::LayoutSpec::parse("zigzag");
  try {
    (void)resolve(s, cat);
    FAIL("jax-blockwise accepted zigzag");
  } catch (const InputError& e) {
    CHECK(e.field() == "layout");
    CHECK(std::string(e.what()).find("contiguous, striped") != std::string::npos);
  }
  s.layout = ringsim::models::LayoutSpec::parse("striped");
  s.impl = "no-such";
  CHECK_THROWS_WITH(resolve(s, cat), Catch::Contains("unknown implementation") && Catch::Contains("jax-blockwise"));
  s.impl = "";
  CHECK_THROWS_WITH(LayoutSpec::parse("spiral"), Catch::Contains("unknown layout"));
  CHECK_THROWS_WITH(MaskSpec::parse("tent:3"), Catch::Contains("unknown mask"));
  CHECK_THROWS_WITH(Strategy::parse("spiral"), Catch::Contains("strategy"));
}

TEST_CASE("every known layout and mask family parses (the lists are in step with the parsers)", "[impl]") {
  const Catalog cat;
  ScenarioSpec s;
  s.hardware = "a100-80gb";
  s.model = "attn:8:8:64";
  s.sp = 4;
  s.n_seq = 4096;
  s.tile = TileShape{128, 128};
  s.impl = "ringsim-tiles";
  const std::set<std::string> need_file = {"perm", "docs", "qkfile", "hashfile"};
  for (const auto& l : known_layout_families()) {
    if (need_file.count(l)) continue;
    INFO(l);
    s.layout = LayoutSpec::parse(l == "cyclic" ? "cyclic:4" : l);
    s.mask = MaskSpec::parse(l.starts_with("bucket") ? "hash:4" : "causal");
    // Document layouts balance packed documents: lengths that split into 2 x sp chunks.
    s.docs.reset();
    if (l.starts_with("doc-") || l == "ptrr")
      s.docs = DocumentsSpec::parse("lognormal:1000:1:7:" + std::to_string(std::max<std::int64_t>(2 * s.sp, 128 * s.sp)));
    CHECK_NOTHROW(resolve(s, cat));
  }
  s.docs.reset();
  s.layout = ringsim::models::LayoutSpec::parse("contiguous");
  for (const auto& m : known_mask_families()) {
    if (need_file.count(m)) continue;
    INFO(m);
    s.mask = MaskSpec::parse(m == "window" ? "window:64" : m == "qkdrop" ? "qkdrop:0.5" : m == "hash" || m == "lsh" ? m + ":4" : m);
    CHECK_NOTHROW(resolve(s, cat));
  }
}

TEST_CASE("a resolved scenario carries its implementation, strategy and a matching profile", "[impl]") {
  const Catalog cat;
  ScenarioSpec s;
  s.hardware = "a100-40gb";
  s.model = "attn:8:8:64";
  s.sp = 1;
  s.n_seq = 4096;
  s.mask = ringsim::models::MaskSpec::parse("hash:8");
  const auto r = resolve(s, cat);
  // Only SCFA's kernels run hash masks on a GPU among the shipped implementations' preferred ones.
  CHECK(r.impl.offers_mask(MaskSpec::parse("hash:8")));
  CHECK(r.profile.implementation == r.impl.name);
  CHECK(r.strategy.kind == StrategyKind::Ring);
  REQUIRE(r.attention);
  CHECK(r.attention->family() == r.impl.kernel);
  // The analytic model takes every round from the implementation's kernel family.
  const auto p = predict(r);
  double sum = 0;
  for (std::int64_t i = 0; i < r.workload->rounds(); ++i) sum += round_cost(r, i).fwd_max_s + r.profile.round_overhead_s;
  CHECK(p.rounds_fwd.size() == 1);
  CHECK(p.rounds_fwd.front().compute_max_s == Approx(round_cost(r, 0).fwd_max_s));
  CHECK(sum > 0);
}

TEST_CASE("a call's tile counts equal a brute-force count and the contiguous ring's blocks", "[impl][calls]") {
  std::mt19937_64 rng(7);
  auto pick = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 400; ++trial) {
    AttentionCall c;
    c.q_len = pick(1, 40);
    c.k_len = pick(1, 40);
    c.causal = pick(0, 3) != 0;
    c.diagonal = pick(-45, 45);
    const TileShape t{pick(1, 9), pick(1, 9)};
    BlockStats want;
    for (std::int64_t r0 = 0; r0 < c.q_len; r0 += t.q)
      for (std::int64_t k0 = 0; k0 < c.k_len; k0 += t.k) {
        std::int64_t allowed = 0, area = 0;
        for (std::int64_t i = r0; i < std::min(c.q_len, r0 + t.q); ++i)
          for (std::int64_t j = k0; j < std::min(c.k_len, k0 + t.k); ++j) {
            ++area;
            allowed += !c.causal || j <= i + c.diagonal;
          }
        ++want.tiles_total;
        want.allowed_pairs += allowed;
        if (allowed > 0) {
          ++want.tiles_computed;
          ++want.tiles_visited;
          want.visited_area += area;
          if (allowed < area) {
            want.masked_area += area;
            ++want.tiles_masked;
          }
        } else {
          want.skipped_area += area;
        }
      }
    INFO(c.q_len << "x" << c.k_len << " causal " << c.causal << " diagonal " << c.diagonal << " tile " << t.q << "x" << t.k);
    CHECK(call_tiles(c, t) == want);
    // The closed forms the per-call timing uses.
    CHECK(call_tiles_visited(c, t) == want.tiles_visited);
    CHECK(call_allowed_pairs(c) == want.allowed_pairs);
  }
  // And on long calls, against call_tiles' row-by-row sums (brute force is too slow there).
  for (int trial = 0; trial < 2000; ++trial) {
    AttentionCall c;
    c.q_len = pick(1, 70000);
    c.k_len = pick(1, 70000);
    c.causal = true;
    c.diagonal = pick(-70000, 70000);
    const TileShape t{pick(1, 300), pick(1, 300)};
    INFO(c.q_len << "x" << c.k_len << " diagonal " << c.diagonal << " tile " << t.q << "x" << t.k);
    const auto b = call_tiles(c, t);
    CHECK(call_tiles_visited(c, t) == b.tiles_visited);
    CHECK(call_allowed_pairs(c) == b.allowed_pairs);
  }
  // The contiguous ring's block (j, k) under a causal mask is a square causal call whose diagonal
  // sits (j - k) c keys to the right.
  const std::int64_t n = 4, block = 48;
  const auto layout = Layout::contiguous(n * block, n);
  const auto causal = make_causal();
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t k = 0; k < n; ++k) {
      AttentionCall c;
      c.q_len = c.k_len = block;
      c.causal = true;
      c.diagonal = (j - k) * block;
      CHECK(call_tiles(c, {16, 12}) == Workload::count_block(layout, *causal, j, k, {16, 12}));
    }
}

TEST_CASE("the blockwise family times a call as the equivalent ring block", "[impl][calls]") {
  const Catalog cat;
  ScenarioSpec s;
  s.hardware = "a100-80gb";
  s.impl = "jax-blockwise";
  s.model = "ringattn-1b";
  s.sp = 4;
  s.n_seq = 4 * 4096;
  s.tile = TileShape{512, 1024};
  const auto r = resolve(s, cat);
  for (std::int64_t j = 0; j < 4; ++j)
    for (std::int64_t k = 0; k < 4; ++k) {
      AttentionCall c;
      c.q_len = c.k_len = 4096;
      c.causal = true;
      c.diagonal = (j - k) * 4096;
      c.heads = r.cost->heads_per_device();
      c.kv_heads = r.cost->kv_heads_per_device();
      const auto a = r.attention->call(r, c);
      const auto b = r.attention->block(r, j, k, Workload::count_block(*r.layout, *r.mask, j, k, r.tile));
      CHECK(a.fwd_s == Approx(b.fwd_s).epsilon(1e-12));
      CHECK(a.bwd_s == Approx(b.bwd_s).epsilon(1e-12));
      CHECK(a.tiles == b.tiles);
    }
}
