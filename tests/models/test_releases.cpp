// An implementation's earlier releases (models/implementations/release.hpp): NAME@RELEASE runs the
// release's kernel choice with everything else the newest release's; on a GPU where the release
// calls the newest one's kernel it is the newest release, step for step; unknown releases and
// malformed "releases" entries are one line naming the field.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <tuple>
#include <vector>

#include "models/analytic/analytic.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"

using namespace ringsim::models;

namespace {

ScenarioSpec ring_scenario(const std::string& hardware, const std::string& impl) {
  ScenarioSpec s;
  s.hardware = hardware;
  s.model = "llama3-8b";
  s.sp = 8;
  s.n_seq = 131072;
  s.impl = impl;
  s.layout = LayoutSpec::parse("zigzag");
  return s;
}

std::string impl_error(const Catalog& cat, const std::string& name) {
  try {
    (void)cat.implementation(name);
  } catch (const InputError& e) {
    CHECK(e.field() == "impl");
    return e.message();
  }
  FAIL("expected InputError for " + name);
  return {};
}

}  // namespace

TEST_CASE("TransformerEngine 1.2 runs context parallelism through FlashAttention-2 on every GPU", "[impl][release]") {
  const Catalog cat;
  const auto newest = cat.implementation("te-p2p");
  const auto old = cat.implementation("te-p2p@1.2");
  CHECK(old.name == "te-p2p@1.2");
  CHECK(old.release == "1.2");
  for (const std::int64_t cc : {80, 89, 90, 100}) {
    INFO(cc);
    REQUIRE(old.kernel_for(cc));
    CHECK(old.kernel_for(cc)->name == "flash-attn-2");
  }
  CHECK(newest.kernel_for(90)->name == "cudnn-fused");
  // The rest is the newest release's: the same loop, strategies and layouts.
  CHECK(old.strategies == newest.strategies);
  CHECK(old.layouts == newest.layouts);
  CHECK(old.protocol.ring_steps.empty() == newest.protocol.ring_steps.empty());
  // Its own name for the newest release is the newest release.
  const auto named = cat.implementation("te-p2p@" + newest.release);
  CHECK(named.kernel_for(90)->name == "cudnn-fused");
}

TEST_CASE("a release calling the newest one's kernel on a GPU predicts the newest one's step there", "[impl][release]") {
  const Catalog cat;
  // On the A100 both releases call FlashAttention-2: the newest release's profile, the same step.
  const auto a = predict(resolve(ring_scenario("a100-80gb", "te-p2p"), cat));
  const auto b = predict(resolve(ring_scenario("a100-80gb", "te-p2p@1.2"), cat));
  CHECK(b.step_s == a.step_s);
  CHECK(b.attention_fwd_s == a.attention_fwd_s);
  // On the H100 1.2 calls FlashAttention-2, whose H100 parameters its profile carries (from
  // ring-flash-attention's H100 fit), where the newest calls cuDNN.
  const auto h_new = resolve(ring_scenario("h100-sxm", "te-p2p"), cat);
  const auto h_old = resolve(ring_scenario("h100-sxm", "te-p2p@1.2"), cat);
  REQUIRE(h_old.impl.kernel_model);
  CHECK(h_old.impl.kernel_model->name == "flash-attn-2");
  const auto rfa = resolve(ring_scenario("h100-sxm", "ring-flash-attn"), cat);
  CHECK(h_old.profile.attention_efficiency == rfa.profile.attention_efficiency);
  CHECK(h_old.profile.attention_bwd_efficiency == rfa.profile.attention_bwd_efficiency);
  CHECK(predict(h_old).attention_fwd_s > predict(h_new).attention_fwd_s);
}

