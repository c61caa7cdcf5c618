// Which attention kernel a library calls on which GPU (Implementation::kernel_for, from its
// backend selection by compute capability) and the Hopper kernels' specs: a resolved scenario
// times the kernel its GPU runs, FlashAttention-3's causal tile is the one its launch code picks,
// and malformed choices are refused with the field that is wrong.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/catalog/resolve.hpp"
#include "models/families/kernel_time.hpp"
#include "models/io/error.hpp"

using namespace ringsim::models;

namespace {

ScenarioSpec ring_scenario(const std::string& hardware, const std::string& impl) {
  ScenarioSpec s;
  s.hardware = hardware;
  s.model = "attn:16:16:128";
  s.sp = 8;
  s.n_seq = 65536;
  s.impl = impl;
  s.layout = LayoutSpec::parse("zigzag");
  return s;
}

}  // namespace

TEST_CASE("TransformerEngine calls cuDNN from compute capability 9.0 and FlashAttention-2 below", "[kernel][impl]") {
  const Catalog cat;
  const auto te = cat.implementation("te-p2p");
  REQUIRE(te.kernel_for(80));
  CHECK(te.kernel_for(80)->name == "flash-attn-2");
  CHECK(te.kernel_for(89)->name == "flash-attn-2");
  CHECK(te.kernel_for(90)->name == "cudnn-fused");
  CHECK(te.kernel_for(100)->name == "cudnn-fused");
  CHECK(te.kernel_for(0)->name == "flash-attn-2");  // no compute capability known: its default
  // ring-flash-attention calls FlashAttention-2 everywhere.
  const auto rfa = cat.implementation("ring-flash-attn");
  CHECK(rfa.kernel_for(90)->name == "flash-attn-2");
  // Every GPU in the catalog says its compute capability; the TPUs and AMD's do not.
  CHECK(cat.hardware("h100-sxm").compute_capability == 90);
  CHECK(cat.hardware("a100-80gb").compute_capability == 80);
  CHECK(cat.hardware("l40s").compute_capability == 89);
  CHECK(cat.hardware("b200").compute_capability == 100);
  CHECK(cat.hardware("mi300x").compute_capability == 0);
}

TEST_CASE("a resolved scenario times the kernel its GPU runs", "[kernel][impl]") {
  const Catalog cat;
  const auto hopper = resolve(ring_scenario("h100-sxm", "te-p2p"), cat);
  const auto ampere = resolve(ring_scenario("a100-80gb", "te-p2p"), cat);
  REQUIRE(hopper.impl.kernel_model);
  REQUIRE(ampere.impl.kernel_model);
  CHECK(hopper.impl.kernel_model->name == "cudnn-fused");
  CHECK(ampere.impl.kernel_model->name == "flash-attn-2");
  // The same call under the same rates differs only by the kernel: cuDNN's 64-row forward tile
  // launches twice FlashAttention-2's CTAs.
  const auto rates = KernelRates::of(hopper.hardware, hopper.profile);
  const KernelCall call{8192, 8192, true, 0, 16, 16, 1, 128};
  const auto cudnn = flash_call_time(*hopper.impl.kernel_model, rates, call);
  const auto fa2 = flash_call_time(*ampere.impl.kernel_model, rates, call);
  CHECK(cudnn.fwd_ctas == 2 * fa2.fwd_ctas);
  CHECK(cudnn.fwd_ctas == 8192 / 64 * 16);
}

