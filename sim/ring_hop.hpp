#pragma once
// The links a scenario runs on and what one ring hop over them costs: shared by the training step
// (sim/step_plan.cpp) and the inference prefill (sim/prefill_plan.cpp), so a message of B bytes
// takes the same time on the same hop in both.
#include <memory>
#include <string>

#include "models/scenario/scenario.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

// The scenario's topology: `spec` ("node:G", "nodes:NxG", "torus:AxB[xC]"), or when empty the
// default for `devices` (default_topology), with the hardware's links at the profile's link
// efficiency and latency. Throws models::InputError (field "topology") for a link of zero or
// non-finite bandwidth or a malformed spec.
[[nodiscard]] std::unique_ptr<Topology> scenario_topology(const models::ResolvedScenario& s, const std::string& spec,
                                                          std::int64_t devices);

// A ring hop is the library's point-to-point send/recv. On hardware with measured hops
// (models::PointToPoint) a hop of that type takes the measured figures whole, the latency
// included, as the analytic model does (models::Profile::ring_hop); otherwise its links'
// narrowest bandwidth, at most the profile's p2p limit, plus the links' latencies and the
// profile's extra p2p latency. An empty route (a ring of one) has no latency and unlimited bandwidth.
struct HopLink {
  double latency_s = 0;
  double bandwidth_bytes_per_s = 0;  // +inf for an empty route
  bool crosses_nodes = false;        // through a NIC
  // A lone transfer of `bytes` over the hop.
  [[nodiscard]] double seconds(double bytes) const;
};
[[nodiscard]] HopLink ring_hop_link(const Topology& topology, const Route& route, const models::ResolvedScenario& s);

}  // namespace ringsim::sim
