// Fuzz target: model JSON (models::ModelConfig::from_json), then what a model feeds: its
// parameter count and one step's ops.
#include <cmath>
#include <cstdint>
#include <string>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"
#include "models/workload/transformer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto m = ringsim::models::ModelConfig::from_json(ringsim::models::parse_json_text(text, "fuzz.json"), "fuzz.json");
    if (m.parameters() <= 0 || m.head_dim < 1) __builtin_trap();
    ringsim::models::StepShape shape;
    shape.tokens = 4096;
    shape.mp = 1;
    for (const auto& op : ringsim::models::step_ops(m, shape))
      if (!std::isfinite(op.flops) || !std::isfinite(op.bytes) || op.flops < 0 || op.bytes < 0) __builtin_trap();
  } catch (const ringsim::models::InputError&) {
  }
  return 0;
}
