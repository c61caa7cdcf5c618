#include "models/scenario/scenario.hpp"

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
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

namespace {

// One transport per machine and device count for the whole process: every scenario on the same
// fabric (a sweep's lengths, strategies, layouts and implementations; the planner's thousands of
// points) shares its memoised collective plans and ring rates, whose keys name everything they
// depend on besides the fabric. Held weakly: a transport lives as long as a scenario holds it.
std::shared_ptr<const transport::ScenarioTransport> shared_transport(MachineSpec machine,
                                                                     const std::string& signature,
                                                                     std::int64_t devices, double scale) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const transport::ScenarioTransport>> cache;
  const std::string key = signature + "|devices " + std::to_string(devices);
  std::lock_guard lock(mutex);
  if (auto held = cache[key].lock()) return held;
  if (cache.size() > 4096) std::erase_if(cache, [](const auto& kv) { return kv.second.expired(); });
  auto made = std::make_shared<const transport::ScenarioTransport>(std::move(machine), devices, scale);
  cache[key] = made;
  return made;
}

// The memo key of a ring round's transfers: every (source, destination, bytes).
std::string ring_key(const std::vector<transport::Transfer>& ts) {
  std::string key = "ring";
  char buf[64];
  for (const auto& t : ts) {
    std::snprintf(buf, sizeof buf, "|%lld>%lld:%.17g", static_cast<long long>(t.src), static_cast<long long>(t.dst), t.bytes);
    key += buf;
  }
  return key;
}

}  // namespace

void ResolvedScenario::attach_transport() {
  double scale = 1;
  auto machine = transport_machine(hardware, profile, scale);
  const std::string signature = transport_signature_of(machine, scale);
  if (!transport || signature != transport_signature || transport->devices() != spec.mp * spec.sp) {
    transport = shared_transport(std::move(machine), signature, spec.mp * spec.sp, scale);
    transport_signature = signature;
  }
  const auto hops = transport->ring(ring_key(ring_transfers), ring_transfers);
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