TEST_CASE("FlashAttention-3 picks its causal tile and holds one CTA per SM", "[kernel][config]") {
  const Catalog cat;
  const auto spec = KernelSpec::load_file(cat.root() + "/configs/kernels/flash-attn-3.json");
  CHECK(spec.tile(false, 128, false).block_n == 176);
  CHECK(spec.tile(false, 128, true).block_n == 128);
  CHECK(spec.tile(false, 64, true).block_m == 192);
  CHECK(spec.tile(true, 128, true).block_n == 128);  // the backward has no causal variant
  CHECK_THROWS_AS(spec.tile(true, 256), InputError);  // no head-dim-256 backward at that commit
  const auto hw = cat.hardware("h100-sxm");
  const auto rates = KernelRates::of(hw, cat.spec_profile(hw, "ring-flash-attn"));
  for (const std::int64_t d : {64, 128, 256}) CHECK(ctas_per_sm(spec, spec.tile(false, d), rates) == 1);
  // Oracle: a causal call equals the same call of a kernel whose forward tiles are the causal ones.
  KernelSpec causal_only = spec;
  causal_only.fwd_tiles = spec.fwd_causal_tiles;
  causal_only.fwd_causal_tiles.clear();
  const KernelCall c{16384, 16384, true, 0, 16, 16, 1, 128};
  CHECK(flash_fwd_s(spec, rates, c) == Approx(flash_fwd_s(causal_only, rates, c)).epsilon(1e-12));
  KernelCall full = c;
  full.causal = false;
  CHECK(flash_fwd_s(spec, rates, full) != Approx(flash_fwd_s(causal_only, rates, full)).epsilon(1e-6));
}

TEST_CASE("a malformed kernel choice or causal tile list is refused with its field", "[kernel][config][errors]") {
  const Catalog cat;
  nlohmann::json te = nlohmann::json::parse(R"({"name": "x", "description": "d", "maturity": "production", "kernel": "flash", "hardware_kinds": ["gpu"],
    "layouts": ["zigzag"], "masks": ["causal"], "strategies": ["ring"], "precisions": ["bf16"],
    "sources": [{"repo": "o/r", "path": "a.py", "commit": "d0067d0da6cb01811b8072a7d304f0e00344ce2b", "what": "w"}],
    "kernel_model": "flash-attn-2", "protocol": {"ring_steps": "te-p2p"}})");
  const auto configs = cat.root() + "/configs";
  CHECK_NOTHROW(Implementation::from_json(te, "te.json", configs));
  auto expect_field = [&](nlohmann::json j, const std::string& field) {
    try {
      (void)Implementation::from_json(j, "te.json", configs);
      FAIL("expected InputError");
    } catch (const InputError& e) {
      CHECK(e.file() == "te.json");
      CHECK(e.field().starts_with(field));
    }
  };
  auto j = te;
  j["kernel_model_from_compute_capability"] = {{{"compute_capability", 9.0}, {"kernel_model", "cudnn-fused"}},
                                               {{"compute_capability", 8.0}, {"kernel_model", "flash-attn-2"}}};
  expect_field(j, "kernel_model_from_compute_capability");  // not ascending
  j["kernel_model_from_compute_capability"] = {{{"compute_capability", 9.0}, {"kernel_model", "no-such-kernel"}}};
  expect_field(j, "kernel_model_from_compute_capability.kernel_model");
  j["kernel_model_from_compute_capability"] = {{{"compute_capability", 0.5}, {"kernel_model", "cudnn-fused"}}};
  expect_field(j, "kernel_model_from_compute_capability.compute_capability");
  j["kernel_model_from_compute_capability"] = nlohmann::json::array();
  expect_field(j, "kernel_model_from_compute_capability");

  nlohmann::json k = {{"name", "k"},
                      {"description", "a kernel"},
                      {"sources", {{{"repo", "o/r"}, {"path", "k.cu"}, {"commit", std::string(40, 'a')}, {"what", "tiles"}}}},
                      {"fwd_tiles", {{{"max_head_dim", 128}, {"block_m", 64}, {"block_n", 64}, {"warps", 4}, {"smem_bytes", 0}}}},
                      {"bwd_tiles", {{{"max_head_dim", 128}, {"block_m", 64}, {"block_n", 64}, {"warps", 4}, {"smem_bytes", 0}}}}};
  k["fwd_causal_tiles"] = {{{"max_head_dim", 64}, {"block_m", 64}, {"block_n", 32}, {"warps", 4}, {"smem_bytes", 0}}};
  try {
    (void)KernelSpec::from_json(k, "k.json");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.field() == "fwd_causal_tiles");  // covers fewer head dims than the forward
  }
  k["fwd_causal_tiles"][0]["max_head_dim"] = 128;
  CHECK(KernelSpec::from_json(k, "k.json").tile(false, 100, true).block_n == 32);
}
