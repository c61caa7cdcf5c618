// The transport core (models/transport/): max-min fair shares against their optimality
// conditions and a brute-force fluid, routes over PCIe trees, NVSwitch nodes and NIC rails, and
// NCCL's collectives against their closed forms on machines where those are known.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "models/catalog/catalog.hpp"
#include "models/catalog/resolve.hpp"
#include "models/cost/cost.hpp"
#include "models/transport/scenario_transport.hpp"
#include "models/transport/collectives.hpp"
#include "models/transport/fabric.hpp"
#include "models/transport/fair_share.hpp"

using namespace ringsim::models;
using namespace ringsim::models::transport;

namespace {

// 8 GPUs of a PCIe server: two switches per socket, two sockets, no peer access (GeForce).
MachineSpec pcie_server(bool peer_access) {
  MachineSpec m = MachineSpec::flat(8, 1e9, 1e-6, 25e9, 5e-6);
  m.fabric = MachineSpec::Fabric::Pcie;
  m.described = true;
  m.peer_access = peer_access;
  m.gpu_link = {24e9, 30e9};
  for (int s = 0; s < 4; ++s) {
    MachineSpec::Switch sw;
    sw.name = "sw" + std::to_string(s);
    sw.socket = s / 2;
    sw.uplink = {24e9, 30e9};
    m.switches.push_back(sw);
  }
  m.sockets = 2;
  m.socket_link = {40e9, 0};
  m.root_complex_bytes_per_s = 60e9;
  m.p2p_latency_s = 1e-6;
  m.staged_latency_s = 12e-6;
  for (int g = 0; g < 8; ++g) {
    m.gpu_switch[static_cast<std::size_t>(g)] = g / 2;
    m.gpu_socket[static_cast<std::size_t>(g)] = g / 4;
  }
  return m;
}

double rate_of(const Fabric& f, std::vector<Transfer> ts, std::size_t i, Mover mover = Mover::Nccl) {
  std::vector<std::vector<ResourceUse>> flows;
  for (const auto& t : ts) flows.push_back(f.route(t.src, t.dst, mover).uses);
  return max_min_rates(f.capacities(), flows).rate_bytes_per_s.at(i);
}

}  // namespace

TEST_CASE("max-min rates meet their optimality conditions on random instances", "[transport]") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const int nr = 1 + static_cast<int>(rng() % 6), nf = 1 + static_cast<int>(rng() % 8);
    std::vector<double> cap;
    for (int r = 0; r < nr; ++r) cap.push_back(1.0 + static_cast<double>(rng() % 100));
    std::vector<std::vector<ResourceUse>> flows(static_cast<std::size_t>(nf));
    for (auto& f : flows) {
      for (int r = 0; r < nr; ++r)
        if (rng() % 2) f.push_back({r, 1.0 + static_cast<double>(rng() % 2)});
      if (f.empty()) f.push_back({static_cast<std::int32_t>(rng() % static_cast<unsigned>(nr)), 1.0});
    }
    const auto out = max_min_rates(cap, flows);
    std::vector<double> used(static_cast<std::size_t>(nr), 0.0);
    for (std::size_t f = 0; f < flows.size(); ++f)
      for (const auto& u : flows[f]) used[static_cast<std::size_t>(u.resource)] += u.weight * out.rate_bytes_per_s[f];
    for (int r = 0; r < nr; ++r) REQUIRE(used[static_cast<std::size_t>(r)] <= cap[static_cast<std::size_t>(r)] * (1 + 1e-9));
    // Every flow's bottleneck is full, and no flow on it is faster (max-min optimality).
    for (std::size_t f = 0; f < flows.size(); ++f) {
      const auto b = static_cast<std::size_t>(out.bottleneck[f]);
      REQUIRE(used[b] == Approx(cap[b]).epsilon(1e-9));
      for (std::size_t o = 0; o < flows.size(); ++o)
        for (const auto& u : flows[o])
          if (static_cast<std::size_t>(u.resource) == b) REQUIRE(out.rate_bytes_per_s[o] <= out.rate_bytes_per_s[f] * (1 + 1e-9));
    }
  }
}

