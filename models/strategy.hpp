#pragma once
// A context-parallel strategy: how the devices of a context-parallel group share one sequence's
// attention (which device holds which queries, how keys and values reach it). The strategy is
// an axis of the scenario (`--cp`, the `cp` column), parsed and checked here; the solvers take
// its work and traffic from it. Today's strategy is the ring: sp devices, sp rounds, K/V blocks
// passed to the next device each round (shared/background/striped-attention.md).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::models {

enum class StrategyKind { Ring };

struct Strategy {
  StrategyKind kind = StrategyKind::Ring;
  std::string spec = "ring";  // as written

  // Throws InputError (field "cp") for an unknown or malformed strategy, naming the known ones.
  [[nodiscard]] static Strategy parse(std::string_view spec);
  [[nodiscard]] static std::vector<std::string> known();
};

}  // namespace ringsim::models
