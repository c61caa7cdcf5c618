#include "models/hardware/hardware.hpp"

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"
#include "models/io/limits.hpp"
#include "models/io/names.hpp"

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

namespace {
const std::optional<double>& peak_of(const Hardware& h, Precision p) noexcept {
  switch (p) {
    case Precision::FP16: return h.peak_fp16_per_s;
    case Precision::TF32: return h.peak_tf32_per_s;
    case Precision::FP32: return h.peak_fp32_per_s;
    case Precision::FP8: return h.peak_fp8_per_s;
    case Precision::BF16: break;
  }
  return h.peak_bf16_per_s;
}
}  // namespace

double Hardware::peak_flops_per_s(Precision p) const {
  if (const auto& v = peak_of(*this, p)) return *v;
  // Which modes it has, and where to add the missing one: a hardware file without the key reads
  // as a device without the mode (a V100 has no bf16).
  std::string has;
  for (const Precision q : {Precision::BF16, Precision::FP16, Precision::TF32, Precision::FP32, Precision::FP8})
    if (peak_of(*this, q)) has += (has.empty() ? "" : ", ") + std::string(to_string(q));
  const std::string mode(to_string(p));
  throw InputError({}, 0, "precision",
                   name + (file.empty() ? "" : " (" + file + ")") + " has no " + mode +
                       " matrix throughput (its peak_flops_per_s gives " + (has.empty() ? "none" : has) +
                       "): choose a precision it runs, or add peak_flops_per_s." + mode + " to its file");
}

Hardware Hardware::from_json(const nlohmann::json& j, const std::string& file) {
  // Physical ranges far beyond any real part in both directions, so that a typo (a missing
  // exponent, a sign, a value in the wrong unit) is an error rather than a NaN or an inf
  // downstream: work / rate and bytes / bandwidth stay finite.
  constexpr double kMinPeakFlopsPerS = 1e6, kMaxPeakFlopsPerS = 1e19;
  constexpr double kMinBytes = 1e6, kMaxBytes = 1e15;                // memory of one device
  constexpr double kMinBytesPerS = 1e3, kMaxBytesPerS = 1e15;        // HBM or link bandwidth
  constexpr double kMaxLatencyS = 1;
  JsonFields f(j, file);
  Hardware h;
  h.name = f.string("name");
  h.file = file;
  try {
    check_catalog_name(h.name, "name", "hardware");
  } catch (const InputError& e) {
    throw e.located(file, 0);
  }
  h.description = f.string_or("description", "");
  h.kind = f.one_of_or("kind", {"gpu", "tpu"}, "gpu");
  h.topology = f.one_of_or("topology", {"nvswitch", "infinity-fabric", "torus2d", "torus3d"}, "");
  h.peak_bf16_per_s = f.optional_sourced_in("peak_flops_per_s.bf16", kMinPeakFlopsPerS, kMaxPeakFlopsPerS);
  h.peak_fp16_per_s = f.optional_sourced_in("peak_flops_per_s.fp16", kMinPeakFlopsPerS, kMaxPeakFlopsPerS);
  h.peak_tf32_per_s = f.optional_sourced_in("peak_flops_per_s.tf32", kMinPeakFlopsPerS, kMaxPeakFlopsPerS);
  h.peak_fp32_per_s = f.optional_sourced_in("peak_flops_per_s.fp32", kMinPeakFlopsPerS, kMaxPeakFlopsPerS);
  h.peak_fp8_per_s = f.optional_sourced_in("peak_flops_per_s.fp8", kMinPeakFlopsPerS, kMaxPeakFlopsPerS);
  if (const auto r = f.optional_sourced_in("fp8_gemm_relative_efficiency", 0.1, 2.0)) {
    if (!h.peak_fp8_per_s)
      throw InputError(file, 0, "fp8_gemm_relative_efficiency", "is given without an fp8 peak");
    h.fp8_gemm_relative_efficiency = *r;
  }
  if (!h.peak_bf16_per_s && !h.peak_fp16_per_s && !h.peak_fp32_per_s)
    throw InputError(file, 0, "peak_flops_per_s", "needs at least one of bf16, fp16, fp32");
  h.hbm_bytes = f.sourced_in("hbm_bytes", kMinBytes, kMaxBytes);
  h.hbm_bandwidth_bytes_per_s = f.sourced_in("hbm_bandwidth_bytes_per_s", kMinBytesPerS, kMaxBytesPerS);
  h.devices_per_node = f.count_sourced("intra_node.devices_per_node", 1, kMaxDevices);
  h.intra_link_bandwidth_bytes_per_s =
      f.sourced_in("intra_node.link_bandwidth_bytes_per_s_per_direction", kMinBytesPerS, kMaxBytesPerS);
  h.intra_link_latency_s = f.sourced_in("intra_node.latency_s", 0, kMaxLatencyS);
  if (f.optional_sourced("intra_node.nvlinks")) h.nvlinks_per_gpu = f.count_sourced("intra_node.nvlinks", 1, 1024);
  h.inter_node_bandwidth_bytes_per_s = f.sourced_in("inter_node.bandwidth_bytes_per_s_per_device", kMinBytesPerS, kMaxBytesPerS);
  h.inter_node_latency_s = f.sourced_in("inter_node.latency_s", 0, kMaxLatencyS);
  h.machine = MachineSpec::flat(h.devices_per_node, h.intra_link_bandwidth_bytes_per_s, h.intra_link_latency_s,
                                h.inter_node_bandwidth_bytes_per_s, h.inter_node_latency_s);
  if (f.find("machine")) h.machine = MachineSpec::parse(f, h.machine);
  if (f.optional_sourced("matrix_unit_width")) h.matrix_unit_width = f.count_sourced("matrix_unit_width", 1, 1 << 16);
  if (f.find("compute_units")) {
    // Counts of the kernel-time model (models/kernel_time): integers in a physical range.
    h.sm_count = f.count_sourced("compute_units.sm_count", 1, 1 << 20);
    if (const auto cc = f.optional_sourced_in("compute_units.compute_capability", 1, 99))
      h.compute_capability = static_cast<std::int64_t>(std::lround(*cc * 10));
    h.sm_clock_hz = f.sourced_in("compute_units.sm_clock_hz", 1e6, 1e11);
    h.sfu_ops_per_clock_per_sm = f.sourced_in("compute_units.sfu_ops_per_clock_per_sm", 1, 1e6);
    h.shared_memory_per_sm_bytes = f.count_sourced("compute_units.shared_memory_per_sm_bytes", 1, std::int64_t{1} << 40);
    h.shared_memory_per_block_bytes = h.shared_memory_per_sm_bytes;
    if (f.optional_sourced("compute_units.shared_memory_per_block_bytes")) {
      h.shared_memory_per_block_bytes =
          f.count_sourced("compute_units.shared_memory_per_block_bytes", 1, h.shared_memory_per_sm_bytes);
    }
    h.registers_per_sm = f.count_sourced("compute_units.registers_per_sm", 1, std::int64_t{1} << 40);
    if (const auto b = f.optional_sourced_in("compute_units.shared_memory_bytes_per_clock_per_sm", 1, 1e5))
      h.shared_memory_bytes_per_clock_per_sm = *b;
    if (const auto lat = f.optional_sourced_in("compute_units.memory_latency_s", 1e-12, 1e-3)) h.memory_latency_s = *lat;
  }
  if (j.contains("sources") && j["sources"].is_array())
    for (const auto& s : j["sources"])
      if (s.is_string()) h.sources.push_back(s.get<std::string>());
  f.reject_unread("hardware file");
  return h;
}

