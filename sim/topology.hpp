#pragma once
// The interconnect as a Boost.Graph graph: vertices are devices (GPUs, TPU chips) and
// switches, directed edges are links (each physical cable is two edges, one per direction,
// each with its own bandwidth). Builders for one NVSwitch node, several nodes on a network
// switch, and TPU tori; a spec parser; shortest routes; and the embedding of an mp x sp mesh
// into the topology as mp rings of sp devices with a route for every ring hop.
//
// Switches are vertices without a capacity of their own (non-blocking): contention happens
// on links only, which is where the network model shares bandwidth.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

namespace ringsim::sim {

enum class VertexKind : std::uint8_t { Device, Switch };
enum class LinkKind : std::uint8_t { NvLink, Nic, Torus };

struct VertexInfo {
  VertexKind kind = VertexKind::Device;
  std::int64_t device = -1;  // device index for devices, -1 for switches
  std::int64_t node = -1;    // node (server) of a device or NVSwitch; -1 for the network switch
  std::string name;          // "gpu3", "nvswitch0", "netswitch", "tpu(1,2)"
};

struct LinkInfo {
  std::int64_t id = -1;  // dense 0..link_count()-1, the index used by routes and the network
  LinkKind kind = LinkKind::NvLink;
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexInfo, LinkInfo>;
using Vertex = Graph::vertex_descriptor;

// One direction of a link, as the network sees it (no Boost types).
struct Link {
  std::int64_t src = 0;  // vertex indices
  std::int64_t dst = 0;
  LinkKind kind = LinkKind::NvLink;
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

// Bandwidth per direction and latency of one kind of link. Validated by the builders:
// bandwidth must be positive and finite, latency non-negative and finite.
struct LinkParams {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

// The link parameters a spec string needs; they come from the hardware description. Each
// latency is a device-to-device hop's, as the hardware files give it (the GPU-to-GPU latency that
// p2p probes measure, configs/hardware): a route through a switch crosses two links, so the
// builders put half of it on each link to and from a switch, and one hop through the switch costs
// it once, as the analytic model's hop does (models::Profile::ring_hop). A torus link joins two
// chips directly and carries the whole latency.
struct Fabric {
  LinkParams nvlink;  // GPU <-> NVSwitch, per GPU
  LinkParams nic;     // GPU <-> network switch, one NIC per GPU
  LinkParams torus;   // TPU chip <-> neighbour chip
};

// Link ids of a path, in order from source to destination.
using Route = std::vector<std::int64_t>;

class Topology {
 public:
  static constexpr std::int64_t kMaxGpusPerNode = 8;

  // One node: G <= 8 GPUs, each with one link pair to the node's NVSwitch.
  [[nodiscard]] static Topology node(std::int64_t gpus, LinkParams nvlink);
  // N nodes of G GPUs: NVSwitch inside each node, plus one NIC per GPU (a link pair GPU <->
  // network switch) into a single non-blocking network switch. Devices are numbered node by
  // node: device d is GPU d % G of node d / G.
  [[nodiscard]] static Topology nodes(std::int64_t n_nodes, std::int64_t gpus_per_node, LinkParams nvlink,
                                      LinkParams nic);
  // A 2D or 3D torus of chips with wrap-around links in every dimension; devices numbered
  // row-major (last coordinate fastest). A dimension of size 2 gets one link pair between its
  // two chips (the wrap-around would duplicate it), one of size 1 none.
  [[nodiscard]] static Topology torus(std::span<const std::int64_t> dims, LinkParams link);
  // "node:G", "nodes:NxG", "torus:AxB", "torus:AxBxC"; throws models::InputError with field
  // "topology" on a malformed or impossible spec.
  [[nodiscard]] static Topology parse(std::string_view spec, const Fabric& fabric);

  [[nodiscard]] const Graph& graph() const noexcept { return graph_; }
  [[nodiscard]] const std::string& spec() const noexcept { return spec_; }  // canonical, e.g. "nodes:2x8"
  [[nodiscard]] std::int64_t device_count() const noexcept { return static_cast<std::int64_t>(devices_.size()); }
  [[nodiscard]] std::int64_t vertex_count() const noexcept;
  [[nodiscard]] std::int64_t link_count() const noexcept { return static_cast<std::int64_t>(links_.size()); }
  // Devices per node (G); for a torus every chip counts as one node of 1.
  [[nodiscard]] std::int64_t devices_per_node() const noexcept { return devices_per_node_; }
  [[nodiscard]] Vertex device_vertex(std::int64_t device) const { return devices_.at(static_cast<std::size_t>(device)); }
  [[nodiscard]] const Link& link(std::int64_t id) const { return links_.at(static_cast<std::size_t>(id)); }
  [[nodiscard]] std::span<const Link> links() const noexcept { return links_; }
  // The order in which mesh ranks are placed on devices: device_order()[rank]. Identity for
  // nodes (so consecutive ranks share a node); for a torus the boustrophedon ("snake") order,
  // in which consecutive ranks are neighbours, so a ring over the whole torus is all one-hop
  // when its first dimension is even (else its closing hop takes two).
  [[nodiscard]] std::span<const std::int64_t> device_order() const noexcept { return order_; }

