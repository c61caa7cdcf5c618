#pragma once
// What a serving deployment stores its weights and K/V cache in, and what that costs: the bytes
// each device keeps and streams, and which matrix products run on FP8 tensor cores.
//
// - Weights "bf16": every parameter in 2 bytes.
// - Weights "fp8-ffn": Llama 3's FP8 inference recipe (meta-llama/llama-models @ a9c89c4,
//   models/llama3/quantization/loader.py, convert_to_fp8_quantized_model): the feed-forward
//   matrices (w1, w3, w2) of every transformer block but the first and the last are quantized
//   row-wise to FP8 (1 byte per element and one fp32 scale per output row:
//   models/quantize_impls.py, quantize_fp8 -> torch.ops.fbgemm.quantize_fp8_per_row); each of
//   their products quantizes its input per token on the fly (fc_dynamic: quantize_fp8_per_row,
//   then torch.ops.fbgemm.f8f8bf16_rowwise, an FP8 x FP8 GEMM with a bf16 output). Attention
//   projections, norms, embeddings and the output layer stay bf16.
// - K/V cache "bf16", or "fp8" (vLLM's --kv-cache-dtype fp8, one byte per element:
//   vllm-project/vllm @ c1d8642, vllm/config/cache.py, CacheConfig.cache_dtype): the cache is
//   stored and read in one byte per element; what travels between devices stays bf16 (the ring's
//   messages carry the K/V the prefill computes; models/inference/wire.hpp).
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace ringsim::models {

struct ModelConfig;

enum class WeightFormat { Bf16, Fp8Ffn };
enum class CacheFormat { Bf16, Fp8 };

struct InferenceFormats {
  WeightFormat weights = WeightFormat::Bf16;
  CacheFormat cache = CacheFormat::Bf16;
  friend bool operator==(const InferenceFormats&, const InferenceFormats&) = default;
  // Reads a sweep or plan file's "weights" or "kv_cache" (one string); false for another key.
  // InputError naming `file` and the key for a value that is not a known format.
  bool read_field(const std::string& key, const nlohmann::json& v, const std::string& file);
};

// "bf16" | "fp8-ffn"; InputError (field "weights") otherwise.
[[nodiscard]] WeightFormat parse_weight_format(std::string_view text);
// "bf16" | "fp8"; InputError (field "kv-cache") otherwise.
[[nodiscard]] CacheFormat parse_cache_format(std::string_view text);
[[nodiscard]] std::string_view to_string(WeightFormat f) noexcept;
[[nodiscard]] std::string_view to_string(CacheFormat f) noexcept;

// InputError (field "weights") for FP8 weights on `hardware` without FP8 tensor cores (FBGEMM's
// f8f8bf16_rowwise needs Hopper or later).
void check_formats(const InferenceFormats& f, bool fp8_tensor_cores, std::string_view hardware);

// Bytes per K/V cache element.
[[nodiscard]] double cache_element_bytes(CacheFormat f) noexcept;

// The transformer blocks whose feed-forward matrices are FP8 (0 for bf16; the first and the last
// block stay bf16, so a model of at most two layers has none).
[[nodiscard]] std::int64_t fp8_ffn_layers(const ModelConfig& m, WeightFormat f) noexcept;

// One tensor-parallel rank's weights (of mp): bytes kept and streamed, and the parameters stored
// in FP8 (their products run on FP8 tensor cores; the rest at the bf16 rate).
struct WeightBytes {
  double bytes = 0;
  double fp8_parameters = 0;
  double bf16_parameters = 0;
};
[[nodiscard]] WeightBytes weight_bytes(const ModelConfig& m, std::int64_t mp, WeightFormat f) noexcept;

}  // namespace ringsim::models
