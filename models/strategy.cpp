#include "models/strategy.hpp"

#include "models/error.hpp"

namespace ringsim::models {

std::vector<std::string> Strategy::known() { return {"ring"}; }

Strategy Strategy::parse(std::string_view spec) {
  if (spec == "ring") return Strategy{StrategyKind::Ring, std::string(spec)};
  std::string list;
  for (const auto& k : known()) list += (list.empty() ? "" : ", ") + k;
  throw InputError({}, 0, "cp", "unknown context-parallel strategy '" + std::string(spec) + "' (known: " + list + ")");
}

}  // namespace ringsim::models
