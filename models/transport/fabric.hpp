#pragma once
// A machine's nodes as shared resources, and the route of a transfer over them
// (models/hardware/machine.hpp describes one node; a fabric has `nodes` of them on a
// non-blocking network). Devices are numbered node by node: device d is GPU d % G of node d / G.
//
// Resources, each a capacity in bytes per second that max-min fair sharing divides
// (models/transport/fair_share.hpp):
//   NVSwitch node: each GPU's port into the switch, one per direction;
//   PCIe node: each GPU's slot link and each switch's uplink, one per direction and one for both
//     directions together (a link's duplex capacity), the link between sockets likewise, each
//     socket's root complex (traffic between PCIe and host memory), NVLink bridges per direction;
//   every node: its NICs, one per direction.
// Routes:
//   same node, NVSwitch: source port out, destination port in;
//   bridged pair: the bridge;
//   peer-to-peer over PCIe (a CUDA copy wherever the cards have peer access; NCCL only under a
//     common switch unless the machine says otherwise, else staged as below): up the tree to the lowest common switch, or through the root
//     complex (and the socket link) when there is none, then down;
//   staged (a card without peer access): up to the root complex, into host memory, out again
//     (the root complex carries the copy twice on one socket, once on each of two), down to the
//     destination: NCCL's SHM transport and cudaMemcpyPeer's fallback both copy device -> host ->
//     device (NVIDIA/nccl#1309: "a 2x increase in load on the PCI link to the CPU");
//   other node: the source GPU's NIC out, the destination GPU's NIC in (each GPU's own rail, as
//     NCCL's point-to-point picks the NIC nearest the GPU); on PCIe machines the slot links too,
//     and without GPUDirect RDMA the host staging of both ends.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "models/hardware/machine.hpp"
#include "models/transport/fair_share.hpp"

namespace ringsim::models::transport {

enum class ResourceKind : std::uint8_t { NvLinkOut, NvLinkIn, Bridge, GpuLink, SwitchUplink, SocketLink, RootComplex, NicOut, NicIn };
enum class PathKind : std::uint8_t { Local, NvLink, Bridge, PcieP2p, Staged, Network };
// Who moves the data: NCCL (what the libraries' send/receive and collectives use) takes PCIe
// peer-to-peer only under a common switch (MachineSpec::nccl_p2p_through_cpu), a CUDA copy
// (cudaMemcpyPeer: p2pBandwidthLatencyTest, p2pmark) wherever the cards have peer access.
enum class Mover : std::uint8_t { Nccl, CudaCopy };

[[nodiscard]] std::string_view to_string(PathKind k) noexcept;

struct Resource {
  std::string name;  // "gpu3 NVLink out", "switch sw0 uplink (both directions)", "socket link 0->1", "NIC2 in"
  ResourceKind kind = ResourceKind::NvLinkOut;
  double capacity_bytes_per_s = 0;
};

struct Route {
  std::vector<ResourceUse> uses;
  double latency_s = 0;
  PathKind kind = PathKind::Local;
};

class Fabric {
 public:
  // `scale` multiplies every capacity (a profile's link efficiency on a machine given by its
  // link specs rather than measured); throws std::invalid_argument for nodes < 1 or a bad scale.
  Fabric(MachineSpec machine, std::int64_t nodes, double scale = 1.0);

  [[nodiscard]] const MachineSpec& machine() const noexcept { return machine_; }
  [[nodiscard]] std::int64_t nodes() const noexcept { return nodes_; }
  [[nodiscard]] double scale() const noexcept { return scale_; }
  [[nodiscard]] std::int64_t devices() const noexcept { return nodes_ * machine_.gpus; }
  // Every node has the same resources, numbered node by node: resource i is node_resources()[i %
  // size] of node i / size. Names are composed on demand ("node1 NIC2 in"): a fabric of a
  // thousand GPUs is built for every scenario a planner tries.
  [[nodiscard]] std::span<const Resource> node_resources() const noexcept { return node_; }
  [[nodiscard]] std::int64_t resource_count() const noexcept { return static_cast<std::int64_t>(capacity_.size()); }
  [[nodiscard]] std::string resource_name(std::int32_t resource) const;
  [[nodiscard]] ResourceKind resource_kind(std::int32_t resource) const;
  [[nodiscard]] std::span<const double> capacities() const noexcept { return capacity_; }
  // Throws std::out_of_range for a device outside the fabric.
  [[nodiscard]] Route route(std::int64_t src, std::int64_t dst, Mover mover = Mover::Nccl) const;

 private:
  struct NodeLayout {  // resource index offsets within a node's block
    std::int32_t nvl_out = -1, nvl_in = -1;
    std::int32_t gpu_up = -1, gpu_down = -1, gpu_duplex = -1;
    std::int32_t sw_up = -1, sw_down = -1, sw_duplex = -1;
    std::int32_t socket_link = -1;  // 3 per ordered socket pair a < b: a->b, b->a, both
    std::int32_t root_complex = -1;
    std::int32_t bridge = -1;  // 2 per bridge pair: first->second, second->first
    std::int32_t nic_out = -1, nic_in = -1;
    std::int32_t size = 0;
  };
  [[nodiscard]] std::int32_t at(std::int64_t node, std::int32_t offset, std::int64_t index) const noexcept {
    return static_cast<std::int32_t>(node * layout_.size + offset + index);
  }
  [[nodiscard]] std::int32_t socket_pair(std::int32_t a, std::int32_t b) const noexcept;
  // Adds the crossings of one link (direction, both directions) to `uses`.
  void up_link(std::vector<ResourceUse>& uses, std::int64_t node, std::int32_t up, std::int32_t duplex, std::int64_t i) const;
  void down_link(std::vector<ResourceUse>& uses, std::int64_t node, std::int32_t down, std::int32_t duplex, std::int64_t i) const;
  void pcie_path(std::vector<ResourceUse>& uses, std::int64_t node, std::int32_t a, std::int32_t b, bool staged) const;
  [[nodiscard]] bool common_switch(std::int32_t a, std::int32_t b) const;
  void to_host(std::vector<ResourceUse>& uses, std::int64_t node, std::int32_t g, bool up) const;

  MachineSpec machine_;
  std::int64_t nodes_ = 1;
  double scale_ = 1;
  NodeLayout layout_;
  std::vector<Resource> node_;
  std::vector<double> capacity_;
};

// Merges repeated resources of a route into one use whose weight is their sum.
void merge_uses(std::vector<ResourceUse>& uses);

}  // namespace ringsim::models::transport
