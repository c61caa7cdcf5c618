#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "models/io/error.hpp"
#include "sim/topology.hpp"

using ringsim::models::InputError;
using ringsim::sim::Fabric;
using ringsim::sim::LinkKind;
using ringsim::sim::LinkParams;
using ringsim::sim::MeshOrder;
using ringsim::sim::RingEmbedding;
using ringsim::sim::Route;
using ringsim::sim::Topology;
using ringsim::sim::VertexKind;

namespace {

const LinkParams kNvlink{450e9, 1e-6};
const LinkParams kNic{50e9, 5e-6};
const LinkParams kIci{45e9, 2e-6};
const Fabric kFabric{kNvlink, kNic, kIci};

// Link ids form a path from src to dst in the graph.
bool is_path(const Topology& t, const Route& r, std::int64_t src_dev, std::int64_t dst_dev) {
  auto at = static_cast<std::int64_t>(t.device_vertex(src_dev));
  for (const auto id : r) {
    if (t.link(id).src != at) return false;
    at = t.link(id).dst;
  }
  return at == static_cast<std::int64_t>(t.device_vertex(dst_dev));
}

double route_latency(const Topology& t, const Route& r) {
  double s = 0;
  for (const auto id : r) s += t.link(id).latency_s;
  return s;
}

// All-pairs least latency by Floyd-Warshall, the brute-force check of route().
std::vector<std::vector<double>> all_pairs_latency(const Topology& t) {
  const auto n = static_cast<std::size_t>(t.vertex_count());
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> d(n, std::vector<double>(n, inf));
  for (std::size_t i = 0; i < n; ++i) d[i][i] = 0;
  for (const auto& l : t.links()) {
    auto& x = d[static_cast<std::size_t>(l.src)][static_cast<std::size_t>(l.dst)];
    x = std::min(x, l.latency_s);
  }
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) d[i][j] = std::min(d[i][j], d[i][k] + d[k][j]);
  return d;
}

void require_topology_error(const std::string& spec) {
  INFO("spec: " << spec);
  try {
    (void)Topology::parse(spec, kFabric);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "topology");
    CHECK_FALSE(e.message().empty());
  }
}

}  // namespace

TEST_CASE("node(G): G GPUs around one NVSwitch", "[sim][topology]") {
  const auto t = Topology::node(8, kNvlink);
  CHECK(t.spec() == "node:8");
  CHECK(t.device_count() == 8);
  CHECK(t.vertex_count() == 9);
  CHECK(t.link_count() == 16);
  CHECK(static_cast<std::int64_t>(boost::num_edges(t.graph())) == t.link_count());
  const auto r = t.route(0, 5);
  REQUIRE(r.size() == 2);
  CHECK(is_path(t, r, 0, 5));
  CHECK(t.graph()[static_cast<ringsim::sim::Vertex>(t.link(r[0]).dst)].kind == VertexKind::Switch);
  CHECK(t.route(3, 3).empty());
  CHECK_THROWS_AS(Topology::node(9, kNvlink), InputError);
  CHECK_THROWS_AS(Topology::node(0, kNvlink), InputError);
}

TEST_CASE("Boost edges carry the link ids and parameters", "[sim][topology]") {
  const auto t = Topology::nodes(2, 3, kNvlink, kNic);
  const auto& g = t.graph();
  for (const auto e : boost::make_iterator_range(boost::edges(g))) {
    const auto& info = g[e];
    const auto& l = t.link(info.id);
    CHECK(l.src == static_cast<std::int64_t>(boost::source(e, g)));
    CHECK(l.dst == static_cast<std::int64_t>(boost::target(e, g)));
    CHECK(l.bandwidth_bytes_per_s == info.bandwidth_bytes_per_s);
    CHECK(l.kind == info.kind);
  }
  for (std::int64_t d = 0; d < t.device_count(); ++d) {
    const auto& v = g[t.device_vertex(d)];
    CHECK(v.kind == VertexKind::Device);
    CHECK(v.device == d);
    CHECK(v.node == d / 3);
  }
}

TEST_CASE("nodes(N, G): NVLink inside a node, one NIC per GPU between nodes", "[sim][topology]") {
  const auto t = Topology::nodes(2, 4, kNvlink, kNic);
  CHECK(t.spec() == "nodes:2x4");
  CHECK(t.device_count() == 8);
  CHECK(t.vertex_count() == 1 + 2 + 8);
  CHECK(t.link_count() == 8 * 2 * 2);
  CHECK(t.devices_per_node() == 4);
  const auto inside = t.route(1, 2);
  REQUIRE(inside.size() == 2);
  CHECK(is_path(t, inside, 1, 2));
  for (const auto id : inside) CHECK(t.link(id).kind == LinkKind::NvLink);
  const auto across = t.route(1, 6);
  REQUIRE(across.size() == 2);
  CHECK(is_path(t, across, 1, 6));
  for (const auto id : across) CHECK(t.link(id).kind == LinkKind::Nic);
  // Two transfers leaving GPU 1 for the other node share its one NIC link.
  CHECK(t.route(1, 6).front() == t.route(1, 7).front());
  CHECK(t.route(1, 6).back() != t.route(1, 7).back());
}

