#pragma once
// Transfers that run at once over a fabric, and NCCL's collectives built from them.
//
// A pattern is a set of transfers started together; each is priced by the max-min fair fluid
// (models/transport/fair_share.hpp): latency of its route plus its bytes drained at the rates the
// shared resources allow, re-shared as transfers finish.
//
// NCCL's collectives (NVIDIA/nccl src/graph/tuning.cc @ 5067397c, ncclTopoTuneModel and
// ncclTopoGetAlgoTime): time = latency + bytes / bandwidth per algorithm and protocol, and the
// fastest is chosen; the latencies are NCCL's own constants (baseLat, hwLat per NVLink / PCI /
// NET), the bandwidths ringsim's fabric instead of NCCL's topology guess:
//   ring (all-gather, reduce-scatter, all-reduce): channels are rings over the group; inside a
//     node a channel visits the node's ranks, between nodes it leaves through the NIC beside its
//     last rank and enters through the NIC beside the next node's first, a different rail per
//     channel (NCCL builds one ring per NIC and spreads inter-node traffic over all of a node's
//     NICs: NVIDIA/nccl-tests#267, src/graph/search.cc). The bus bandwidth is the channels'
//     fair-share rates summed; all-reduce moves 2(n-1)/n of the buffer per rank, all-gather and
//     reduce-scatter (n-1)/n (nccl-tests doc/PERFORMANCE.md);
//   tree (all-reduce over several nodes): a chain inside each node, a double binary tree between
//     nodes; a node's NICs carry the buffer once each way with two nodes and twice with more
//     (each node is an inner node of one tree and a leaf of the other), the chain twice;
//   protocols: LL at half the bandwidth (8-byte flag + 8-byte data lines), LL128 at 120/128 where
//     the node's GPUs talk over NVLink (NCCL enables LL128 there only), Simple at full bandwidth;
//   all-to-all and send/receive: every pair's transfer at once (NCCL's grouped send/receive; an
//     all-to-all cannot aggregate NICs, each GPU's inter-node part leaves through its own rail:
//     sjeaugey, NVIDIA/nccl-tests#267).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/transport/fabric.hpp"

namespace ringsim::models::transport {

struct Transfer {
  std::int64_t src = 0, dst = 0;
  double bytes = 0;
};

struct PatternTime {
  double seconds = 0;  // the slowest transfer: its latency plus its fluid finish
  // The slowest transfer's rate when all start, the resource that sets it, how many transfers
  // share that resource, and the kind of path it takes.
  double rate_bytes_per_s = 0;
  std::int32_t bottleneck = -1;
  std::int64_t sharing = 0;
  PathKind kind = PathKind::Local;
  double latency_s = 0;  // the largest route latency
};

// Throws std::out_of_range for a device outside the fabric.
[[nodiscard]] PatternTime concurrent(const Fabric& fabric, std::span<const Transfer> transfers);

// Steady rates of a lock-step pattern (every transfer the same size): the slowest transfer of
// the intra-node ones and of the inter-node ones, for a ring whose rounds wait for the slowest.
struct HopRates {
  double intra_bytes_per_s = 0, intra_latency_s = 0;  // 0 rate: no intra-node transfer
  double inter_bytes_per_s = 0, inter_latency_s = 0;
  std::int32_t intra_bottleneck = -1, inter_bottleneck = -1;
  std::int64_t intra_sharing = 0, inter_sharing = 0;
  PathKind intra_kind = PathKind::Local;
};
[[nodiscard]] HopRates hop_rates(const Fabric& fabric, std::span<const Transfer> transfers);

enum class Collective : std::uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };
[[nodiscard]] std::string_view to_string(Collective c) noexcept;

struct CollectiveTime {
  double seconds = 0;
  std::string algorithm;  // ring | tree | direct (all-to-all, send/receive)
  std::string protocol;   // LL | LL128 | Simple
  double bus_bytes_per_s = 0;  // nccl-tests' busbw of this call
  double latency_s = 0;
  std::int32_t bottleneck = -1;  // the resource that bounds the bandwidth
  std::int64_t sharing = 0;
};

// A collective's shape priced once (its channels' fair-share rates, its tree's NIC and chain
// rates, an all-to-all's fluid per byte), so each call's time is a few operations: the cost
// model keeps one per collective of a scenario.
class CollectivePlan {
 public:
  // Throws std::invalid_argument for groups of different sizes.
  CollectivePlan(const Fabric& fabric, Collective kind, std::span<const std::vector<std::int64_t>> groups);
  [[nodiscard]] CollectiveTime time(double bytes) const;
  [[nodiscard]] Collective kind() const noexcept { return kind_; }
  // The same rates for groups of `n` ranks over `nodes` nodes with as many ranks per node: a ring's
  // or tree's rates depend on the ranks per node and whether there are more than two nodes, not on
  // how many (every node's ports and NICs carry the same per channel), so a group of a million
  // ranks is priced on three nodes' worth (not for all-to-all and send/receive patterns).
  [[nodiscard]] CollectivePlan resized(std::int64_t n, std::int64_t nodes) const;

 private:
  Collective kind_ = Collective::AllReduce;
  std::int64_t n_ = 1, nodes_ = 1, ppn_ = 1;
  int intra_ = 0;  // NCCL's hardware class of the node's links
  double net_latency_us_ = 0;  // the NICs' own latency, added to NCCL's per inter-node step (latencyInter)
  double ring_bus_bytes_per_s_ = 0;
  std::int32_t ring_bottleneck_ = -1;
  std::int64_t ring_sharing_ = 0;
  double tree_nic_bytes_per_s_ = 0, tree_chain_bytes_per_s_ = 0;
  // Direct patterns: per transfer, its latency and its fluid finish per byte of the call.
  std::vector<double> direct_latency_s_, direct_s_per_byte_;
  std::int32_t direct_bottleneck_ = -1;
  std::int64_t direct_sharing_ = 0;
};

// One collective over `groups` that run at once (each a list of devices, all the same size),
// `bytes` as nccl-tests counts it per rank: all-reduce the buffer, all-gather the output,
// reduce-scatter the input, all-to-all the whole send buffer, send/receive the message.
// A group of one costs nothing. Throws std::invalid_argument for groups of different sizes.
[[nodiscard]] CollectiveTime collective(const Fabric& fabric, Collective kind,
                                        std::span<const std::vector<std::int64_t>> groups, double bytes);

}  // namespace ringsim::models::transport
