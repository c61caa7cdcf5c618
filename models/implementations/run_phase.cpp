#include "models/implementations/run_phase.hpp"

#include <string>

#include "models/io/error.hpp"

namespace ringsim::models {

const char* to_string(RunPhase p) noexcept {
  switch (p) {
    case RunPhase::Train: return "train";
    case RunPhase::Prefill: return "prefill";
    case RunPhase::Decode: return "decode";
  }
  return "train";
}

RunPhase parse_phase(std::string_view text) {
  if (text == "train") return RunPhase::Train;
  if (text == "prefill") return RunPhase::Prefill;
  if (text == "decode") return RunPhase::Decode;
  throw InputError({}, 0, "phase", "expected train, prefill or decode, got '" + std::string(text) + "'");
}

}  // namespace ringsim::models