  // Shortest route between two devices: least total latency, then fewest hops; among equal
  // routes the one through the vertex settled first (smallest (latency, hops, vertex index)),
  // so the choice depends only on the topology. Empty when src == dst.
  [[nodiscard]] Route route(std::int64_t src_device, std::int64_t dst_device) const;
  // Same, reusing scratch space across calls: the cost is then proportional to the part of the
  // graph explored (a ring hop between neighbours touches a few vertices), not to its size.
  class RouteFinder {
   public:
    explicit RouteFinder(const Topology& topology);
    [[nodiscard]] Route route(std::int64_t src_device, std::int64_t dst_device);

   private:
    const Topology& topology_;
    std::vector<std::int64_t> latency_ps_;  // per vertex
    std::vector<std::int64_t> hops_;
    std::vector<std::int64_t> pred_link_;
    std::vector<std::uint32_t> stamp_;  // entries valid when == epoch_
    std::vector<std::uint32_t> settled_;  // == epoch_ once settled
    std::uint32_t epoch_ = 0;
  };

 private:
  Topology() = default;
  Vertex add_device(std::int64_t node, std::string name);
  Vertex add_switch(std::int64_t node, std::string name);
  void add_link_pair(Vertex a, Vertex b, LinkKind kind, LinkParams params);

  Graph graph_;
  std::string spec_;
  std::vector<Vertex> devices_;
  std::vector<Link> links_;
  std::vector<std::int64_t> order_;
  std::vector<std::int64_t> link_latency_ps_;  // integer latencies make route ties exact
  std::int64_t devices_per_node_ = 1;
};

// Which mesh axis varies fastest over consecutive device indices.
// Which mesh axis varies fastest over consecutive ranks (placed by Topology::device_order()).
enum class MeshOrder : std::uint8_t {
  MpInner,  // rank r = j * mp + k: a tensor-parallel group of mp is consecutive ranks (inside a node)
  SpInner,  // rank r = k * sp + j: a ring of sp is consecutive ranks
};

// mp rings of sp devices each (ring k, position j), and the route of every hop
// position j -> (j + 1) % sp. Ring order is the sequence-parallel rank order.
// On a torus with mp > 1, tensor-parallel groups are consecutive snake segments and the rings
// that cross them may take multi-hop, link-sharing routes; an embedding that gives mp and sp
// their own torus dimensions is future work.
class RingEmbedding {
 public:
  // Throws models::InputError (field "topology") when mp * sp exceeds the device count or
  // mp, sp < 1.
  RingEmbedding(const Topology& topology, std::int64_t mp, std::int64_t sp, MeshOrder order = MeshOrder::MpInner);

  [[nodiscard]] std::int64_t mp() const noexcept { return mp_; }
  [[nodiscard]] std::int64_t sp() const noexcept { return sp_; }
  [[nodiscard]] MeshOrder order() const noexcept { return order_; }
  // Physical device of ring k, position j.
  [[nodiscard]] std::int64_t device(std::int64_t ring, std::int64_t position) const {
    return devices_.at(index(ring, position));
  }
  // Route from device(ring, j) to device(ring, (j + 1) % sp); empty when sp == 1.
  [[nodiscard]] const Route& hop_route(std::int64_t ring, std::int64_t position) const {
    return routes_.at(index(ring, position));
  }
  // Sum of link latencies of a hop (seconds) and its narrowest link (bytes/s; +inf if empty).
  [[nodiscard]] double hop_latency_s(std::int64_t ring, std::int64_t position) const {
    return latency_s_.at(index(ring, position));
  }
  [[nodiscard]] double hop_bottleneck_bytes_per_s(std::int64_t ring, std::int64_t position) const {
    return bottleneck_bytes_per_s_.at(index(ring, position));
  }

 private:
  [[nodiscard]] std::size_t index(std::int64_t ring, std::int64_t position) const;

  std::int64_t mp_;
  std::int64_t sp_;
  MeshOrder order_;
  std::vector<std::int64_t> devices_;  // [ring * sp + position]
  std::vector<Route> routes_;          // same index
  std::vector<double> latency_s_;
  std::vector<double> bottleneck_bytes_per_s_;
};

}  // namespace ringsim::sim