TEST_CASE("the fluid finish equals a brute-force time-stepped fluid", "[transport]") {
  const std::vector<double> cap = {10, 6, 8};
  const std::vector<std::vector<ResourceUse>> flows = {{{0, 1}}, {{0, 1}, {1, 1}}, {{1, 2}, {2, 1}}, {{2, 1}}};
  const std::vector<double> bytes = {30, 12, 9, 40};
  const auto fin = fluid_finish_s(cap, flows, bytes);
  // Brute force: re-share every small step among the flows still sending.
  std::vector<double> left = bytes, brute(bytes.size(), 0);
  const double dt = 1e-5;
  for (double t = 0; std::any_of(left.begin(), left.end(), [](double x) { return x > 0; }); t += dt) {
    std::vector<std::vector<ResourceUse>> live;
    std::vector<std::size_t> ids;
    for (std::size_t i = 0; i < left.size(); ++i)
      if (left[i] > 0) {
        live.push_back(flows[i]);
        ids.push_back(i);
      }
    const auto r = max_min_rates(cap, live);
    for (std::size_t k = 0; k < ids.size(); ++k) {
      left[ids[k]] -= r.rate_bytes_per_s[k] * dt;
      if (left[ids[k]] <= 0) brute[ids[k]] = t + dt;
    }
  }
  for (std::size_t i = 0; i < fin.size(); ++i) REQUIRE(fin[i] == Approx(brute[i]).margin(1e-4));
}

TEST_CASE("a flat NVSwitch node gives every ring hop the port's rate, as the hop model did", "[transport]") {
  const Fabric f(MachineSpec::flat(8, 300e9, 2e-6, 25e9, 5e-6), 2);
  std::vector<Transfer> ring;
  for (int i = 0; i < 16; ++i) ring.push_back({i, (i + 1) % 16, 1e6});
  const auto h = hop_rates(f, ring);
  CHECK(h.intra_bytes_per_s == Approx(300e9));
  CHECK(h.inter_bytes_per_s == Approx(25e9));
  CHECK(h.intra_latency_s == Approx(2e-6));
  CHECK(h.inter_latency_s == Approx(5e-6));
  // Two flows into one GPU share its port.
  CHECK(rate_of(f, {{0, 2, 1}, {1, 2, 1}}, 0) == Approx(150e9));
}

TEST_CASE("host-staged copies load the root complex twice on one socket and the uplink both ways", "[transport]") {
  const Fabric f(pcie_server(false), 1);
  const auto same_switch = f.route(0, 1);
  CHECK(same_switch.kind == PathKind::Staged);
  CHECK(same_switch.latency_s == Approx(12e-6));
  double rc = 0, duplex = 0;
  for (const auto& u : same_switch.uses) {
    const auto name = f.resource_name(u.resource);
    if (name == "socket0 root complex") rc = u.weight;
    if (name == "switch sw0 uplink (both directions)") duplex = u.weight;
  }
  CHECK(rc == 2);
  CHECK(duplex == 2);
  // Alone: the uplink's duplex capacity (30) carried twice bounds it at 15; across sockets the
  // copy crosses each uplink once and each root complex once: the slot's 24.
  CHECK(rate_of(f, {{0, 1, 1}}, 0) == Approx(15e9));
  CHECK(rate_of(f, {{0, 4, 1}}, 0) == Approx(24e9));
  // Bidirectional across sockets: each slot link carries one flow each way, duplex 30 shared.
  CHECK(rate_of(f, {{0, 4, 1}, {4, 0, 1}}, 0) == Approx(15e9));
}

