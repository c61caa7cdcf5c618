#include "sim/topology.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::sim {
namespace {

using models::InputError;

// Far beyond any cluster the project models, small enough that a typo ("nodes:100000x8")
// fails fast instead of allocating gigabytes.
constexpr std::int64_t kMaxDevices = std::int64_t{1} << 20;

[[noreturn]] void fail(const std::string& message) { throw InputError({}, 0, "topology", message); }

void check_link(const LinkParams& p, const char* what) {
  if (!(p.bandwidth_bytes_per_s > 0) || !std::isfinite(p.bandwidth_bytes_per_s))
    fail(std::string(what) + " link bandwidth must be a positive, finite number of bytes/s, got " +
         std::to_string(p.bandwidth_bytes_per_s));
  if (!(p.latency_s >= 0) || !std::isfinite(p.latency_s))
    fail(std::string(what) + " link latency must be a non-negative, finite number of seconds, got " +
         std::to_string(p.latency_s));
}

void check_count(std::int64_t v, const char* what) {
  if (v < 1) fail(std::string(what) + " must be at least 1, got " + std::to_string(v));
  if (v > kMaxDevices) fail(std::string(what) + " " + std::to_string(v) + " is larger than the supported " +
                            std::to_string(kMaxDevices));
}

void check_gpus_per_node(std::int64_t g) {
  check_count(g, "GPUs per node");
  if (g > Topology::kMaxGpusPerNode)
    fail("a node has at most " + std::to_string(Topology::kMaxGpusPerNode) + " GPUs on its NVSwitch, got " +
         std::to_string(g));
}

// Latency in whole picoseconds for route comparison: sums of integers tie exactly where sums of
// doubles could differ in the last bit depending on the order of addition.
std::int64_t latency_ps(double latency_s) { return std::llround(latency_s * 1e12); }

// A link to or from a switch: half of the device-to-device hop's latency (Fabric).
LinkParams switch_side(LinkParams hop) { return {hop.bandwidth_bytes_per_s, hop.latency_s / 2}; }

}  // namespace

Vertex Topology::add_device(std::int64_t node, std::string name) {
  const auto v = boost::add_vertex(VertexInfo{VertexKind::Device, device_count(), node, std::move(name)}, graph_);
  order_.push_back(device_count());
  devices_.push_back(v);
  return v;
}

Vertex Topology::add_switch(std::int64_t node, std::string name) {
  return boost::add_vertex(VertexInfo{VertexKind::Switch, -1, node, std::move(name)}, graph_);
}

void Topology::add_link_pair(Vertex a, Vertex b, LinkKind kind, LinkParams p) {
  for (const auto& [s, d] : {std::pair{a, b}, std::pair{b, a}}) {
    const auto id = link_count();
    boost::add_edge(s, d, LinkInfo{id, kind, p.bandwidth_bytes_per_s, p.latency_s}, graph_);
    links_.push_back(Link{static_cast<std::int64_t>(s), static_cast<std::int64_t>(d), kind, p.bandwidth_bytes_per_s,
                          p.latency_s});
    link_latency_ps_.push_back(latency_ps(p.latency_s));
  }
}

std::int64_t Topology::vertex_count() const noexcept { return static_cast<std::int64_t>(boost::num_vertices(graph_)); }

Topology Topology::node(std::int64_t gpus, LinkParams nvlink) {
  check_gpus_per_node(gpus);
  check_link(nvlink, "NVLink");
  Topology t;
  t.spec_ = "node:" + std::to_string(gpus);
  t.devices_per_node_ = gpus;
  const auto sw = t.add_switch(0, "nvswitch0");
  for (std::int64_t g = 0; g < gpus; ++g)
    t.add_link_pair(t.add_device(0, "gpu" + std::to_string(g)), sw, LinkKind::NvLink, switch_side(nvlink));
  return t;
}

Topology Topology::nodes(std::int64_t n_nodes, std::int64_t gpus_per_node, LinkParams nvlink, LinkParams nic) {
  check_count(n_nodes, "number of nodes");
  check_gpus_per_node(gpus_per_node);
  if (n_nodes * gpus_per_node > kMaxDevices)
    fail(std::to_string(n_nodes * gpus_per_node) + " devices is more than the supported " + std::to_string(kMaxDevices));
  check_link(nvlink, "NVLink");
  check_link(nic, "NIC");
  Topology t;
  t.spec_ = "nodes:" + std::to_string(n_nodes) + "x" + std::to_string(gpus_per_node);
  t.devices_per_node_ = gpus_per_node;
  const auto net = t.add_switch(-1, "netswitch");
  for (std::int64_t n = 0; n < n_nodes; ++n) {
    const auto sw = t.add_switch(n, "nvswitch" + std::to_string(n));
    for (std::int64_t g = 0; g < gpus_per_node; ++g) {
      const auto gpu = t.add_device(n, "gpu" + std::to_string(n * gpus_per_node + g));
      t.add_link_pair(gpu, sw, LinkKind::NvLink, switch_side(nvlink));
      t.add_link_pair(gpu, net, LinkKind::Nic, switch_side(nic));
    }
  }
  return t;
}

