#include <array>

#include "models/families/families.hpp"
#include "models/io/error.hpp"

namespace ringsim::models {

namespace {

struct Family {
  std::string_view name;
  std::shared_ptr<const AttentionCost> (*make)();
};
// The families an implementation's "kernel" may name.
constexpr std::array kFamilies{
    Family{"blockwise", make_blockwise_cost},
    Family{"flash", make_flash_cost},
    Family{"scfa", make_scfa_cost},
};

}  // namespace

std::vector<std::string> attention_cost_families() {
  std::vector<std::string> names;
  for (const auto& f : kFamilies) names.emplace_back(f.name);
  return names;
}

std::shared_ptr<const AttentionCost> make_attention_cost(std::string_view family) {
  for (const auto& f : kFamilies)
    if (f.name == family) return f.make();
  std::string list;
  for (const auto& f : kFamilies) list += (list.empty() ? "" : ", ") + std::string(f.name);
  throw InputError({}, 0, "kernel", "unknown kernel family '" + std::string(family) + "' (known: " + list + ")");
}

}  // namespace ringsim::models
