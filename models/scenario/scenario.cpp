#include "models/scenario/scenario.hpp"

#include <string>

namespace ringsim::models {

void ResolvedScenario::rebuild_cost() {
  cost = std::make_unique<CostModel>(hardware, profile, model, spec.mp, spec.batch, mask->heads(), mask->kind());
  if (ring_part) {
    ring_part->hardware = hardware;
    ring_part->profile = profile;
    // The ring part prices its hops on this scenario's devices: attach_transport below gives it them.
    ring_part->cost = std::make_unique<CostModel>(ring_part->hardware, ring_part->profile, ring_part->model,
                                                  ring_part->spec.mp, ring_part->spec.batch, ring_part->mask->heads(),
                                                  ring_part->mask->kind());
  }
  if (transport) attach_transport();
}

void ResolvedScenario::attach_transport() {
  double scale = 1;
  auto machine = transport_machine(hardware, profile, scale);
  const std::string signature = transport_signature_of(machine, scale);
  if (!transport || signature != transport_signature) {
    transport = std::make_shared<const transport::ScenarioTransport>(std::move(machine), spec.mp * spec.sp, scale);
    transport_signature = signature;
  }
  const auto hops = transport->ring("ring", ring_transfers);
  cost->set_transport(transport, hops);
  if (ring_part) {
    ring_part->transport = transport;
    ring_part->transport_signature = signature;
    ring_part->cost->set_transport(transport, hops);
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