TEST_CASE("an unknown release, or a malformed releases entry, is one line naming the field", "[impl][release][errors]") {
  const Catalog cat;
  CHECK(impl_error(cat, "te-p2p@3.0").find("known: 2.20.dev0 (the newest), 1.2") != std::string::npos);
  CHECK(impl_error(cat, "te-p2p@0.9").find("first appears in 1.0") != std::string::npos);
  CHECK(impl_error(cat, "te-p2p@v1").find("known:") != std::string::npos);
  CHECK(impl_error(cat, "ring-flash-attn@1.0").find("names no releases") != std::string::npos);
  (void)impl_error(cat, "te-p2p@");
  (void)impl_error(cat, "te-p2p@../x");
  (void)impl_error(cat, "no-such@1.2");

  nlohmann::json te = nlohmann::json::parse(R"({"name": "x", "description": "d", "maturity": "production", "kernel": "flash", "hardware_kinds": ["gpu"],
    "layouts": ["zigzag"], "masks": ["causal"], "strategies": ["ring"], "precisions": ["bf16"],
    "sources": [{"repo": "o/r", "path": "a.py", "commit": "d0067d0da6cb01811b8072a7d304f0e00344ce2b", "what": "w"}],
    "kernel_model": "flash-attn-2", "protocol": {"ring_steps": "te-p2p"}, "release": "2.0",
    "releases": [{"name": "1.0", "date": "2023-10-31", "changes": "c", "kernel_model": "flash-attn-2",
                  "sources": [{"repo": "o/r", "path": "a.py", "commit": "66d91d5219f295ec1e2e714a4926ddb67a2b8f80", "what": "w"}]}]})");
  const auto configs = cat.root() + "/configs";
  CHECK_NOTHROW(Implementation::from_json(te, "x.json", configs));
  const auto expect_field = [&](const nlohmann::json& j, const std::string& field) {
    try {
      (void)Implementation::from_json(j, "x.json", configs);
      FAIL("expected InputError");
    } catch (const InputError& e) {
      CHECK(e.file() == "x.json");
      CHECK(e.field() == field);
    }
  };
  auto j = te;
  j["releases"][0].erase("kernel_model");
  expect_field(j, "releases[0].kernel_model");  // a release that changes nothing
  j = te;
  j["releases"][0]["date"] = "Oct 2023";
  expect_field(j, "releases[0].date");
  j = te;
  j["releases"].push_back(j["releases"][0]);
  expect_field(j, "releases[1].name");  // named twice
  j = te;
  j["releases"][0]["name"] = "2.0";
  expect_field(j, "releases");  // the file's own
  j = te;
  j.erase("release");
  expect_field(j, "release");
  j = te;
  j["releases"][0]["kernel_model"] = "no-such-kernel";
  expect_field(j, "releases[0].kernel_model");
  j = te;
  j["releases"][0]["speedup"] = 2;
  CHECK_THROWS_AS(Implementation::from_json(j, "x.json", configs), InputError);  // nothing else may change
}

TEST_CASE("a version between listed releases runs as the release that covers it", "[impl][release]") {
  // An entry stands for the versions since the next older one: TransformerEngine 1.0 and 1.1 call
  // FlashAttention-2 as 1.2 does; 1.3 to 2.20 call the newest release's kernels.
  const Catalog cat;
  for (const char* v : {"1.0", "1.1", "1.2.0"}) {
    INFO(v);
    const auto im = cat.implementation(std::string("te-p2p@") + v);
    CHECK(im.name == "te-p2p@1.2");
    CHECK(im.kernel_for(90)->name == "flash-attn-2");
    CHECK(im.notes.find(std::string("release ") + v + " runs as 1.2") == 0);
  }
  for (const char* v : {"1.3", "1.12", "2.5", "2.20"}) {
    INFO(v);
    const auto im = cat.implementation(std::string("te-p2p@") + v);
    CHECK(im.name == "te-p2p@2.20.dev0");
    CHECK(im.kernel_for(90)->name == "cudnn-fused");
  }
  // TransformerEngine's other context-parallel variants appear later, after cuDNN gained context
  // parallelism on Hopper: any release that has them runs the newest kernels; older ones are refused.
  for (const auto& [impl, first, before, cp] :
       {std::tuple{"te-all-gather", "1.10", "1.9", "allgather"}, std::tuple{"te-a2a", "1.11", "1.10", "ulysses"},
        std::tuple{"te-a2a-p2p", "1.12", "1.11", "usp:4x2"}}) {
    INFO(impl);
    CHECK(cat.implementation(std::string(impl) + "@" + first).kernel_for(90)->name == "cudnn-fused");
    CHECK(impl_error(cat, std::string(impl) + "@" + before).find(std::string("first appears in ") + first) !=
          std::string::npos);
    // The step on the H100 is the newest release's.
    auto newest = ring_scenario("h100-sxm", impl), named = ring_scenario("h100-sxm", std::string(impl) + "@" + first);
    newest.cp = named.cp = Strategy::parse(cp);
    CHECK(predict(resolve(named, cat)).step_s == predict(resolve(newest, cat)).step_s);
  }
  CHECK(release_version("2.20.dev0") == std::vector<std::int64_t>{2, 20, 0});
  CHECK(compare_versions(*release_version("2.20"), *release_version("2.20.dev0")) == 0);
  CHECK(compare_versions(*release_version("1.9"), *release_version("1.10")) < 0);
  CHECK(!release_version("dev"));
}
