#pragma once
// Scenario builders shared by the test executables: one resolve() call from the handful of
// fields a test varies, and the cost model rebuilt after a test edits hardware or profile.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "models/scenario.hpp"

namespace ringsim::test {

inline models::ResolvedScenario resolve_scenario(const std::string& hardware, const std::string& model, std::int64_t mp,
                                                 std::int64_t sp, std::int64_t n_seq, const std::string& layout,
                                                 const std::string& mask = "causal",
                                                 std::optional<models::TileShape> tile = std::nullopt) {
  models::ScenarioSpec s;
  s.hardware = hardware;
  s.model = model;
  s.mp = mp;
  s.sp = sp;
  s.n_seq = n_seq;
  s.layout = layout;
  s.mask = mask;
  s.tile = tile;
  return models::resolve(s, models::Catalog());
}

// After a test changes s.hardware or s.profile: the cost model keeps numbers, not references.
inline void rebuild_cost(models::ResolvedScenario& s) {
  s.cost = std::make_unique<models::CostModel>(s.hardware, s.profile, s.model, s.spec.mp, s.spec.batch, s.mask->heads(),
                                                s.mask->kind());
}

}  // namespace ringsim::test