TEST_CASE("peer-to-peer turns at the lowest common switch and crosses the socket link between sockets", "[transport]") {
  const Fabric f(pcie_server(true), 1);
  const auto r = f.route(0, 1);
  CHECK(r.kind == PathKind::PcieP2p);
  for (const auto& u : r.uses) CHECK(f.resource_kind(u.resource) == ResourceKind::GpuLink);
  const auto x = f.route(0, 6, Mover::CudaCopy);
  CHECK(x.kind == PathKind::PcieP2p);
  bool socket = false;
  for (const auto& u : x.uses) socket = socket || f.resource_kind(u.resource) == ResourceKind::SocketLink;
  CHECK(socket);
  // Four flows from socket 0 to socket 1 share the 40 GB/s socket link.
  CHECK(rate_of(f, {{0, 4, 1}, {1, 5, 1}, {2, 6, 1}, {3, 7, 1}}, 0, Mover::CudaCopy) == Approx(10e9));
}

TEST_CASE("NCCL stages copies through host memory between GPUs without a common switch", "[transport]") {
  MachineSpec m = pcie_server(true);
  const Fabric f(m, 1);
  CHECK(f.route(0, 1).kind == PathKind::PcieP2p);   // under sw0
  CHECK(f.route(0, 2).kind == PathKind::Staged);    // sw0 -> sw1 through socket 0's root complex
  CHECK(f.route(0, 2, Mover::CudaCopy).kind == PathKind::PcieP2p);
  m.nccl_p2p_through_cpu = true;  // NCCL_P2P_LEVEL=SYS
  CHECK(Fabric(m, 1).route(0, 2).kind == PathKind::PcieP2p);
}

TEST_CASE("NCCL's ring collectives spread inter-node traffic over every NIC of a node", "[transport]") {
  // 2 nodes x 8 GPUs, NVLink ports of 400 GB/s, 8 NICs of 50 GB/s: the ring's bus bandwidth is the
  // node's NICs together (400), not one NIC.
  const Fabric f(MachineSpec::flat(8, 400e9, 2e-6, 50e9, 5e-6), 2);
  std::vector<std::vector<std::int64_t>> g(1);
  for (int d = 0; d < 16; ++d) g[0].push_back(d);
  const double bytes = 8e9;
  const auto ag = collective(f, Collective::AllGather, g, bytes);
  CHECK(ag.algorithm == "ring");
  CHECK(ag.protocol == "Simple");
  CHECK(ag.bus_bytes_per_s == Approx(400e9));
  CHECK(ag.seconds == Approx(15.0 / 16.0 * bytes / 400e9 + ag.latency_s));
  // With one NIC per node the ring's inter-node hop is one NIC.
  MachineSpec one = MachineSpec::flat(8, 400e9, 2e-6, 50e9, 5e-6);
  one.nics = 1;
  one.nic_of_gpu.assign(8, 0);
  const Fabric f1(one, 2);
  CHECK(collective(f1, Collective::AllGather, g, bytes).bus_bytes_per_s == Approx(50e9));
  // Tree all-reduce over two nodes: the NICs carry the buffer once each way, the NVLink chain
  // twice; with ports well above the NICs the tree beats the ring's 2(n-1)/n of the buffer.
  const Fabric fast(MachineSpec::flat(8, 900e9, 2e-6, 50e9, 5e-6), 2);
  const auto ar = collective(fast, Collective::AllReduce, g, bytes);
  CHECK(ar.algorithm == "tree");
  // Simple (0.92 of it) or LL128 (120/128), whichever NCCL's model makes faster.
  CHECK(ar.seconds == Approx(ar.latency_s + bytes / 400e9 / (ar.protocol == "LL128" ? 120.0 / 128.0 : 0.92)));
  // With ports at the NICs' sum the chain's two passes make the ring faster.
  CHECK(collective(f, Collective::AllReduce, g, bytes).algorithm == "ring");
}

