// Fuzz target: profile JSON (models::Profile::from_json over a fixed hardware's defaults), and
// the round trip through to_json that `ringsim calibrate` writes.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "models/cost/cost.hpp"
#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"

namespace {

ringsim::models::Hardware hardware() {
  ringsim::models::Hardware hw;
  hw.name = "fuzz-gpu";
  hw.peak_bf16_per_s = hw.peak_fp16_per_s = hw.peak_tf32_per_s = hw.peak_fp32_per_s = hw.peak_fp8_per_s = 1e15;
  hw.hbm_bytes = 8e10;
  hw.hbm_bandwidth_bytes_per_s = 2e12;
  hw.devices_per_node = 8;
  hw.intra_link_bandwidth_bytes_per_s = 3e11;
  hw.inter_node_bandwidth_bytes_per_s = 2.5e10;
  return hw;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto hw = hardware();
  static const auto base = ringsim::models::Profile::spec_default(hw);
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto p = ringsim::models::Profile::from_json(ringsim::models::parse_json_text(text, "fuzz.json"), "fuzz.json", base);
    // A profile that loads must load again from what it writes, to the same values.
    const auto again = ringsim::models::Profile::from_json(p.to_json(), "again.json", base);
    if (again.to_json() != p.to_json()) __builtin_trap();
  } catch (const ringsim::models::InputError&) {
  }
  return 0;
}
