#pragma once
// Bytes per element of what inference moves and keeps: K/V cache entries, queries and partial
// outputs are bf16 in the public inference code (its caches and ring messages), so prefill and
// decode count them with one definition.
namespace ringsim::models {

inline constexpr double kInferenceWireBytes = 2;

}  // namespace ringsim::models