TEST_CASE("an all-to-all across nodes runs at one NIC per GPU", "[transport]") {
  const Fabric f(MachineSpec::flat(8, 400e9, 2e-6, 50e9, 5e-6), 2);
  std::vector<std::vector<std::int64_t>> g(1);
  for (int d = 0; d < 16; ++d) g[0].push_back(d);
  const double bytes = 1.6e9;
  const auto a2a = collective(f, Collective::AllToAll, g, bytes);
  // Each GPU sends 8 of its 16 parts across, through its own NIC.
  CHECK(a2a.seconds == Approx(8 * bytes / 16 / 50e9 + 5e-6).epsilon(1e-6));
}

TEST_CASE("an all-to-all over many nodes is priced on two of them and equals every transfer's fluid", "[transport]") {
  // The oracle: every pair's transfer of the whole pattern through the fluid (concurrent), against
  // the plan, which prices groups spanning three nodes or more on two nodes' worth of transfers.
  MachineSpec one_nic = MachineSpec::flat(8, 400e9, 2e-6, 50e9, 5e-6);
  one_nic.nics = 1;
  one_nic.nic_of_gpu.assign(8, 0);
  const std::vector<MachineSpec> machines = {MachineSpec::flat(8, 400e9, 2e-6, 50e9, 5e-6), one_nic, pcie_server(false),
                                             pcie_server(true)};
  for (std::size_t mi = 0; mi < machines.size(); ++mi)
    for (const std::int64_t nodes : {3, 4, 5})
      for (const std::int64_t mp : {1, 2, 4}) {
        INFO("machine " << mi << ", " << nodes << " nodes, " << mp << " groups");
        const Fabric f(machines[mi], nodes);
        std::vector<std::vector<std::int64_t>> groups(static_cast<std::size_t>(mp));
        for (std::int64_t d = 0; d < f.devices(); ++d) groups[static_cast<std::size_t>(d % mp)].push_back(d);
        const double bytes = 3.2e8;
        const double n = static_cast<double>(groups.front().size());
        std::vector<Transfer> all;
        for (const auto& g : groups)
          for (const auto a : g)
            for (const auto b : g)
              if (a != b) all.push_back({a, b, bytes / n});
        const auto whole = concurrent(f, all);
        const auto plan = collective(f, Collective::AllToAll, groups, bytes);
        CHECK(plan.seconds == Approx(whole.seconds).epsilon(1e-9));
        CHECK(plan.latency_s == Approx(whole.latency_s));
        CHECK(plan.sharing == whole.sharing);
        CHECK(f.resource_kind(plan.bottleneck) == f.resource_kind(whole.bottleneck));
      }
  // Groups that are not alike on every node (here: one group's GPUs differ by node) are priced
  // transfer by transfer, and still equal the fluid.
  const Fabric f(MachineSpec::flat(8, 400e9, 2e-6, 50e9, 5e-6), 3);
  const std::vector<std::vector<std::int64_t>> odd = {{0, 9, 17}, {1, 8, 16}};
  std::vector<Transfer> all;
  for (const auto& g : odd)
    for (const auto a : g)
      for (const auto b : g)
        if (a != b) all.push_back({a, b, 3e8 / 3});
  CHECK(collective(f, Collective::AllToAll, odd, 3e8).seconds == Approx(concurrent(f, all).seconds).epsilon(1e-9));
}

TEST_CASE("small collectives pay NCCL's latency and pick LL", "[transport]") {
  const Fabric f(pcie_server(true), 1);
  std::vector<std::vector<std::int64_t>> g = {{0, 1, 2, 3}};
  const auto ar = collective(f, Collective::AllReduce, g, 4096);
  CHECK(ar.protocol == "LL");
  // baseLat ring LL 6.6 us + 6 steps x PCI hwLat ring LL 1.0 us.
  CHECK(ar.latency_s == Approx(12.6e-6));
}

