#include "sim/prefill_plan.hpp"

#include <algorithm>

#include "models/hardware/hardware.hpp"
#include "models/io/error.hpp"
#include "models/io/limits.hpp"
#include "models/io/parse.hpp"
#include "sim/step_size.hpp"

namespace ringsim::sim {

void check_prefill_sim_size(const models::ResolvedScenario& s, std::int64_t n) {
  const double cells = static_cast<double>(n) * static_cast<double>(n);
  const double layers = static_cast<double>(std::max<std::int64_t>(1, s.model.layers));
  // The plan's (device x round) seconds and the run's ticks of them: 16 bytes a cell.
  models::check_memory(16 * cells, "sp", "simulating a prefill over " + std::to_string(n) + " devices (N x N rounds)");
  // Per layer, device and round a call's end and a block's arrival; the full forward and one
  // layer alone are run (simulate_prefill).
  const double events = 2 * cells * (layers + 1);
  if (!(events <= kDefaultMaxEvents))
    throw models::InputError({}, 0, "sp",
                             "simulating a prefill over " + std::to_string(n) + " devices and " +
                                 models::short_number(layers, 3) + " layers takes about " +
                                 models::short_number(events, 3) + " engine events, more than the " +
                                 models::short_number(kDefaultMaxEvents, 3) +
                                 " a simulation may take: predict --phase prefill gives the closed form at any size");
}

PrefillRingPlan plan_prefill(const models::ResolvedScenario& s, const models::PrefillPrediction& p,
                             const std::string& topology, MeshOrder placement) {
  PrefillRingPlan plan;
  const std::int64_t n = p.devices;
  plan.variant = p.variant;
  plan.devices = n;
  plan.layers = std::max<std::int64_t>(1, s.model.layers);
  check_prefill_sim_size(s, n);
  plan.compute_s.assign(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n), 0.0));
  for (std::int64_t dev = 0; dev < n; ++dev)
    for (const auto& call : p.calls_of(dev)) {
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
  if (p.all_to_all_on_transport) plan.exchange_s = p.all_to_all_s;
  plan.merge_s = p.merge_s;
  plan.other_layer_s = (p.other_compute_s + p.tp_communication_s) / static_cast<double>(plan.layers);
  return plan;
}

}  // namespace ringsim::sim
