#pragma once
// What a GPU operation of a trace is, for the step's breakdown: attention forward (training's
// forward and inference's prefill) or backward, attention of a decode step, point-to-point
// transfers, collectives, GEMMs, memory copies and fills, and the rest. The name patterns are data
// (configs/trace/kernel_classes.json, each with the code that names its kernels), so a user with
// another library's kernels adds a rule instead of editing code; they are matched in linear time
// (name_pattern.hpp), whatever the name's length or the pattern.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "calibration/trace/name_pattern.hpp"
#include "calibration/trace/trace.hpp"

namespace ringsim::calibration {

enum class OpClass { AttentionFwd, AttentionBwd, AttentionDecode, P2p, Collective, Gemm, Memory, Other };
inline constexpr std::size_t kOpClasses = 8;
inline constexpr std::array<std::string_view, kOpClasses> kOpClassNames{
    "attention_fwd", "attention_bwd", "attention_decode", "p2p", "collective", "gemm", "memory", "other"};
[[nodiscard]] constexpr std::size_t index(OpClass c) noexcept { return static_cast<std::size_t>(c); }
[[nodiscard]] constexpr bool is_communication(OpClass c) noexcept { return c == OpClass::P2p || c == OpClass::Collective; }
// Work on the GPU's SMs that can hide a transfer on another stream (copies run on copy engines).
[[nodiscard]] constexpr bool is_compute(OpClass c) noexcept {
  return c == OpClass::AttentionFwd || c == OpClass::AttentionBwd || c == OpClass::AttentionDecode || c == OpClass::Gemm ||
         c == OpClass::Other;
}
[[nodiscard]] constexpr bool is_attention(OpClass c) noexcept {
  return c == OpClass::AttentionFwd || c == OpClass::AttentionBwd || c == OpClass::AttentionDecode;
}

class KernelClasses {
 public:
  // configs/trace/kernel_classes.json under `root` (the catalog's root), or a user's file.
  // InputError naming the file and rule when a class is unknown, or a pattern is not a regular
  // expression of the subset name_pattern.hpp matches (the reason said: a back-reference, ...).
  [[nodiscard]] static KernelClasses load(const std::string& path);
  [[nodiscard]] static std::string default_path(const std::string& root);

  // The first rule that matches: by the op's kind (memcpy, memset), by the collective the
  // profiler recorded for it, or by a pattern found anywhere in its name (case-insensitive).
  // Unmatched kernels are Other. Memoised by name: a trace repeats a few hundred names.
  [[nodiscard]] OpClass classify(const GpuOp& op) const;

 private:
  struct Rule {
    OpClass cls = OpClass::Other;
    std::vector<std::string> kinds, collectives;
    std::vector<NamePattern> patterns;
  };
  std::vector<Rule> rules_;
  mutable std::unordered_map<std::string, OpClass> memo_;
};

}  // namespace ringsim::calibration