Hardware Hardware::load_file(const std::string& path) {
  auto doc = read_json_file(path);
  // A variant of another catalog GPU (the same card in another machine): {"extends": "NAME", ...}
  // is NAME.json beside it with this file's fields merged over it (RFC 7386 merge patch: an object
  // merges member by member, anything else replaces). One level: the base may not extend.
  if (doc.is_object() && doc.contains("extends")) {
    const auto& e = doc["extends"];
    if (!e.is_string()) throw InputError(path, 0, "extends", "expected the name of another hardware file");
    const std::string base_name = e.get<std::string>();
    try {
      check_catalog_name(base_name, "extends", "hardware");
    } catch (const InputError& err) {
      throw err.located(path, 0);
    }
    const auto base_path = (std::filesystem::path(path).parent_path() / (base_name + ".json")).string();
    if (!std::filesystem::is_regular_file(base_path))
      throw InputError(path, 0, "extends", "no hardware file '" + base_name + "' beside this one");
    auto base = read_json_file(base_path);
    if (base.is_object() && base.contains("extends"))
      throw InputError(path, 0, "extends", "'" + base_name + "' extends another file itself; extend the file it extends");
    doc.erase("extends");
    // The machine block is a whole description: a variant's replaces the base's.
    if (doc.contains("machine")) base.erase("machine");
    base.merge_patch(doc);
    doc = std::move(base);
  }
  return from_json(doc, path);
}

void check_topology_hosts(const std::string& topology, std::int64_t topology_devices, std::int64_t devices_per_node,
                          std::int64_t mesh_devices) {
  if (topology_devices < mesh_devices)
    throw InputError({}, 0, "topology",
                     "topology " + topology + " has " + std::to_string(topology_devices) + " devices; the mesh needs mp x sp = " +
                         std::to_string(mesh_devices));
  const std::int64_t g = std::max<std::int64_t>(1, devices_per_node);
  if (mesh_devices > g && mesh_devices % g != 0)
    throw InputError({}, 0, "topology",
                     "the mesh's " + std::to_string(mesh_devices) + " devices do not fill whole nodes of topology " + topology +
                         " (" + std::to_string(g) + " devices per node): use a mesh of at most " + std::to_string(g) +
                         " devices or a multiple of " + std::to_string(g));
}

}  // namespace ringsim::models
