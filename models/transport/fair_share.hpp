#pragma once
// Max-min fair sharing of resources by concurrent transfers, as a fluid: every resource (one
// direction of a link, a link's two directions together, a PCIe root complex, a NIC) has a
// capacity in bytes per second; a flow loads each resource it crosses with a weight (1 for a
// crossing, 2 where a host-staged copy enters and leaves the same root complex), and the rates are
// the max-min fair ones: no flow can go faster without slowing one that is already no faster.
// Found by progressive filling (water-filling): raise every unfrozen flow's rate together until a
// resource is full, freeze the flows on it, repeat. The simulator's network (sim/network.hpp)
// shares its links by the same rule, so the analytic model and the simulator agree on a pattern
// of transfers that start together.
//
// Why max-min: it is what concurrent DMA streams and NCCL channels over a shared PCIe link or
// NIC settle to when none is favoured (credits are granted round-robin per virtual channel); the
// probes that separate the rules (the 1-56-flow scaling of an 8-GPU switch tree,
// data/components/links/pcie/rtxpro6000bw_x8_cpayne_switchtec.csv: 56 flows at 4.2 GB/s each =
// 233 GB/s total, four flows into one GPU at 27 GB/s each) show equal shares of the bottleneck.
#include <cstdint>
#include <span>
#include <vector>

namespace ringsim::models::transport {

// One resource a flow crosses, with the load it puts on it per byte it moves.
struct ResourceUse {
  std::int32_t resource = 0;
  double weight = 1;
};

struct FlowRates {
  std::vector<double> rate_bytes_per_s;  // per flow
  // The resource that froze each flow (its bottleneck); -1 for a flow that crosses nothing.
  std::vector<std::int32_t> bottleneck;
};

// Max-min fair rates of flows that run at once. `capacity` is indexed by resource; a flow with no
// uses runs at infinity (it crosses nothing that limits it). Ties are broken by the lower resource
// index, so the result depends only on the input. Capacities must be positive and finite, weights
// positive (std::invalid_argument otherwise).
[[nodiscard]] FlowRates max_min_rates(std::span<const double> capacity,
                                      std::span<const std::vector<ResourceUse>> flows);

// The fluid completion of flows that start together with `bytes` each: when a flow finishes the
// others are re-shared. Seconds until each flow's last byte has left (no latency).
[[nodiscard]] std::vector<double> fluid_finish_s(std::span<const double> capacity,
                                                 std::span<const std::vector<ResourceUse>> flows,
                                                 std::span<const double> bytes);

}  // namespace ringsim::models::transport
