// Weight and K/V cache formats of inference (models/workload/inference_formats.hpp): the bytes each device
// keeps against a count of the model's matrices, the decode step's weight streaming and cache
// reads scaled by exactly those bytes, the prefill's feed-forward products on FP8 tensor cores,
// and what is refused.
#include <cmath>
#include <cstdint>

#include <catch2/catch.hpp>

#include "models/catalog/catalog.hpp"
#include "models/inference/decode.hpp"
#include "models/workload/inference_formats.hpp"
#include "models/inference/forward_rest.hpp"
#include "models/inference/prefill.hpp"
#include "models/io/error.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim;
using models::CacheFormat;
using models::WeightFormat;

namespace {

// A resolved scenario with its weights and cache formats set (they are read when predicting).
models::ResolvedScenario scenario(const char* hw, const char* model, std::int64_t mp, std::int64_t sp, std::int64_t n,
                                  const char* layout, WeightFormat w = WeightFormat::Bf16, CacheFormat c = CacheFormat::Bf16) {
  auto s = test::resolve_scenario(hw, model, mp, sp, n, layout, "causal", std::nullopt, "ring-flash-attn");
  s.spec.formats = {w, c};
  return s;
}

}  // namespace

TEST_CASE("fp8-ffn keeps every block's feed-forward matrices but the first and last in one byte, with fp32 row scales",
          "[inference][formats]") {
  const models::Catalog catalog;
  for (const char* name : {"llama3-405b", "llama3-8b", "llama2-7b"}) {
    const auto m = catalog.model(name);
    for (const std::int64_t mp : {1, 8}) {
      INFO(name << " mp " << mp);
      // The oracle, from the model's shapes: L - 2 blocks of gate, up and down (SwiGLU) or up and
      // down (GELU) matrices; one scale per output row.
      const double L = static_cast<double>(m.layers), d = static_cast<double>(m.d_model), ff = static_cast<double>(m.d_ff);
      const double mats = static_cast<double>(m.mlp_matrices());
      const double fp8 = (L - 2) * mats * d * ff / static_cast<double>(mp);
      const double scales = 4 * (L - 2) * ((mats - 1) * ff + d) / static_cast<double>(mp);
      const double all = static_cast<double>(m.parameters()) / static_cast<double>(mp);
      const auto bf16 = models::weight_bytes(m, mp, WeightFormat::Bf16);
      const auto f8 = models::weight_bytes(m, mp, WeightFormat::Fp8Ffn);
      CHECK(bf16.bytes == Approx(2 * all));
      CHECK(bf16.fp8_parameters == 0);
      CHECK(f8.fp8_parameters == Approx(fp8));
      CHECK(f8.bf16_parameters + f8.fp8_parameters == Approx(all));
      CHECK(f8.bytes == Approx(2 * (all - fp8) + fp8 + scales));
    }
  }
  // Two blocks: both are the first or the last, so nothing is FP8.
  auto tiny = catalog.model("llama3-8b");
  tiny.layers = 2;
  CHECK(models::fp8_ffn_layers(tiny, WeightFormat::Fp8Ffn) == 0);
  CHECK(models::weight_bytes(tiny, 1, WeightFormat::Fp8Ffn).bytes == Approx(2.0 * static_cast<double>(tiny.parameters())));
}

TEST_CASE("decode: FP8 weights stream their bytes and FP8 cache halves the K/V read, nothing else changes",
          "[inference][formats][decode]") {
  const auto base = scenario("h100-sxm", "llama3-70b", 8, 2, 131072, "contiguous");
  const auto bf = models::predict_decode(base, 131072);
  const auto w8 = models::predict_decode(scenario("h100-sxm", "llama3-70b", 8, 2, 131072, "contiguous", WeightFormat::Fp8Ffn), 131072);
  const auto c8 = models::predict_decode(
      scenario("h100-sxm", "llama3-70b", 8, 2, 131072, "contiguous", WeightFormat::Bf16, CacheFormat::Fp8), 131072);
  const auto expected = models::weight_bytes(base.model, 8, WeightFormat::Fp8Ffn).bytes;
  CHECK(w8.weights_bytes == Approx(expected));
  // Batch 1: weight streaming is memory-bound, so its time scales with the bytes.
  CHECK(w8.weights_read_s == Approx(bf.weights_read_s * expected / bf.weights_bytes));
  CHECK(w8.attention_layer_s == Approx(bf.attention_layer_s));
  CHECK(w8.kv_cache_bytes == Approx(bf.kv_cache_bytes));
  CHECK(w8.tpot_s < bf.tpot_s);
  CHECK(c8.kv_cache_bytes == Approx(bf.kv_cache_bytes / 2));
  CHECK(c8.cache_bytes_read_per_layer == Approx(bf.cache_bytes_read_per_layer / 2));
  CHECK(c8.weights_bytes == Approx(bf.weights_bytes));
  CHECK(c8.memory_bytes == Approx(bf.memory_bytes - bf.kv_cache_bytes / 2));
  // What travels between devices stays bf16.
  CHECK(c8.query_broadcast_s == Approx(bf.query_broadcast_s));
  CHECK(c8.output_gather_s == Approx(bf.output_gather_s));
}