TEST_CASE("transport: scenarios on one machine share its memo, each ring keyed by its own transfers", "[transport]") {
  // A ring over all 8 cards of a PCIe switch tree and USP's rings of 4 (every other card): one
  // fabric, different transfers. Their scenarios share one transport (plans priced once for a
  // whole sweep) and each gets the rates of its own transfers, whichever was resolved first.
  const Catalog catalog;
  const auto make = [&](const char* cp) {
    ScenarioSpec spec;
    spec.hardware = "rtx-pro-6000";
    spec.model = "llama2-7b";
    spec.sp = 8;
    spec.n_seq = 65536;
    spec.cp = Strategy::parse(cp);
    spec.layout = LayoutSpec::parse("zigzag");
    spec.impl = catalog.choose_implementation(spec, catalog.hardware(spec.hardware), {spec.layout});
    return resolve(spec, catalog);
  };
  const auto ring = make("ring");
  const auto usp = make("usp:2x4");
  REQUIRE(ring.transport);
  CHECK(ring.transport.get() == usp.transport.get());
  for (const auto* s : {&ring, &usp}) {
    const auto own = hop_rates(s->transport->fabric(), s->ring_transfers);
    REQUIRE(own.intra_bytes_per_s > 0);
    CHECK(s->cost->ring_transfer_s(1e8, false) == Approx(own.intra_latency_s + 1e8 / own.intra_bytes_per_s).epsilon(1e-12));
  }
  // The two rings' transfers load the machine differently (else this test could not tell a
  // shared key apart).
  CHECK(hop_rates(ring.transport->fabric(), ring.ring_transfers).intra_bytes_per_s !=
        hop_rates(usp.transport->fabric(), usp.ring_transfers).intra_bytes_per_s);
}

TEST_CASE("a machine cut to smaller nodes keeps the NICs beside its GPUs and an NVSwitch domain grows", "[transport]") {
  // 8 GPUs with one NIC each: a node of one GPU has one NIC (NCCL takes the nearest), not eight.
  const MachineSpec dgx = MachineSpec::flat(8, 400e9, 2e-6, 50e9, 5e-6);
  const auto one = dgx.with_gpus_per_node(1);
  CHECK(one.gpus == 1);
  CHECK(one.nics == 1);
  CHECK(one.nic_of_gpu == std::vector<std::int32_t>{0});
  // Eight single-GPU nodes: the all-gather's ring crosses a node at every hop, one NIC each.
  std::vector<std::vector<std::int64_t>> g(1);
  for (int d = 0; d < 8; ++d) g[0].push_back(d);
  CHECK(collective(Fabric(one, 8), Collective::AllGather, g, 8e9).bus_bytes_per_s == Approx(50e9));
  CHECK(collective(Fabric(dgx, 1), Collective::AllGather, g, 8e9).bus_bytes_per_s == Approx(400e9));
  // Two NICs shared by four GPUs each (NIC k beside GPUs 4k .. 4k + 3): half the node keeps one.
  MachineSpec two = dgx;
  two.nics = 2;
  for (int i = 0; i < 8; ++i) two.nic_of_gpu[static_cast<std::size_t>(i)] = i / 4;
  CHECK(two.with_gpus_per_node(4).nics == 1);
  CHECK(two.with_gpus_per_node(6).nics == 2);
  // An NVSwitch domain of 32 (an NVL32 rack as one node): the same NICs per GPU.
  const auto rack = dgx.with_gpus_per_node(32);
  CHECK(rack.gpus == 32);
  CHECK(rack.nics == 32);
  CHECK(rack.nic_of_gpu.size() == 32);
  CHECK(two.with_gpus_per_node(32).nics == 8);
  // A PCIe tree cannot grow; cut, it keeps its first GPUs' switches, sockets and bridges.
  auto pcie = pcie_server(true);
  pcie.bridge_pairs = {{0, 1}, {4, 5}};
  CHECK_FALSE(pcie.supports_gpus_per_node(16));
  CHECK_THROWS_AS(pcie.with_gpus_per_node(16), std::invalid_argument);
  const auto half = pcie.with_gpus_per_node(4);
  CHECK(half.gpu_switch == std::vector<std::int32_t>{0, 0, 1, 1});
  CHECK(half.gpu_socket == std::vector<std::int32_t>{0, 0, 0, 0});
  CHECK(half.bridge_pairs == std::vector<std::pair<std::int32_t, std::int32_t>>{{0, 1}});
}

