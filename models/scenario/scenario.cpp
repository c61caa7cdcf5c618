#include "models/scenario/scenario.hpp"

#include <string>

namespace ringsim::models {

void ResolvedScenario::rebuild_cost() {
  cost = std::make_unique<CostModel>(hardware, profile, model, spec.mp, spec.batch, mask->heads(), mask->kind());
  if (ring_part) {
    ring_part->hardware = hardware;
    ring_part->profile = profile;
    ring_part->rebuild_cost();
  }
}

bool ResolvedScenario::ring_crosses_nodes() const noexcept {
  // mp groups are placed inside a node first; the ring leaves the node once mp x sp does.
  return spec.mp * spec.sp > hardware.devices_per_node;
}

std::string effective_mask(const ScenarioSpec& spec) { return spec.docs.empty() ? spec.mask : std::string("docs"); }

}  // namespace ringsim::models
