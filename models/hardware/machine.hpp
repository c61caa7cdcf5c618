#pragma once
// The machine a GPU sits in, as shared resources (configs/hardware: the optional "machine" block):
// how the GPUs of a node reach each other (NVSwitch ports, or a PCIe tree of switches under CPU
// sockets, with NVLink bridges between some pairs), whether a card may read and write a peer's
// memory (GeForce cards may not: a copy is staged through host memory and crosses the CPU's root
// complex on the way in and again on the way out), and the NICs of a node with the GPU each sits
// beside. models/transport/ turns it into resources with capacities and routes transfers over them.
//
// A hardware file without the block describes the machine its intra_node and inter_node figures
// always meant: every GPU one link of intra_node.link_bandwidth_bytes_per_s_per_direction into a
// non-blocking switch, and one NIC of inter_node.bandwidth_bytes_per_s_per_device beside it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ringsim::models {

class JsonFields;

// A link's capacity per direction, and what its two directions carry together (0: each
// direction its own capacity, a full-duplex link). PCIe links moving host-staged copies carry
// less both ways than twice one way (p2pBandwidthLatencyTest's bidirectional matrices).
struct LinkSpec {
  double bytes_per_s = 0;
  double duplex_bytes_per_s = 0;
};

struct MachineSpec {
  enum class Fabric : std::uint8_t { NvSwitch, Pcie };
  struct Switch {
    std::string name;
    std::int32_t parent = -1;  // index of the switch above it; -1: on a root port of `socket`
    std::int32_t socket = 0;
    LinkSpec uplink;
  };

  Fabric fabric = Fabric::NvSwitch;
  bool described = false;  // from a "machine" block; false: the defaults above
  std::string note;
  std::int64_t gpus = 1;  // per node

  // NVSwitch: each GPU's port into the node's switch, per direction.
  double nvlink_bytes_per_s = 0;
  double nvlink_latency_s = 0;

  // PCIe tree.
  bool peer_access = true;
  LinkSpec gpu_link;                     // each GPU's own link (its slot)
  std::vector<Switch> switches;
  std::vector<std::int32_t> gpu_switch;  // per GPU: the switch it hangs off, -1 for a CPU root port
  std::vector<std::int32_t> gpu_socket;  // per GPU: its socket (the switch's, when under one)
  std::int64_t sockets = 1;
  LinkSpec socket_link;                  // between sockets (UPI / xGMI), per direction
  double root_complex_bytes_per_s = 0;   // per socket, PCIe <-> host memory; 0: no limit
  // NCCL moves data peer-to-peer only between GPUs under a common PCIe switch; through a CPU's
  // host bridge or across sockets it stages through host memory (its SHM transport) unless told
  // otherwise (NVIDIA/nccl src/graph/paths.cc @ 5067397c, ncclTopoCheckP2p: "By default don't use
  // P2P across CPU Host Bridges and further apart", p2pLevel = PATH_PXB; NCCL_P2P_LEVEL=SYS lifts
  // it). true: the machine's NCCL runs peer-to-peer through the CPU too (the file says why).
  bool nccl_p2p_through_cpu = false;
  double p2p_latency_s = 0;              // one peer-to-peer copy's latency over PCIe
  double staged_latency_s = 0;           // one copy staged through host memory

  // NVLink bridges between pairs of PCIe cards.
  std::vector<std::pair<std::int32_t, std::int32_t>> bridge_pairs;
  double bridge_bytes_per_s = 0;  // per direction
  double bridge_latency_s = 0;

  // NICs: nics per node, each GPU's own (rail) NIC by index; GPUDirect RDMA: the NIC reads and
  // writes GPU memory over PCIe (else the data is staged through host memory).
  std::int64_t nics = 1;
  double nic_bytes_per_s = 0;
  double nic_latency_s = 0;
  bool gpudirect = true;
  std::vector<std::int32_t> nic_of_gpu;

  // Every figure and every piece of structure the transport builds its resources and routes from
  // (not the names and notes): two machines with the same signature are the same fabric.
  [[nodiscard]] std::string signature() const;

  [[nodiscard]] bool bridged(std::int32_t a, std::int32_t b) const noexcept;
  // The switches from GPU g's slot up to its socket's root port, nearest first.
  [[nodiscard]] std::vector<std::int32_t> switch_chain(std::int32_t g) const;

  // The machine as nodes of `g` GPUs (a topology's nodes:NxG; g >= 1): fewer than it holds keep its
  // first g GPUs and the NICs beside them (NCCL takes the NIC nearest each GPU, so a node of one
  // GPU has one NIC, not the eight of the machine it was cut from); more extend an NVSwitch domain
  // with the same NICs per GPU (an NVL32 or NVL72 rack as one node). A PCIe machine cannot grow
  // past its tree: std::invalid_argument (callers check supports_gpus_per_node first).
  [[nodiscard]] MachineSpec with_gpus_per_node(std::int64_t g) const;
  [[nodiscard]] bool supports_gpus_per_node(std::int64_t g) const noexcept {
    return g >= 1 && (g <= gpus || fabric == Fabric::NvSwitch);
  }

  // The defaults of a hardware file without a "machine" block.
  [[nodiscard]] static MachineSpec flat(std::int64_t gpus, double intra_bytes_per_s, double intra_latency_s,
                                        double nic_bytes_per_s, double nic_latency_s);
  // Reads the "machine" block (located errors name file and field), on top of the flat defaults
  // (gpus, the NVSwitch port and the NIC figures of the hardware file).
  [[nodiscard]] static MachineSpec parse(const JsonFields& f, MachineSpec base);
};

}  // namespace ringsim::models
