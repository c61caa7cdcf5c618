// Which attention kernel a library calls on which GPU (Implementation::kernel_for, from its
// backend selection by compute capability) and which tile a kernel runs there (KernelSpec::tile,
// the launch code's branches by GPU and mask): a resolved scenario times the kernel its GPU runs,
// FlashAttention-3's causal tile and FlashAttention-2's per-GPU tiles are the ones their launch
// code picks, and malformed choices are refused with the field that is wrong.
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
  CHECK(cat.hardware("rtx-pro-6000").compute_capability == 120);  // GB202 (sm_120), not the B200's 10.0
  CHECK(cat.hardware("mi300x").compute_capability == 0);
}

TEST_CASE("the serving stack calls vLLM's FlashAttention: 3 on Hopper, 2 before it and on Blackwell", "[kernel][impl]") {
  const Catalog cat;
  const auto serve = cat.implementation("cp-serve");
  CHECK(serve.kernel_for(80)->name == "flash-attn-2");
  CHECK(serve.kernel_for(89)->name == "flash-attn-2");
  CHECK(serve.kernel_for(90)->name == "flash-attn-3");
  CHECK(serve.kernel_for(100)->name == "flash-attn-2");  // FlashAttention-4 is not modelled: vLLM's fallback
  CHECK(serve.kernel_for(120)->name == "flash-attn-2");
  CHECK(serve.kernel_for(0)->name == "flash-attn-2");
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
  const auto hw = cat.hardware("h100-sxm");
  const auto rates = KernelRates::of(hw, cat.spec_profile(hw, "ring-flash-attn"));
  const TileDevice& dev = rates.device;
  CHECK(spec.tile(false, 128, false, dev).block_n == 176);
  CHECK(spec.tile(false, 128, true, dev).block_n == 128);
  CHECK(spec.tile(false, 64, true, dev).block_m == 192);
  CHECK(spec.tile(true, 128, true, dev).block_n == 128);  // the backward has no causal variant
  CHECK_THROWS_AS(spec.tile(true, 256, false, dev), InputError);  // no head-dim-256 backward at that commit
  for (const std::int64_t d : {64, 128, 256}) CHECK(ctas_per_sm(spec, spec.tile(false, d, false, dev), rates) == 1);
  // Oracle: a causal call equals the same call of a kernel whose forward tiles are the causal
  // branches alone, with no conditions left.
  KernelSpec causal_only = spec;
  causal_only.fwd_tiles.clear();
  for (const auto& t : spec.fwd_tiles) {
    if (!causal_only.fwd_tiles.empty() && causal_only.fwd_tiles.back().max_head_dim == t.max_head_dim) continue;
    if (t.when.any() && t.when.causal != std::optional<bool>(true)) continue;
    causal_only.fwd_tiles.push_back(t);
    causal_only.fwd_tiles.back().when = {};
  }
  REQUIRE(causal_only.fwd_tiles.size() == 3);
  const KernelCall c{16384, 16384, true, 0, 16, 16, 1, 128};
  CHECK(flash_fwd_s(spec, rates, c) == Approx(flash_fwd_s(causal_only, rates, c)).epsilon(1e-12));
  KernelCall full = c;
  full.causal = false;
  CHECK(flash_fwd_s(spec, rates, full) != Approx(flash_fwd_s(causal_only, rates, full)).epsilon(1e-6));
}

