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

std::string docs_text(const ScenarioSpec& spec) { return spec.docs ? spec.docs->text() : std::string(); }

std::string_view effective_mask_family(const ScenarioSpec& spec) noexcept {
  static const MaskSpec packed = MaskSpec::packed_documents();
  return spec.docs ? std::string_view(packed.family_name()) : std::string_view(spec.mask.family_name());
}

MaskSpec effective_mask(const ScenarioSpec& spec) { return spec.docs ? MaskSpec::packed_documents() : spec.mask; }

}  // namespace ringsim::models