TEST_CASE("prefill: the FP8 blocks' feed-forward products run at the FP8 rate, after quantizing their inputs",
          "[inference][formats][prefill]") {
  const auto base = scenario("h100-sxm", "llama3-8b", 1, 8, 131072, "zigzag");
  const auto f8 = scenario("h100-sxm", "llama3-8b", 1, 8, 131072, "zigzag", WeightFormat::Fp8Ffn);
  const auto rest_bf = models::forward_rest(base, 131072 / 8, 1);
  const auto rest_f8 = models::forward_rest(f8, 131072 / 8, 1);
  // The oracle: the MLP's FLOPs of L - 2 blocks move from the bf16 rate to the FP8 rate.
  const auto& m = base.model;
  const double t = 131072.0 / 8;
  const double mlp_flops = 2 * t * static_cast<double>(m.d_model) * static_cast<double>(m.d_ff) * static_cast<double>(m.mlp_matrices());
  const double eff = base.profile.matmul_efficiency;
  const double bf16_rate = base.hardware.peak_flops_per_s(base.profile.matmul_precision) * eff;
  // FP8 GEMMs at their calibrated share of the FP8 peak (configs/hardware fp8_gemm_relative_efficiency).
  const double fp8_rate = *base.hardware.peak_fp8_per_s * eff * base.hardware.fp8_gemm_relative_efficiency;
  const double fp8_layers = static_cast<double>(m.layers - 2);
  CHECK(rest_f8.matmul_s == Approx(rest_bf.matmul_s - fp8_layers * mlp_flops * (1 / bf16_rate - 1 / fp8_rate)).epsilon(1e-9));
  // Quantizing: the block input per gate/up matrix and the activation, 2 bytes read, 1 written.
  const double quantized = 3 * t * (static_cast<double>(m.mlp_matrices() - 1) * static_cast<double>(m.d_model) + static_cast<double>(m.d_ff));
  const double memory_rate = base.hardware.hbm_bandwidth_bytes_per_s * base.profile.memory_efficiency;
  CHECK(rest_f8.elementwise_s == Approx(rest_bf.elementwise_s + fp8_layers * quantized / memory_rate).epsilon(1e-6));
  const auto p_bf = models::predict_prefill(base, 0, models::PrefillVariant::PassKV);
  const auto p_f8 = models::predict_prefill(f8, 0, models::PrefillVariant::PassKV);
  CHECK(p_f8.ttft_s < p_bf.ttft_s);
  CHECK(p_f8.weights_bytes == Approx(models::weight_bytes(m, 1, WeightFormat::Fp8Ffn).bytes));
  CHECK(p_f8.attention_layer_s == Approx(p_bf.attention_layer_s));
}

TEST_CASE("inference formats: bad names and FP8 without FP8 tensor cores are refused, naming the field",
          "[inference][formats]") {
  CHECK(models::parse_weight_format("fp8-ffn") == WeightFormat::Fp8Ffn);
  CHECK(models::parse_cache_format("fp8") == CacheFormat::Fp8);
  try {
    (void)models::parse_weight_format("int4");
    FAIL("int4 accepted");
  } catch (const models::InputError& e) {
    CHECK(e.field() == "weights");
  }
  try {
    (void)models::parse_cache_format("fp16");
    FAIL("fp16 accepted");
  } catch (const models::InputError& e) {
    CHECK(e.field() == "kv-cache");
  }
  const auto a100 = scenario("a100-80gb", "llama3-8b", 1, 4, 16384, "contiguous", WeightFormat::Fp8Ffn);
  try {
    (void)models::predict_decode(a100, 16384);
    FAIL("FP8 weights on an A100 accepted");
  } catch (const models::InputError& e) {
    CHECK(e.field() == "weights");
  }
}
