#include "sim/ring_hop.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/io/error.hpp"
#include "sim/step.hpp"

namespace ringsim::sim {

std::unique_ptr<Topology> scenario_topology(const models::ResolvedScenario& s, const std::string& spec, std::int64_t devices) {
  const auto& hw = s.hardware;
  const auto& p = s.profile;
  auto params = [&](double bw, double lat) {
    LinkParams l{p.link_bytes_per_s(bw), p.link_latency(lat)};
    if (!(l.bandwidth_bytes_per_s > 0) || !std::isfinite(l.bandwidth_bytes_per_s))
      throw models::InputError({}, 0, "topology", "link bandwidth must be positive and finite");
    return l;
  };
  const Fabric fabric{params(hw.intra_link_bandwidth_bytes_per_s, hw.intra_link_latency_s),
                      params(hw.inter_node_bandwidth_bytes_per_s, hw.inter_node_latency_s),
                      params(hw.intra_link_bandwidth_bytes_per_s, hw.intra_link_latency_s)};
  return std::make_unique<Topology>(Topology::parse(spec.empty() ? default_topology(hw, devices) : spec, fabric));
}

double HopLink::seconds(double bytes) const {
  return latency_s + (std::isfinite(bandwidth_bytes_per_s) ? bytes / bandwidth_bytes_per_s : 0.0);
}

HopLink ring_hop_link(const Topology& topology, const Route& route, const models::ResolvedScenario& s) {
  HopLink h{route.empty() ? 0.0 : s.profile.p2p_latency_s, std::numeric_limits<double>::infinity(), false};
  for (auto l : route) {
    h.latency_s += topology.link(l).latency_s;
    h.bandwidth_bytes_per_s = std::min(h.bandwidth_bytes_per_s, topology.link(l).bandwidth_bytes_per_s);
    h.crosses_nodes = h.crosses_nodes || topology.link(l).kind == LinkKind::Nic;
  }
  if (route.empty()) return h;
  // On a described machine (PCIe trees, staged copies, NIC rails: models/transport/) the topology
  // graph has no such resources: a hop takes the transport's ring-round rate, as the analytic
  // model does, so the two agree in lock-step.
  if (s.hardware.machine.described && s.cost && s.cost->transport()) {
    const auto& cost = *s.ring_scenario().cost;
    h.bandwidth_bytes_per_s = cost.ring_bandwidth_bytes_per_s(h.crosses_nodes);
    h.latency_s = cost.ring_latency_s(h.crosses_nodes);
    return h;
  }
  h.bandwidth_bytes_per_s = s.profile.p2p_limit(h.bandwidth_bytes_per_s);
  if (const auto measured = s.profile.ring_hop(s.hardware, h.crosses_nodes); measured.measured) {
    h.bandwidth_bytes_per_s = measured.bandwidth_bytes_per_s;
    h.latency_s = measured.latency_s;
  }
  return h;
}

}  // namespace ringsim::sim
