#pragma once
// The phase a scenario runs in: a training step (forward and backward), a context-parallel
// prefill (a forward over new tokens and a KV cache) or a decode step. An implementation says
// which it runs (Implementation::phases): a serving stack's kernels may have no backward model,
// a training library's loop no decode.
#include <string_view>

namespace ringsim::models {

enum class RunPhase { Train, Prefill, Decode };
[[nodiscard]] const char* to_string(RunPhase p) noexcept;
// "train", "prefill", "decode"; InputError (field "phase") otherwise.
[[nodiscard]] RunPhase parse_phase(std::string_view text);

}  // namespace ringsim::models