TEST_CASE("the transport's signature tells apart machines of the same link figures", "[transport]") {
  // The process-wide shared transport is keyed by it: machines that differ only in their tree,
  // their GPU count or their NICs must not share one.
  const auto base = pcie_server(false);
  const auto sig = transport_signature_of(base, 1.0);
  CHECK(sig == transport_signature_of(pcie_server(false), 1.0));
  CHECK(sig != transport_signature_of(pcie_server(true), 1.0));
  CHECK(sig != transport_signature_of(base, 0.9));
  CHECK(sig != transport_signature_of(base.with_gpus_per_node(4), 1.0));
  auto other = base;
  other.switches[1].uplink.bytes_per_s *= 2;
  CHECK(sig != transport_signature_of(other, 1.0));
  other = base;
  other.gpu_switch[7] = 2;
  CHECK(sig != transport_signature_of(other, 1.0));
  other = base;
  other.nics = 2;
  other.nic_of_gpu = {0, 0, 0, 0, 1, 1, 1, 1};
  CHECK(sig != transport_signature_of(other, 1.0));
  other = base;
  other.bridge_pairs = {{2, 3}};
  CHECK(sig != transport_signature_of(other, 1.0));
  // Two scenarios on one hardware placed in nodes of 8 and of 1 get their own transports.
  const Catalog catalog;
  ScenarioSpec spec;
  spec.hardware = "h100-sxm";
  spec.model = "llama3-8b";
  spec.mp = 8;
  spec.sp = 1;
  spec.n_seq = 32768;
  spec.layout = LayoutSpec::parse("zigzag");
  const auto a = resolve(spec, catalog);
  auto b = resolve(spec, catalog);
  b.hardware.devices_per_node = 1;
  b.rebuild_cost();
  REQUIRE(a.transport);
  REQUIRE(b.transport);
  CHECK(a.transport.get() != b.transport.get());
  CHECK(a.transport->fabric().machine().gpus == 8);
  CHECK(b.transport->fabric().machine().gpus == 1);
}

TEST_CASE("the catalog's RTX 4090 box with tinygrad's P2P driver copies card to card at its fitted rate", "[transport]") {
  // rtx-4090-p2p: peer access, NCCL told to use it through the CPU, both directions of a pair
  // together at the tinybox's fitted 50.7 GB/s; rtx-4090 stages every copy through host memory.
  const Catalog catalog;
  const auto p2p = catalog.hardware("rtx-4090-p2p").machine;
  const Fabric f(p2p, 1);
  CHECK(p2p.gpus == 6);
  for (const auto mover : {Mover::Nccl, Mover::CudaCopy}) CHECK(f.route(0, 5, mover).kind == PathKind::PcieP2p);
  CHECK(rate_of(f, {{0, 1, 1}}, 0) == Approx(p2p.gpu_link.bytes_per_s));
  CHECK(rate_of(f, {{0, 1, 1}, {1, 0, 1}}, 0) == Approx(50.7e9 / 2));
  // A ring of six, each card sending and receiving: every hop at half the fitted duplex.
  std::vector<Transfer> ring;
  for (std::int64_t g = 0; g < 6; ++g) ring.push_back({g, (g + 1) % 6, 1});
  for (std::size_t i = 0; i < ring.size(); ++i) CHECK(rate_of(f, ring, i) == Approx(50.7e9 / 2));
  const Fabric staged(catalog.hardware("rtx-4090").machine, 1);
  CHECK(staged.route(0, 5).kind == PathKind::Staged);
  CHECK(staged.route(0, 5, Mover::CudaCopy).kind == PathKind::Staged);
}
