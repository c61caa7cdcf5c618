// Fuzz target: hardware JSON (models::Hardware::from_json behind models::parse_json_text).
#include <cstdint>
#include <string>

#include "models/io/error.hpp"
#include "models/hardware/hardware.hpp"
#include "models/io/json_fields.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto hw = ringsim::models::Hardware::from_json(ringsim::models::parse_json_text(text, "fuzz.json"), "fuzz.json");
    // What a valid file promises: finite, positive figures and a usable padding width.
    if (!(hw.hbm_bytes > 0) || !(hw.hbm_bandwidth_bytes_per_s > 0) || hw.devices_per_node < 1) __builtin_trap();
    if (hw.padded_to_matrix_unit(100) < 100) __builtin_trap();
  } catch (const ringsim::models::InputError&) {
  }
  return 0;
}