Topology Topology::torus(std::span<const std::int64_t> dims, LinkParams link) {
  if (dims.size() != 2 && dims.size() != 3)
    fail("a torus has 2 or 3 dimensions, got " + std::to_string(dims.size()));
  std::int64_t total = 1;
  for (const auto d : dims) {
    check_count(d, "torus dimension");
    total *= d;  // each factor <= 2^20 and the running product is checked below: no overflow
    if (total > kMaxDevices)
      fail("torus of more than the supported " + std::to_string(kMaxDevices) + " chips");
  }
  check_link(link, "torus");
  Topology t;
  t.spec_ = "torus:";
  // Appends rather than "literal" + string: GCC 12 warns falsely (-Wrestrict) on the latter.
  for (std::size_t i = 0; i < dims.size(); ++i) t.spec_.append(i ? "x" : "").append(std::to_string(dims[i]));
  t.devices_per_node_ = 1;
  const auto nd = dims.size();
  std::vector<std::int64_t> coord(nd, 0);
  for (std::int64_t d = 0; d < total; ++d) {
    std::string name = "tpu(";
    std::int64_t rest = d;
    for (std::size_t i = nd; i-- > 0;) {
      coord[i] = rest % dims[i];
      rest /= dims[i];
    }
    for (std::size_t i = 0; i < nd; ++i) name.append(i ? "," : "").append(std::to_string(coord[i]));
    t.add_device(d, name + ")");
  }
  // Row-major strides: last coordinate fastest.
  std::vector<std::int64_t> stride(nd, 1);
  for (std::size_t i = nd - 1; i-- > 0;) stride[i] = stride[i + 1] * dims[i + 1];
  // Snake order: the rank's row-major digits, each run backwards when the rank's prefix of
  // higher digits (as a row-major index) is odd; consecutive ranks then differ in one
  // coordinate by one.
  for (std::int64_t r = 0; r < total; ++r) {
    std::int64_t device = 0;
    std::int64_t prefix = 0;
    for (std::size_t i = 0; i < nd; ++i) {
      const auto digit = (r / stride[i]) % dims[i];
      device += (prefix % 2 == 0 ? digit : dims[i] - 1 - digit) * stride[i];
      prefix = prefix * dims[i] + digit;
    }
    t.order_[static_cast<std::size_t>(r)] = device;
  }
  for (std::int64_t d = 0; d < total; ++d) {
    for (std::size_t i = 0; i < nd; ++i) {
      const auto c = (d / stride[i]) % dims[i];
      if (dims[i] == 1 || (dims[i] == 2 && c == 1)) continue;
      const auto next = d + (((c + 1) % dims[i]) - c) * stride[i];
      t.add_link_pair(t.devices_[static_cast<std::size_t>(d)], t.devices_[static_cast<std::size_t>(next)],
                      LinkKind::Torus, link);
    }
  }
  return t;
}

Topology Topology::parse(std::string_view spec, const Fabric& fabric) {
  const auto s = models::trim(spec);
  const auto colon = s.find(':');
  const auto kind = s.substr(0, colon);
  const auto args = colon == std::string_view::npos ? std::string_view{} : s.substr(colon + 1);
  const std::string quoted = std::string("'").append(s).append("'");
  if (colon == std::string_view::npos || (kind != "node" && kind != "nodes" && kind != "torus"))
    fail("unknown topology " + quoted + " (expected node:G, nodes:NxG, torus:AxB or torus:AxBxC)");
  std::vector<std::int64_t> n;
  try {
    for (const auto& part : models::split(args, 'x')) n.push_back(models::parse_positive_int(part, "topology"));
  } catch (const InputError& e) {
    fail("bad topology " + quoted + ": " + e.message());
  }
  if (kind == "node") {
    if (n.size() != 1) fail("bad topology " + quoted + ": expected node:G");
    return node(n[0], fabric.nvlink);
  }
  if (kind == "nodes") {
    if (n.size() != 2) fail("bad topology " + quoted + ": expected nodes:NxG");
    return nodes(n[0], n[1], fabric.nvlink, fabric.nic);
  }
  if (n.size() != 2 && n.size() != 3) fail("bad topology " + quoted + ": expected torus:AxB or torus:AxBxC");
  return torus(n, fabric.torus);
}

Route Topology::route(std::int64_t src_device, std::int64_t dst_device) const {
  RouteFinder finder(*this);
  return finder.route(src_device, dst_device);
}

Topology::RouteFinder::RouteFinder(const Topology& topology)
    : topology_(topology),
      latency_ps_(static_cast<std::size_t>(topology.vertex_count())),
      hops_(latency_ps_.size()),
      pred_link_(latency_ps_.size()),
      stamp_(latency_ps_.size(), 0),
      settled_(latency_ps_.size(), 0) {}