TEST_CASE("torus: wrap-around links in every dimension", "[sim][topology]") {
  const std::array<std::int64_t, 2> dims{4, 4};
  const auto t = Topology::torus(dims, kIci);
  CHECK(t.spec() == "torus:4x4");
  CHECK(t.device_count() == 16);
  CHECK(t.vertex_count() == 16);
  CHECK(t.link_count() == 16 * 2 * 2);
  for (std::int64_t d = 0; d < 16; ++d) CHECK(boost::out_degree(t.device_vertex(d), t.graph()) == 4);
  CHECK(t.route(0, 3).size() == 1);   // (0,0) -> (0,3): wrap-around
  CHECK(t.route(0, 12).size() == 1);  // (0,0) -> (3,0)
  CHECK(t.route(0, 10).size() == 4);  // (0,0) -> (2,2)
  CHECK(t.graph()[t.device_vertex(6)].name == "tpu(1,2)");

  const std::array<std::int64_t, 3> cube{2, 3, 1};
  const auto c = Topology::torus(cube, kIci);
  CHECK(c.spec() == "torus:2x3x1");
  // Size 2: one link pair; size 3: a ring of 3 pairs; size 1: none. 3 + 2 * 3 pairs.
  CHECK(c.link_count() == 2 * (3 + 2 * 3));
  const std::array<std::int64_t, 1> line{4};
  CHECK_THROWS_AS(Topology::torus(line, kIci), InputError);
}

TEST_CASE("Routes are shortest by latency and deterministic", "[sim][topology]") {
  const std::array<std::int64_t, 2> dims{3, 5};
  for (const auto& t : {Topology::torus(dims, kIci), Topology::nodes(3, 3, kNvlink, kNic), Topology::node(5, kNvlink)}) {
    const auto best = all_pairs_latency(t);
    Topology::RouteFinder finder(t);
    for (std::int64_t s = 0; s < t.device_count(); ++s) {
      for (std::int64_t d = 0; d < t.device_count(); ++d) {
        const auto r = t.route(s, d);
        REQUIRE(is_path(t, r, s, d));
        const auto want = best[t.device_vertex(s)][t.device_vertex(d)];
        REQUIRE(route_latency(t, r) == Approx(want).epsilon(1e-12));
        REQUIRE(finder.route(s, d) == r);
      }
    }
  }
}

TEST_CASE("Spec parser accepts the four forms", "[sim][topology]") {
  CHECK(Topology::parse("node:8", kFabric).device_count() == 8);
  CHECK(Topology::parse(" nodes:4x8 ", kFabric).device_count() == 32);
  CHECK(Topology::parse("torus:4x8", kFabric).device_count() == 32);
  CHECK(Topology::parse("torus:4x4x4", kFabric).device_count() == 64);
  CHECK(Topology::parse("nodes:2x8", kFabric).link(0).bandwidth_bytes_per_s == kNvlink.bandwidth_bytes_per_s);
  CHECK(Topology::parse("torus:2x2", kFabric).link(0).latency_s == kIci.latency_s);
}

TEST_CASE("Bad specs throw InputError naming the topology field", "[sim][topology]") {
  for (const char* spec : {"", "node", "node:", "node:0", "node:9", "node:-1", "node:8x1", "node:8 junk", "nodes:2",
                           "nodes:0x8", "nodes:2x9", "nodes:2x", "nodes:x8", "nodes:2x8x1", "torus:4", "torus:4x0",
                           "torus:2x2x2x2", "torus:ax4", "mesh:4", "torus:4096x4096", "NODE:8"})
    require_topology_error(spec);
}

TEST_CASE("Zero, negative or non-finite link parameters are refused", "[sim][topology]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const LinkParams bad : {LinkParams{0, 1e-6}, LinkParams{-1e9, 1e-6}, LinkParams{nan, 1e-6},
                               LinkParams{std::numeric_limits<double>::infinity(), 0}, LinkParams{1e9, -1e-6},
                               LinkParams{1e9, nan}}) {
    CHECK_THROWS_AS(Topology::node(4, bad), InputError);
    CHECK_THROWS_AS(Topology::nodes(2, 4, kNvlink, bad), InputError);
    CHECK_THROWS_AS(Topology::parse("torus:2x2", Fabric{kNvlink, kNic, bad}), InputError);
  }
  CHECK_NOTHROW(Topology::node(4, LinkParams{1e9, 0}));
}

