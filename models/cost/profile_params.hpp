#pragma once
// The numeric parameters of a Profile, declared once: each one's JSON name, its field, the bounds
// its physical meaning allows a fit, what it means, and whether every kernel family reads it or
// only the families that declare it. The common ones are what the cost model charges whatever
// kernel runs (projections and MLP, memory-bound ops, links, the ring protocol's rounds and the
// attention tiles' efficiency); the others belong to kernel families, and each family lists the
// ones it reads (AttentionCost::own_parameters in models/families/), so a profile of an
// implementation holds only what its family uses and a field it does not use is refused.
#include <span>
#include <string_view>

#include "models/cost/cost.hpp"

namespace ringsim::models {

struct ProfileParameter {
  std::string_view name;
  double Profile::*field;
  double lower;  // the bounds a fit may move it within
  double upper;
  bool common;   // read whatever the kernel family
  bool fittable; // a fit may free it (calibrate --free)
  bool zero_is_none;  // 0 means "no such limit": written only when set
  std::string_view meaning;
};

[[nodiscard]] std::span<const ProfileParameter> profile_parameters() noexcept;
// nullptr for a name that is not a numeric profile parameter.
[[nodiscard]] const ProfileParameter* find_profile_parameter(std::string_view name) noexcept;

}  // namespace ringsim::models