Route Topology::RouteFinder::route(std::int64_t src_device, std::int64_t dst_device) {
  const auto n_dev = topology_.device_count();
  if (src_device < 0 || src_device >= n_dev || dst_device < 0 || dst_device >= n_dev)
    throw std::out_of_range("route between devices " + std::to_string(src_device) + " and " +
                            std::to_string(dst_device) + " of " + std::to_string(n_dev));
  if (src_device == dst_device) return {};
  if (++epoch_ == 0) {  // wrapped: forget all stamps once every 2^32 searches
    std::fill(stamp_.begin(), stamp_.end(), 0);
    std::fill(settled_.begin(), settled_.end(), 0);
    epoch_ = 1;
  }
  const auto& g = topology_.graph_;
  const auto src = topology_.device_vertex(src_device);
  const auto dst = topology_.device_vertex(dst_device);
  // Dijkstra on (latency, hops, vertex) with early exit at dst. Relaxation only on a strict
  // improvement keeps the predecessor settled first among equal routes.
  using Key = std::tuple<std::int64_t, std::int64_t, Vertex>;
  std::priority_queue<Key, std::vector<Key>, std::greater<>> heap;
  stamp_[src] = epoch_;
  latency_ps_[src] = 0;
  hops_[src] = 0;
  pred_link_[src] = -1;
  heap.emplace(0, 0, src);
  while (!heap.empty()) {
    const auto [lat, hops, v] = heap.top();
    heap.pop();
    if (settled_[v] == epoch_) continue;
    settled_[v] = epoch_;
    if (v == dst) break;
    for (const auto e : boost::make_iterator_range(boost::out_edges(v, g))) {
      const auto w = boost::target(e, g);
      const auto id = g[e].id;
      const auto nl = lat + topology_.link_latency_ps_[static_cast<std::size_t>(id)];
      const auto nh = hops + 1;
      if (stamp_[w] != epoch_ || std::tie(nl, nh) < std::tie(latency_ps_[w], hops_[w])) {
        stamp_[w] = epoch_;
        latency_ps_[w] = nl;
        hops_[w] = nh;
        pred_link_[w] = id;
        heap.emplace(nl, nh, w);
      }
    }
  }
  if (settled_[dst] != epoch_)
    throw std::logic_error("topology " + topology_.spec() + " has no route from device " +
                           std::to_string(src_device) + " to device " + std::to_string(dst_device));
  Route r;
  for (auto v = dst; v != src;) {
    const auto id = pred_link_[v];
    r.push_back(id);
    v = static_cast<Vertex>(topology_.links_[static_cast<std::size_t>(id)].src);
  }
  std::reverse(r.begin(), r.end());
  return r;
}

RingEmbedding::RingEmbedding(const Topology& topology, std::int64_t mp, std::int64_t sp, MeshOrder order)
    : mp_(mp), sp_(sp), order_(order) {
  if (mp < 1 || sp < 1)
    fail("mesh " + std::to_string(mp) + "x" + std::to_string(sp) + ": mp and sp must be at least 1");
  if (mp > topology.device_count() || sp > topology.device_count() / mp)
    fail("mesh " + std::to_string(mp) + "x" + std::to_string(sp) + " needs " + std::to_string(mp) + " * " +
         std::to_string(sp) + " devices but topology " + topology.spec() + " has " +
         std::to_string(topology.device_count()));
  const auto n = static_cast<std::size_t>(mp * sp);
  devices_.resize(n);
  for (std::int64_t k = 0; k < mp; ++k) {
    for (std::int64_t j = 0; j < sp; ++j) {
      const auto rank = order == MeshOrder::MpInner ? j * mp + k : k * sp + j;
      devices_[index(k, j)] = topology.device_order()[static_cast<std::size_t>(rank)];
    }
  }
  Topology::RouteFinder finder(topology);
  routes_.reserve(n);
  latency_s_.reserve(n);
  bottleneck_bytes_per_s_.reserve(n);
  for (std::int64_t k = 0; k < mp; ++k) {
    for (std::int64_t j = 0; j < sp; ++j) {
      routes_.push_back(finder.route(device(k, j), device(k, (j + 1) % sp)));
      double lat = 0;
      double bw = std::numeric_limits<double>::infinity();
      for (const auto id : routes_.back()) {
        lat += topology.link(id).latency_s;
        bw = std::min(bw, topology.link(id).bandwidth_bytes_per_s);
      }
      latency_s_.push_back(lat);
      bottleneck_bytes_per_s_.push_back(bw);
    }
  }
}

std::size_t RingEmbedding::index(std::int64_t ring, std::int64_t position) const {
  if (ring < 0 || ring >= mp_ || position < 0 || position >= sp_)
    throw std::out_of_range("ring " + std::to_string(ring) + " position " + std::to_string(position) + " of a " +
                            std::to_string(mp_) + "x" + std::to_string(sp_) + " mesh");
  return static_cast<std::size_t>(ring * sp_ + position);
}

}  // namespace ringsim::sim