TEST_CASE("FlashAttention-2 runs the tiles its launch code picks on each GPU", "[kernel][config]") {
  const Catalog cat;
  const auto spec = KernelSpec::load_file(cat.root() + "/configs/kernels/flash-attn-2.json");
  const auto device = [&](const std::string& name) {
    const auto hw = cat.hardware(name);
    return KernelRates::of(hw, cat.spec_profile(hw, "ring-flash-attn"));
  };
  const auto a100 = device("a100-80gb"), h100 = device("h100-sxm"), l20 = device("l20");
  // Head dim 256 forward: 128 x 64 of 8 warps where a CTA may take 128 KB and an SM holds less
  // than two 96 KB tiles (A100); 64 x 64 of 4 warps, two per SM, on H100; 64 x 64 on L20 (99 KB).
  CHECK(spec.tile(false, 256, true, a100.device).block_m == 128);
  CHECK(spec.tile(false, 256, true, a100.device).warps == 8);
  const auto& h256 = spec.tile(false, 256, true, h100.device);
  CHECK(h256.block_m == 64);
  CHECK(ctas_per_sm(spec, h256, h100) == 2);
  CHECK(spec.tile(false, 256, false, l20.device).block_m == 64);
  // sm89: head dim 128 runs 128 x 32 full (two 48 KB CTAs per SM) and 64 x 64 causal.
  const auto& l_full = spec.tile(false, 128, false, l20.device);
  CHECK(l_full.block_n == 32);
  CHECK(ctas_per_sm(spec, l_full, l20) == 2);
  CHECK(spec.tile(false, 128, true, l20.device).block_m == 64);
  CHECK(spec.tile(false, 128, true, l20.device).block_n == 64);
  for (const auto* r : {&a100, &h100}) {
    CHECK(spec.tile(false, 128, true, r->device).block_n == 64);
    CHECK(spec.tile(false, 128, true, r->device).block_m == 128);
  }
  // Backward head dim 128: 64 x 128 (2/4/2) at >= 144 KB per CTA, 64 x 64 with V in registers below.
  CHECK(spec.tile(true, 128, false, a100.device).block_n == 128);
  CHECK(spec.tile(true, 128, false, h100.device).atom_m_dq == 2);
  const auto& l_bwd = spec.tile(true, 128, true, l20.device);
  CHECK(l_bwd.block_n == 64);
  CHECK(l_bwd.v_in_regs);
  // Head dim 256: double-buffered on H100 (176 KB), not on A100, 64 x 32 on sm89.
  CHECK(spec.tile(true, 256, false, h100.device).smem_bytes == 180224);
  CHECK(spec.tile(true, 256, false, a100.device).smem_bytes == 147456);
  CHECK(spec.tile(true, 256, false, l20.device).block_n == 32);
  // A GPU the file says nothing of takes every head dim's last tile (the launch code's else).
  CHECK(spec.tile(false, 256, true, TileDevice{}).block_m == 64);
  CHECK(spec.tile(false, 128, false, TileDevice{}).block_n == 64);
  CHECK(spec.tile(true, 64, false, TileDevice{}).block_m == 64);
}

TEST_CASE("no FlashAttention-2 tile asks for more shared memory than its GPU gives a CTA, and each is kernel_traits.h's size",
          "[kernel][config]") {
  const Catalog cat;
  const auto spec = KernelSpec::load_file(cat.root() + "/configs/kernels/flash-attn-2.json");
  // kernel_traits.h: the forward holds Q, K and V tiles; the backward Q and dO (3 buffers, 2
  // without double buffering), K, V, dS and P, or with V in registers max(K V, half of it + dS + P).
  for (const auto& t : spec.fwd_tiles) {
    INFO("forward head dim " << t.max_head_dim << " " << t.block_m << " x " << t.block_n);
    CHECK(t.smem_bytes == (t.block_m + 2 * t.block_n) * t.max_head_dim * 2);
  }
  for (const auto& t : spec.bwd_tiles) {
    INFO("backward head dim " << t.max_head_dim << " " << t.block_m << " x " << t.block_n);
    const std::int64_t kv = t.block_n * t.max_head_dim * 4, pds = 2 * t.block_m * t.block_n * 2;
    const std::int64_t rest = t.v_in_regs ? std::max(kv, kv / 2 + pds) : kv + pds;
    const std::int64_t buffered = t.block_m * t.max_head_dim * 2 * 3 + rest, single = t.block_m * t.max_head_dim * 2 * 2 + rest;
    CHECK((t.smem_bytes == buffered || t.smem_bytes == single));
  }
  // Property over every catalog NVIDIA GPU, head dim and mask: the tile picked launches there.
  for (const auto& name : cat.hardware_names()) {
    const auto hw = cat.hardware(name);
    if (hw.compute_capability == 0) continue;
    const auto rates = KernelRates::of(hw, cat.spec_profile(hw, "ring-flash-attn"));
    for (std::int64_t d = 8; d <= 256; d += 8)
      for (const bool causal : {false, true})
        for (const bool backward : {false, true}) {
          const auto& t = spec.tile(backward, d, causal, rates.device);
          INFO(name << " head dim " << d << (backward ? " backward" : " forward") << (causal ? " causal" : " full"));
          CHECK(t.smem_bytes <= hw.shared_memory_per_block_bytes);
          CHECK(t.max_head_dim >= d);
        }
  }
}

