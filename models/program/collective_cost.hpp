#pragma once
// Closed forms of the collectives a strategy issues among groups of context-parallel ranks,
// and of the ring hops between them, on the default placement: rank j of tensor-parallel rank k
// is device j * mp + k, devices_per_node devices to a node, one link per device into the node's
// switch and one NIC per device into the network (models/hardware/hardware.hpp; sim/topology.hpp builds
// the same). Lock-step: a collective ends when its slowest group does.
//   all-gather, reduce-scatter: NCCL's ring algorithm, g - 1 steps; in each every member sends
//     one shard to the next member of its group; a step lasts as long as its slowest hop
//     (intra-node or inter-node transfer), so (g - 1) x max over hops;
//   all-to-all: every member sends to every other at once (NCCL's grouped send/recv); a member's
//     n_intra flows share its link into the switch and its n_inter flows its NIC, so the slowest
//     member's max(latency + n_intra B / bw_intra, latency + n_inter B / bw_inter).
// The simulator routes the same flows through its max-min network (sim/collective.hpp); on
// these topologies, with nothing else on the links, it gives the same times (tests/sim).
#include <cstdint>
#include <string>

#include "models/program/program.hpp"

namespace ringsim::models {

class CostModel;
struct Profile;

struct RankPlacement {
  std::int64_t sp = 1;
  std::int64_t mp = 1;
  std::int64_t devices_per_node = 1;
  // Node of context-parallel rank j, tensor-parallel rank k.
  [[nodiscard]] std::int64_t node(std::int64_t rank, std::int64_t tp = 0) const noexcept {
    return (rank * mp + tp) / devices_per_node;
  }
  // Whether some hop rank a -> rank b (any tensor-parallel rank) leaves its node.
  [[nodiscard]] bool crosses(std::int64_t a, std::int64_t b) const noexcept;
};

// Whether the cost model prices collectives on this placement by NCCL's model over the machine's
// transport (the scenario's own devices and node size); otherwise collective_s takes the closed
// forms above, which visit every member of every group (O(N^2) for one group of N).
[[nodiscard]] bool on_transport(const CostModel& cost, const RankPlacement& placement);

// Lock-step seconds of one collective stage over all its groups.
[[nodiscard]] double collective_s(const CostModel& cost, CollectiveKind kind, RankGroups groups, std::int64_t bytes,
                                  const RankPlacement& placement);

// What bounds that collective, in words: NCCL's algorithm and protocol and the fabric resource its
// bandwidth is set by ("ring, Simple: socket link 0->1 (8 transfers share 21 GB/s)"); empty
// without a transport.
[[nodiscard]] std::string collective_bound(const CostModel& cost, CollectiveKind kind, RankGroups groups, std::int64_t bytes,
                                           const RankPlacement& placement);

// The least a collective call of the library lasts: the host's work to issue it (Profile::
// host_collective_s and host_collective_peer_s). A group of one pays host_collective_s too: the
// program has the stage only where the library makes the call, and USP's all_to_all_4D reshapes,
// copies and calls NCCL even at a Ulysses degree of 1 (yunchang/comm/all_to_all.py at
// feifeibear/long-context-attention@b93c30e has no guard). A stage lasts the longer of this and
// its transfers; the simulator holds a group the same.
[[nodiscard]] double collective_host_s(const Profile& profile, RankGroups groups) noexcept;

// Whether some hop of the rings `rings` (position m -> m + 1) leaves its node; with a window,
// the inner hops (inside windows) and the outer hops (window to window).
struct RingHops {
  bool inner_inter = false;  // a ring hop, or a double ring's inner hop, leaves its node
  bool outer_inter = false;  // a double ring's outer hop leaves its node
};
[[nodiscard]] RingHops ring_hops(RankGroups rings, std::int64_t window, const RankPlacement& placement);

}  // namespace ringsim::models
