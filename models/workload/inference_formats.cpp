#include "models/workload/inference_formats.hpp"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/workload/transformer.hpp"

namespace ringsim::models {

WeightFormat parse_weight_format(std::string_view text) {
  if (text == "bf16") return WeightFormat::Bf16;
  if (text == "fp8-ffn") return WeightFormat::Fp8Ffn;
  throw InputError({}, 0, "weights",
                   "expected bf16 or fp8-ffn (the feed-forward matrices row-wise in FP8, as Llama 3's FP8 inference), got '" +
                       std::string(text) + "'");
}

CacheFormat parse_cache_format(std::string_view text) {
  if (text == "bf16") return CacheFormat::Bf16;
  if (text == "fp8") return CacheFormat::Fp8;
  throw InputError({}, 0, "kv-cache", "expected bf16 or fp8, got '" + std::string(text) + "'");
}

std::string_view to_string(WeightFormat f) noexcept { return f == WeightFormat::Fp8Ffn ? "fp8-ffn" : "bf16"; }
std::string_view to_string(CacheFormat f) noexcept { return f == CacheFormat::Fp8 ? "fp8" : "bf16"; }

void check_formats(const InferenceFormats& f, bool fp8_tensor_cores, std::string_view hardware) {
  if (f.weights == WeightFormat::Fp8Ffn && !fp8_tensor_cores)
    throw InputError({}, 0, "weights",
                     "fp8-ffn runs FP8 GEMMs, which " + std::string(hardware) +
                         " has no tensor cores for (its hardware file gives no FP8 peak): use bf16");
}

bool InferenceFormats::read_field(const std::string& key, const nlohmann::json& v, const std::string& file) {
  if (key != "weights" && key != "kv_cache") return false;
  if (!v.is_string()) throw InputError(file, 0, key, "expected one format as a string (not a list), got " + v.dump());
  try {
    if (key == "weights") weights = parse_weight_format(v.get<std::string>());
    else cache = parse_cache_format(v.get<std::string>());
  } catch (const InputError& e) {
    throw InputError(file, 0, key, e.message());
  }
  return true;
}

double cache_element_bytes(CacheFormat f) noexcept { return f == CacheFormat::Fp8 ? 1.0 : 2.0; }

std::int64_t fp8_ffn_layers(const ModelConfig& m, WeightFormat f) noexcept {
  if (f != WeightFormat::Fp8Ffn || m.attention_only) return 0;
  return std::max<std::int64_t>(0, m.layers - 2);
}

WeightBytes weight_bytes(const ModelConfig& m, std::int64_t mp, WeightFormat f) noexcept {
  const double ranks = static_cast<double>(std::max<std::int64_t>(1, mp));
  const double all = static_cast<double>(m.parameters());
  const double fp8_layers = static_cast<double>(fp8_ffn_layers(m, f));
  const double d = static_cast<double>(m.d_model), ff = static_cast<double>(m.d_ff);
  const double mats = static_cast<double>(m.mlp_matrices());
  // One block's feed-forward matrices, and their output rows (one fp32 scale each): gate and up
  // have d_ff rows, down d_model.
  const double ffn = mats * d * ff;
  const double rows = (mats - 1) * ff + d;
  WeightBytes w;
  w.fp8_parameters = fp8_layers * ffn / ranks;
  w.bf16_parameters = (all - fp8_layers * ffn) / ranks;
  w.bytes = 2 * w.bf16_parameters + w.fp8_parameters + 4 * fp8_layers * rows / ranks;
  return w;
}

}  // namespace ringsim::models
