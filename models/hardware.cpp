#include "models/hardware.hpp"

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "models/error.hpp"
#include "models/json_fields.hpp"

namespace ringsim::models {

std::string_view to_string(Precision p) noexcept {
  switch (p) {
    case Precision::BF16: return "bf16";
    case Precision::FP16: return "fp16";
    case Precision::TF32: return "tf32";
    case Precision::FP32: return "fp32";
    case Precision::FP8: return "fp8";
  }
  return "?";
}

Precision parse_precision(std::string_view t) {
  if (t == "bf16") return Precision::BF16;
  if (t == "fp16") return Precision::FP16;
  if (t == "tf32") return Precision::TF32;
  if (t == "fp32") return Precision::FP32;
  if (t == "fp8") return Precision::FP8;
  throw InputError({}, 0, "precision", "unknown precision '" + std::string(t) + "' (expected bf16, fp16, tf32, fp32 or fp8)");
}

double Hardware::peak_flops_per_s(Precision p) const {
  const std::optional<double>* v = nullptr;
  switch (p) {
    case Precision::BF16: v = &peak_bf16_per_s; break;
    case Precision::FP16: v = &peak_fp16_per_s; break;
    case Precision::TF32: v = &peak_tf32_per_s; break;
    case Precision::FP32: v = &peak_fp32_per_s; break;
    case Precision::FP8: v = &peak_fp8_per_s; break;
  }
  if (!v || !*v)
    throw InputError({}, 0, "precision", name + " has no " + std::string(to_string(p)) + " matrix throughput");
  return **v;
}

Hardware Hardware::from_json(const nlohmann::json& j, const std::string& file) {
  JsonFields f(j, file);
  Hardware h;
  h.name = f.string("name");
  h.description = f.string_or("description", "");
  h.kind = f.string_or("kind", "gpu");
  h.topology = f.string_or("topology", "");
  h.peak_bf16_per_s = f.optional_sourced("peak_flops_per_s.bf16");
  h.peak_fp16_per_s = f.optional_sourced("peak_flops_per_s.fp16");
  h.peak_tf32_per_s = f.optional_sourced("peak_flops_per_s.tf32");
  h.peak_fp32_per_s = f.optional_sourced("peak_flops_per_s.fp32");
  h.peak_fp8_per_s = f.optional_sourced("peak_flops_per_s.fp8");
  if (!h.peak_bf16_per_s && !h.peak_fp16_per_s && !h.peak_fp32_per_s)
    throw InputError(file, 0, "peak_flops_per_s", "needs at least one of bf16, fp16, fp32");
  h.hbm_bytes = f.positive_sourced("hbm_bytes");
  h.hbm_bandwidth_bytes_per_s = f.positive_sourced("hbm_bandwidth_bytes_per_s");
  h.devices_per_node = static_cast<std::int64_t>(f.positive_sourced("intra_node.devices_per_node"));
  h.intra_link_bandwidth_bytes_per_s = f.positive_sourced("intra_node.link_bandwidth_bytes_per_s_per_direction");
  h.intra_link_latency_s = f.non_negative_sourced("intra_node.latency_s");
  h.inter_node_bandwidth_bytes_per_s = f.positive_sourced("inter_node.bandwidth_bytes_per_s_per_device");
  h.inter_node_latency_s = f.non_negative_sourced("inter_node.latency_s");
  if (const auto w = f.optional_sourced("matrix_unit_width")) {
    if (*w < 1 || *w != std::floor(*w))
      throw InputError(file, 0, "matrix_unit_width", "expected a positive integer");
    h.matrix_unit_width = static_cast<std::int64_t>(*w);
  }
  if (f.find("compute_units")) {
    auto count = [&](const char* key) {
      const double v = f.positive_sourced(std::string("compute_units.") + key);
      if (v != std::floor(v) || v > 1e9)
        throw InputError(file, 0, std::string("compute_units.") + key, "expected a positive integer");
      return static_cast<std::int64_t>(v);
    };
    h.sm_count = count("sm_count");
    h.sm_clock_hz = f.positive_sourced("compute_units.sm_clock_hz");
    h.sfu_ops_per_clock_per_sm = f.positive_sourced("compute_units.sfu_ops_per_clock_per_sm");
    h.shared_memory_per_sm_bytes = count("shared_memory_per_sm_bytes");
    h.registers_per_sm = count("registers_per_sm");
    if (const auto lat = f.optional_sourced("compute_units.memory_latency_s")) {
      if (!(*lat > 0 && *lat < 1e-3))
        throw InputError(file, 0, "compute_units.memory_latency_s", "expected a latency in (0, 1 ms)");
      h.memory_latency_s = *lat;
    }
  }
  if (j.contains("sources") && j["sources"].is_array())
    for (const auto& s : j["sources"])
      if (s.is_string()) h.sources.push_back(s.get<std::string>());
  return h;
}

Hardware Hardware::load_file(const std::string& path) { return from_json(read_json_file(path), path); }

}  // namespace ringsim::models