TEST_CASE("a malformed kernel choice or tile condition is refused with its field", "[kernel][config][errors]") {
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
  // A tile's launch-code branch: known conditions only, a fallback after every branch.
  auto expect_kernel_field = [&](const nlohmann::json& bad, const std::string& field) {
    try {
      (void)KernelSpec::from_json(bad, "k.json");
      FAIL("expected InputError");
    } catch (const InputError& e) {
      CHECK(e.file() == "k.json");
      CHECK(e.field() == field);
    }
  };
  const nlohmann::json fallback = {{"max_head_dim", 128}, {"block_m", 64}, {"block_n", 64}, {"warps", 4}, {"smem_bytes", 0}};
  auto branched = k;
  branched["fwd_tiles"] = {fallback, fallback};
  branched["fwd_tiles"][0]["block_n"] = 32;
  branched["fwd_tiles"][0]["when"] = {{"causal", true}, {"smem_per_block_at_least", 65536}};
  const auto spec = KernelSpec::from_json(branched, "k.json");
  CHECK(spec.tile(false, 100, true, TileDevice{80, 65536, 65536}).block_n == 32);
  CHECK(spec.tile(false, 100, false, TileDevice{80, 65536, 65536}).block_n == 64);
  CHECK(spec.tile(false, 100, true, TileDevice{80, 65535, 65536}).block_n == 64);
  auto bad = branched;
  bad["fwd_tiles"][0]["when"] = {{"cuda", 9}};
  expect_kernel_field(bad, "fwd_tiles[0].when.cuda");
  bad["fwd_tiles"][0]["when"] = nlohmann::json::object();
  expect_kernel_field(bad, "fwd_tiles[0].when");
  bad["fwd_tiles"][0]["when"] = {{"causal", 1}};
  expect_kernel_field(bad, "fwd_tiles[0].when.causal");
  bad["fwd_tiles"][0]["when"] = {{"compute_capability_at_least", 9.0}, {"compute_capability_below", 8.0}};
  expect_kernel_field(bad, "fwd_tiles[0].when.compute_capability_below");
  bad["fwd_tiles"][0]["when"] = {{"smem_per_sm_below", 0.5}};
  expect_kernel_field(bad, "fwd_tiles[0].when.smem_per_sm_below");
  bad["fwd_tiles"][0]["when"] = {{"compute_capability_at_least", "8.6"}};
  expect_kernel_field(bad, "fwd_tiles[0].when.compute_capability_at_least");
  bad = branched;
  bad["fwd_tiles"][1]["max_head_dim"] = 256;  // the branch of head dim 128 has no fallback
  expect_kernel_field(bad, "fwd_tiles[1].max_head_dim");
  bad = branched;
  bad["fwd_tiles"].erase(1);  // the last tile is a branch
  expect_kernel_field(bad, "fwd_tiles[0].when");
  bad = branched;
  bad["fwd_tiles"][1]["blok_n"] = 32;
  expect_kernel_field(bad, "fwd_tiles[1].blok_n");
  bad = k;
  bad["fwd_causal_tiles"] = k["fwd_tiles"];  // the mask is a tile's condition, not a list of its own
  expect_kernel_field(bad, "fwd_causal_tiles");
}
