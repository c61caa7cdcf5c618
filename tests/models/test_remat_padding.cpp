// Two pieces of physics of the Striped Attention paper's implementation: block rematerialisation
// (the attention forward runs again in the backward) and the TPU matrix unit's padding of
// head_dim (ringattn-3b's 100 becomes 128 on a 128 x 128 MXU).
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/catalog/resolve.hpp"
#include "models/analytic/analytic.hpp"
#include "models/io/error.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim::models;

namespace {

ResolvedScenario scenario(const std::string& hw, const std::string& model, const std::string& layout, std::int64_t mp,
                          std::int64_t sp, std::int64_t n_seq, bool recompute) {
  auto r = ringsim::test::resolve_scenario(hw, model, mp, sp, n_seq, layout);
  r.profile.recompute = recompute;
  ringsim::test::rebuild_cost(r);
  return r;
}

}  // namespace

TEST_CASE("the TPU files give the MXU width, files without it pad nothing", "[config][padding]") {
  const Catalog cat;
  for (const char* h : {"tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p"}) {
    INFO(h);
    const auto hw = cat.hardware(h);
    CHECK(hw.matrix_unit_width == 128);
    CHECK(hw.padded_to_matrix_unit(100) == 128);
    CHECK(hw.padded_to_matrix_unit(128) == 128);
    CHECK(hw.padded_to_matrix_unit(129) == 256);
  }
  const auto a100 = cat.hardware("a100-80gb");
  CHECK(a100.matrix_unit_width == 1);
  CHECK(a100.padded_to_matrix_unit(100) == 100);
}

TEST_CASE("a matrix_unit_width that is not a positive integer is rejected, naming the field", "[config][errors]") {
  auto j = nlohmann::json::parse(R"({
    "name": "x",
    "peak_flops_per_s": {"bf16": {"value": 1e15, "source": "s"}},
    "hbm_bytes": {"value": 1e10, "source": "s"},
    "hbm_bandwidth_bytes_per_s": {"value": 1e12, "source": "s"},
    "intra_node": {"devices_per_node": {"value": 4, "source": "s"},
                   "link_bandwidth_bytes_per_s_per_direction": {"value": 1e11, "source": "s"},
                   "latency_s": {"value": 1e-6, "source": "s"}},
    "inter_node": {"bandwidth_bytes_per_s_per_device": {"value": 1e10, "source": "s"},
                   "latency_s": {"value": 1e-6, "source": "s"}},
    "matrix_unit_width": {"value": 12.5, "source": "s"}
  })");
  CHECK_THROWS_AS(Hardware::from_json(j, "x.json"), InputError);
  try {
    (void)Hardware::from_json(j, "x.json");
  } catch (const InputError& e) {
    CHECK(e.field() == "matrix_unit_width");
  }
  j["matrix_unit_width"]["value"] = 128;
  CHECK(Hardware::from_json(j, "x.json").matrix_unit_width == 128);
  j["matrix_unit_width"].erase("source");
  CHECK_THROWS_AS(Hardware::from_json(j, "x.json"), InputError);
}

TEST_CASE("attention executes head_dim padded to the matrix unit, but MFU counts the real head_dim", "[analytic][padding]") {
  // ringattn-3b: head_dim 100. On TPU v4 every attention matmul runs at 128 wide.
  const auto tpu = scenario("tpu-v4", "ringattn-3b", "striped", 2, 8, 131072, false);
  BlockStats full;
  full.visited_area = 2048 * 2048;
  full.allowed_pairs = full.visited_area;
  full.tiles_visited = 1;
  const double executed = tpu.cost->attention_fwd_flops(full);
  const double useful = tpu.cost->attention_useful_fwd_flops(full);
  CHECK(executed == Approx(4.0 * 2048 * 2048 * 128 * 16));
  CHECK(useful == Approx(4.0 * 2048 * 2048 * 100 * 16));
  // The same model on A100 (no matrix_unit_width): nothing is padded.
  const auto gpu = scenario("a100-80gb", "ringattn-3b", "striped", 2, 4, 131072, false);
  CHECK(gpu.cost->attention_fwd_flops(full) == Approx(gpu.cost->attention_useful_fwd_flops(full)));
  // head_dim 128 (ringattn-7b) is already a multiple of 128: no change on TPU.
  const auto tpu7 = scenario("tpu-v4", "ringattn-7b", "striped", 2, 8, 131072, false);
  CHECK(tpu7.cost->attention_fwd_flops(full) == Approx(tpu7.cost->attention_useful_fwd_flops(full)));
}

TEST_CASE("rematerialisation re-runs the attention forward inside the backward", "[analytic][recompute]") {
  const auto base = scenario("tpu-v4", "ringattn-1b", "striped", 2, 8, 262144, false);
  const auto remat = scenario("tpu-v4", "ringattn-1b", "striped", 2, 8, 262144, true);
  const auto& block = base.workload->block(1, 3);
  CHECK(remat.cost->attention_fwd_s(block) == Approx(base.cost->attention_fwd_s(block)));
  CHECK(remat.cost->attention_bwd_s(block) ==
        Approx(base.cost->attention_bwd_s(block) + base.cost->attention_fwd_s(block)));
  const auto p0 = predict(base);
  const auto p1 = predict(remat);
  CHECK(p1.attention_fwd_s == Approx(p0.attention_fwd_s));
  // With the transfer hidden, the backward grows by exactly one forward ring.
  CHECK(p1.attention_bwd_s == Approx(p0.attention_bwd_s + p0.attention_fwd_s).epsilon(1e-9));
  // The other per-layer ops are recomputed too: more time, and the useful FLOPs are unchanged.
  CHECK(p1.other_compute_s > p0.other_compute_s);
  CHECK(p1.model_flops == Approx(p0.model_flops));
}

TEST_CASE("with rematerialisation the paper's long-sequence runs fit in memory", "[analytic][recompute]") {
  // ringattn-3b at 256k tokens on 2 x 4 A100 80GB ran in the paper (Table 2); keeping every
  // activation of every layer would need more than 80 GB, keeping the block inputs does not.
  const auto keep = predict(scenario("a100-80gb", "ringattn-3b", "striped", 2, 4, 262144, false));
  const auto remat = predict(scenario("a100-80gb", "ringattn-3b", "striped", 2, 4, 262144, true));
  CHECK_FALSE(keep.fits_memory);
  CHECK(remat.fits_memory);
  CHECK(remat.memory_bytes < keep.memory_bytes);
}

TEST_CASE("the shipped profiles of the paper's implementation rematerialise blocks", "[config][recompute]") {
  const Catalog cat;
  for (const char* h : {"a100-80gb", "tpu-v4", "tpu-v3"}) {
    INFO(h);
    CHECK(cat.profile("", cat.hardware(h), "jax-blockwise").recompute);
  }
}