TEST_CASE("Ring embedding: tensor-parallel groups inside a node by default", "[sim][topology]") {
  const auto t = Topology::nodes(4, 8, kNvlink, kNic);
  const RingEmbedding mesh(t, 8, 4);
  CHECK(mesh.mp() == 8);
  CHECK(mesh.sp() == 4);
  for (std::int64_t k = 0; k < 8; ++k) {
    for (std::int64_t j = 0; j < 4; ++j) {
      CHECK(mesh.device(k, j) == j * 8 + k);
      const auto& r = mesh.hop_route(k, j);
      CHECK(is_path(t, r, mesh.device(k, j), mesh.device(k, (j + 1) % 4)));
      for (const auto id : r) CHECK(t.link(id).kind == LinkKind::Nic);
      CHECK(mesh.hop_latency_s(k, j) == Approx(kNic.latency_s));  // the hop's, split over its two links
      CHECK(mesh.hop_bottleneck_bytes_per_s(k, j) == kNic.bandwidth_bytes_per_s);
    }
  }
  const RingEmbedding rings(t, 4, 8, MeshOrder::SpInner);
  for (std::int64_t k = 0; k < 4; ++k) {
    for (std::int64_t j = 0; j < 8; ++j) {
      CHECK(rings.device(k, j) == k * 8 + j);
      for (const auto id : rings.hop_route(k, j)) CHECK(t.link(id).kind == LinkKind::NvLink);
    }
  }
  CHECK_THROWS_AS(mesh.device(8, 0), std::out_of_range);
  CHECK_THROWS_AS(mesh.hop_route(0, 4), std::out_of_range);
}

TEST_CASE("Ring embedding on a torus and its limits", "[sim][topology]") {
  const std::array<std::int64_t, 2> dims{4, 4};
  const auto t = Topology::torus(dims, kIci);
  const RingEmbedding ring(t, 1, 16);
  std::vector<int> uses(static_cast<std::size_t>(t.link_count()), 0);
  for (std::int64_t j = 0; j < 16; ++j) {
    const auto& r = ring.hop_route(0, j);
    CHECK(is_path(t, r, ring.device(0, j), ring.device(0, (j + 1) % 16)));
    // The snake order makes every hop, the closing one included, a single link.
    CHECK(r.size() == 1);
    for (const auto id : r) ++uses[static_cast<std::size_t>(id)];
  }
  CHECK(*std::max_element(uses.begin(), uses.end()) == 1);
  // Snake: row 0 left to right, row 1 right to left, ...
  CHECK(ring.device(0, 3) == 3);
  CHECK(ring.device(0, 4) == 7);
  CHECK(ring.device(0, 7) == 4);
  CHECK(ring.device(0, 8) == 8);

  // Odd first dimension: all hops one link but the closing one, which takes two.
  const std::array<std::int64_t, 3> odd{3, 2, 2};
  const auto t3 = Topology::torus(odd, kIci);
  const RingEmbedding ring3(t3, 1, 12);
  for (std::int64_t j = 0; j < 12; ++j) CHECK(ring3.hop_route(0, j).size() == (j == 11 ? 2U : 1U));
  std::vector<std::int64_t> seen(t3.device_order().begin(), t3.device_order().end());
  std::sort(seen.begin(), seen.end());
  for (std::int64_t d = 0; d < 12; ++d) CHECK(seen[static_cast<std::size_t>(d)] == d);
  const RingEmbedding single(t, 16, 1);
  CHECK(single.hop_route(3, 0).empty());
  CHECK(single.hop_bottleneck_bytes_per_s(3, 0) == std::numeric_limits<double>::infinity());
  CHECK_THROWS_AS(RingEmbedding(t, 2, 9), InputError);   // 18 > 16 devices
  CHECK_THROWS_AS(RingEmbedding(t, 1, 17), InputError);
  CHECK_THROWS_AS(RingEmbedding(t, 0, 4), InputError);
  CHECK_THROWS_AS(RingEmbedding(t, 4, 0), InputError);
  CHECK_THROWS_AS(RingEmbedding(t, std::int64_t{1} << 40, std::int64_t{1} << 40), InputError);
  try {
    (void)RingEmbedding(t, 2, 9);
  } catch (const InputError& e) {
    CHECK(e.field() == "topology");
    CHECK_THAT(e.message(), Catch::Contains("16"));
  }
}
