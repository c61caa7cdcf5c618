#pragma once
// The kernel families: one file each (blockwise.cpp, flash.cpp, scfa.cpp), each an AttentionCost
// that times a device's attention work as its kernels run it, and the registry that names them.
// A new family is one more file here, its line in registry.cpp, its parameters in
// models/cost/profile_params.cpp, and an implementation in configs/ that names it.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/families/attention_cost.hpp"

namespace ringsim::models {

[[nodiscard]] std::shared_ptr<const AttentionCost> make_blockwise_cost();
// Keeps a memo of kernel times: a new one per scenario.
[[nodiscard]] std::shared_ptr<const AttentionCost> make_flash_cost();
[[nodiscard]] std::shared_ptr<const AttentionCost> make_scfa_cost();

}  // namespace ringsim::models
