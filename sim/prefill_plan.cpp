#include "sim/prefill_plan.hpp"

#include <algorithm>

#include "models/hardware/hardware.hpp"

namespace ringsim::sim {

PrefillRingPlan plan_prefill(const models::ResolvedScenario& s, const models::PrefillPrediction& p,
                             const std::string& topology, MeshOrder placement) {
  PrefillRingPlan plan;
  const std::int64_t n = p.devices;
  plan.variant = p.variant;
  plan.devices = n;
  plan.layers = std::max<std::int64_t>(1, s.model.layers);
  plan.compute_s.assign(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n), 0.0));
  for (std::int64_t dev = 0; dev < n; ++dev)
    for (const auto& call : p.calls[static_cast<std::size_t>(dev)]) {
      // In round r device d works on what device d - r owns: its K/V (pass-KV) or its queries (pass-Q).
      const std::int64_t owner = p.variant == models::PrefillVariant::PassKV ? call.k_owner : call.q_owner;
      const std::int64_t round = ((dev - owner) % n + n) % n;
      plan.compute_s[static_cast<std::size_t>(dev)][static_cast<std::size_t>(round)] += call.seconds;
    }
  const auto topo = scenario_topology(s, topology, s.spec.mp * s.spec.sp);
  if (!topology.empty())
    models::check_topology_hosts(topo->spec(), topo->device_count(), topo->devices_per_node(), s.spec.mp * s.spec.sp);
  plan.topology = topo->spec();
  const RingEmbedding embedding(*topo, s.spec.mp, s.spec.sp, placement);
  for (std::int64_t j = 0; j < n; ++j) plan.hops.push_back(ring_hop_link(*topo, embedding.hop_route(0, j), s));
  plan.message_bytes = p.message_bytes;
  plan.return_bytes = p.return_bytes;
  plan.merge_s = p.merge_s;
  plan.other_layer_s = (p.other_compute_s + p.tp_communication_s) / static_cast<double>(plan.layers);
  return plan;
}

}  // namespace ringsim::sim
