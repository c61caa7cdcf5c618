// The simulator on every context-parallel strategy: lock-step simulation against the analytic
// model, collectives against closed forms on one node, nodes with a NIC per GPU and tori,
// bytes per link against the program's traffic, and the message protocols against the
// closed forms of a transfer-bound ring.
#include <cmath>
#include <map>
#include <random>

#include <catch2/catch.hpp>

#include "models/catalog/resolve.hpp"
#include "models/analytic/analytic.hpp"
#include "models/program/collective_cost.hpp"
#include "models/io/error.hpp"
#include "models/program/program.hpp"
#include "models/transport/collectives.hpp"
#include "sim/collective.hpp"
#include "sim/step.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim;

namespace {

models::ResolvedScenario resolve(const std::string& model, std::int64_t mp, std::int64_t sp, std::int64_t n_seq,
                                 const std::string& layout, const std::string& cp, const std::string& impl,
                                 const std::string& docs = "") {
  models::ScenarioSpec s;
  s.hardware = "h100-sxm";
  s.model = model;
  s.mp = mp;
  s.sp = sp;
  s.n_seq = n_seq;
  s.layout = ringsim::models::LayoutSpec::parse(layout);
  s.cp = ringsim::models::Strategy::parse(cp);
  s.impl = impl;
  if (!docs.empty()) s.docs = ringsim::models::DocumentsSpec::parse(docs);
  s.tile = models::TileShape{16, 16};
  return models::resolve(s, models::Catalog());
}

void make_ideal(models::ResolvedScenario& s) {
  s.hardware.intra_link_bandwidth_bytes_per_s = 1e30;
  s.hardware.inter_node_bandwidth_bytes_per_s = 1e30;
  s.profile.link_latency_s = 0.0;
  s.profile.p2p_bandwidth_bytes_per_s = 0.0;  // no library limit on a ring hop either
  s.profile.p2p_latency_s = 0.0;
  s.profile.overlap = 1.0;
  test::rebuild_cost(s);
}

sim::StepOptions femto(sim::Sync sync) {
  sim::StepOptions o;
  o.sync = sync;
  o.ticks_per_s = sim::kFemtosecondsPerSecond;
  return o;
}

struct Case {
  std::string cp, impl, layout;
  bool docs = false;
};

}  // namespace

TEST_CASE("lock-step simulation equals the analytic model with ideal links, every implementation and strategy",
          "[step][strategy][impl]") {
  // Every (implementation, strategy) pair the catalog offers, on the layouts and masks it offers:
  // the program's stages and every ring round's compute (tile loops, a library's step calls with
  // their merges and host floors, varlen calls over packed documents) reach both solvers through
  // the same seam.
  const models::Catalog cat;
  const std::map<std::string, std::string> cp_of = {{"ring", "ring"}, {"allgather", "allgather"}, {"ulysses", "ulysses"},
                                                    {"usp", "usp:2x2"}, {"double-ring", "double-ring:2"}};
  const std::vector<std::string> layouts = {"contiguous", "striped", "zigzag", "doc-zigzag", "doc-zigzag-docmajor", "ptrr:8"};
  std::mt19937_64 rng(7);
  std::map<std::string, int> checked;  // per "impl cp"
  for (const auto& name : cat.implementation_names()) {
    const auto im = cat.implementation(name);
    if (!im.runs_on("gpu") || !im.runs_phase(models::RunPhase::Train)) continue;  // training steps only
    for (const auto& family : im.strategies)
      for (const auto& layout : layouts)
        for (const bool docs : {false, true}) {
          if (!im.offers_layout(models::LayoutSpec::parse(layout)) ||
              (docs && !im.offers_mask(models::MaskSpec::packed_documents())))
            continue;
          const bool doc_layout = layout.starts_with("doc-") || layout.starts_with("ptrr");
          if (doc_layout && !docs) continue;
          const std::string cp = cp_of.at(family);
          const std::int64_t mp = 1 + static_cast<std::int64_t>(rng() % 2);
          const std::int64_t sp = 4;
          const std::int64_t n = sp * 256 * (1 + static_cast<std::int64_t>(rng() % 2));
          const std::string d = docs ? "lognormal:384:1.3:" + std::to_string(rng() % 5) + ":8" : "";
          models::ResolvedScenario s;
          try {
            s = resolve("attn:32:8:128", mp, sp, n, layout, cp, name, d);
          } catch (const models::InputError&) {
            continue;  // a layout this implementation runs only on another strategy or mask
          }
          make_ideal(s);
          const double analytic = models::predict(s).step_s;
          const auto barrier = sim::simulate_step(s, femto(sim::Sync::Barrier));
          const auto async = sim::simulate_step(s, femto(sim::Sync::Async));
          INFO(cp << " " << name << " " << layout << " docs=" << docs << " mp=" << mp << " n=" << n);
          CHECK(barrier.step_s == Approx(analytic).epsilon(1e-9));
          CHECK(async.step_s <= barrier.step_s * (1 + 1e-12));
          ++checked[name + " " + family];
        }
  }
  // Every pair ran at least once.
  for (const auto& name : cat.implementation_names()) {
    const auto im = cat.implementation(name);
    if (!im.runs_on("gpu") || !im.runs_phase(models::RunPhase::Train)) continue;  // training steps only
    for (const auto& family : im.strategies) {
      INFO(name << " " << family);
      CHECK(checked[name + " " + family] > 0);
    }
  }
}

TEST_CASE("ring collectives on one node: g - 1 steps of one hop, all-to-all shares each device's link", "[collective]") {
  const sim::LinkParams nvlink{400e9, 1e-6};
  const auto node = sim::Topology::node(8, nvlink);
  const std::int64_t bytes = 64 << 20;
  const std::vector<std::vector<std::int64_t>> one{{0, 1, 2, 3, 4, 5, 6, 7}};
  // A hop is device -> switch -> device: two links that share the hop's latency (sim/topology.hpp).
  const double hop = nvlink.latency_s + static_cast<double>(bytes) / nvlink.bandwidth_bytes_per_s;
  CHECK(sim::simulate_collective_s(node, models::CollectiveKind::AllGather, one, bytes) == Approx(7 * hop).epsilon(1e-9));
  CHECK(sim::simulate_collective_s(node, models::CollectiveKind::ReduceScatter, one, bytes) == Approx(7 * hop).epsilon(1e-9));
  // All-to-all: 7 flows out of every device's link, 7 into every device's link.
  const double a2a = nvlink.latency_s + 7.0 * static_cast<double>(bytes) / nvlink.bandwidth_bytes_per_s;
  CHECK(sim::simulate_collective_s(node, models::CollectiveKind::AllToAll, one, bytes) == Approx(a2a).epsilon(1e-9));
  // Two groups of 4 at once use disjoint links: each as fast as alone.
  const std::vector<std::vector<std::int64_t>> two{{0, 1, 2, 3}, {4, 5, 6, 7}};
  CHECK(sim::simulate_collective_s(node, models::CollectiveKind::AllGather, two, bytes) == Approx(3 * hop).epsilon(1e-9));
}

TEST_CASE("collectives over nodes with a NIC per GPU: the NIC hop sets the ring's pace", "[collective]") {
  const sim::LinkParams nvlink{400e9, 1e-6}, nic{50e9, 5e-6};
  const auto topo = sim::Topology::nodes(2, 8, nvlink, nic);
  const std::int64_t bytes = 16 << 20;
  std::vector<std::int64_t> all(16);
  for (std::int64_t i = 0; i < 16; ++i) all[static_cast<std::size_t>(i)] = i;
  const double nic_hop = nic.latency_s + static_cast<double>(bytes) / nic.bandwidth_bytes_per_s;
  CHECK(sim::simulate_collective_s(topo, models::CollectiveKind::AllGather, {all}, bytes) == Approx(15 * nic_hop).epsilon(1e-9));
  // All-to-all over 16: 7 NVLink flows and 8 NIC flows per device, on separate links.
  const double a2a = std::max(nvlink.latency_s + 7.0 * static_cast<double>(bytes) / nvlink.bandwidth_bytes_per_s,
                              nic.latency_s + 8.0 * static_cast<double>(bytes) / nic.bandwidth_bytes_per_s);
  CHECK(sim::simulate_collective_s(topo, models::CollectiveKind::AllToAll, {all}, bytes) == Approx(a2a).epsilon(1e-9));
  // Pairs across the nodes (USP's rings with U = 8): one NIC hop each, all at once.
  std::vector<std::vector<std::int64_t>> pairs;
  for (std::int64_t i = 0; i < 8; ++i) pairs.push_back({i, i + 8});
  CHECK(sim::simulate_collective_s(topo, models::CollectiveKind::AllToAll, pairs, bytes) == Approx(nic_hop).epsilon(1e-9));
}

TEST_CASE("collectives on a torus: a snake ring is one link per hop", "[collective]") {
  const sim::LinkParams link{45e9, 2e-6};
  const std::vector<std::int64_t> dims{4, 4};
  const auto topo = sim::Topology::torus(dims, link);
  std::vector<std::int64_t> snake(topo.device_order().begin(), topo.device_order().end());
  const std::int64_t bytes = 8 << 20;
  const double hop = link.latency_s + static_cast<double>(bytes) / link.bandwidth_bytes_per_s;
  CHECK(sim::simulate_collective_s(topo, models::CollectiveKind::AllGather, {snake}, bytes) == Approx(15 * hop).epsilon(1e-9));
  // Reduce-scatter along every row of the 4 x 4 torus at once: each row is a ring of
  // neighbours (with its wrap-around link), the rows' links are disjoint.
  std::vector<std::vector<std::int64_t>> rows;
  for (std::int64_t r = 0; r < 4; ++r) rows.push_back({4 * r, 4 * r + 1, 4 * r + 2, 4 * r + 3});
  CHECK(sim::simulate_collective_s(topo, models::CollectiveKind::ReduceScatter, rows, bytes) == Approx(3 * hop).epsilon(1e-9));
}

TEST_CASE("the analytic collectives equal the simulated ones on the default placements", "[collective]") {
  // Latencies negligible (the analytic model charges none here, the topology a few picoseconds per
  // route), but NVLink's below the NIC's so that routes inside a node stay on NVLink: each link to a
  // switch carries half its hop's latency, in whole picoseconds for route ties (1 and 2).
  auto s = resolve("attn:8:8:16", 1, 16, 16 * 64, "zigzag", "allgather", "te-all-gather");
  s.profile.link_latency_s = 0.0;
  test::rebuild_cost(s);
  // The closed forms (a cost model without the scenario's transport, or a placement other than
  // its own) against the simulator's network on the same links; the transport's own collectives
  // are checked against it in tests/models/test_transport.cpp and in the lock-step steps.
  s.cost->set_transport(nullptr, {});
  const sim::LinkParams nvlink{s.hardware.intra_link_bandwidth_bytes_per_s * s.profile.link_efficiency, 2e-12};
  const sim::LinkParams nic{s.hardware.inter_node_bandwidth_bytes_per_s * s.profile.link_efficiency, 4e-12};
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 12; ++trial) {
    const std::int64_t per_node = std::int64_t{2} << (rng() % 3);  // 2, 4, 8
    const std::int64_t nodes = 1 + static_cast<std::int64_t>(rng() % 3);
    const std::int64_t sp = per_node * nodes;
    // A group size dividing sp and a stride that keeps groups inside sp.
    std::vector<models::RankGroups> shapes;
    for (std::int64_t g = 2; g <= sp; g *= 2)
      if (sp % g == 0) {
        shapes.push_back({g, 1});
        if (sp / g > 1) shapes.push_back({g, sp / g});
      }
    const auto groups = shapes[rng() % shapes.size()];
    const auto kind = static_cast<models::CollectiveKind>(rng() % 3);
    const std::int64_t bytes = (1 + static_cast<std::int64_t>(rng() % 8)) << 20;
    const auto topo = nodes == 1 ? sim::Topology::node(per_node, nvlink) : sim::Topology::nodes(nodes, per_node, nvlink, nic);
    std::vector<std::vector<std::int64_t>> members;
    for (std::int64_t j = 0; j < sp; ++j)
      if (groups.member(j) == 0) {
        members.emplace_back();
        for (std::int64_t m = 0; m < groups.size; ++m) members.back().push_back(groups.rank(j, m));
      }
    const double simulated = sim::simulate_collective_s(topo, kind, members, bytes, sim::kFemtosecondsPerSecond);
    const double closed = models::collective_s(*s.cost, kind, groups, bytes, models::RankPlacement{sp, 1, per_node});
    INFO("kind " << static_cast<int>(kind) << " sp " << sp << " per node " << per_node << " groups " << groups.size << "/"
                 << groups.stride);
    CHECK(simulated == Approx(closed).epsilon(1e-6));
  }
}

TEST_CASE("the transport's all-to-all equals the simulator's network on the same links", "[collective][transport]") {
  // Both share links max-min fairly as a fluid (models/transport/fair_share.hpp, sim/network.hpp):
  // on one node and on nodes with a NIC per GPU, an all-to-all of every group at once lasts as long.
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 8; ++trial) {
    const std::int64_t per_node = std::int64_t{2} << (rng() % 3), nodes = 1 + static_cast<std::int64_t>(rng() % 3);
    const double nvl = 1e11 * static_cast<double>(1 + rng() % 4), nic = 2e10 * static_cast<double>(1 + rng() % 3);
    const std::int64_t n = per_node * nodes;
    const std::int64_t g = std::int64_t{2} << (rng() % 2);  // groups of 2 or 4, members a stride apart
    if (n % g != 0) continue;
    const std::int64_t stride = n / g;
    std::vector<std::vector<std::int64_t>> members;
    for (std::int64_t b = 0; b < stride; ++b) {
      members.emplace_back();
      for (std::int64_t m = 0; m < g; ++m) members.back().push_back(b + m * stride);
    }
    const std::int64_t per_peer = (1 + static_cast<std::int64_t>(rng() % 8)) << 20;
    const sim::LinkParams l_nvl{nvl, 0}, l_nic{nic, 0};
    const auto topo = nodes == 1 ? sim::Topology::node(per_node, l_nvl) : sim::Topology::nodes(nodes, per_node, l_nvl, l_nic);
    const double simulated =
        sim::simulate_collective_s(topo, models::CollectiveKind::AllToAll, members, per_peer, sim::kFemtosecondsPerSecond);
    const models::transport::Fabric fabric(models::MachineSpec::flat(per_node, nvl, 0, nic, 0), nodes);
    const double fluid =
        models::transport::collective(fabric, models::transport::Collective::AllToAll, members, static_cast<double>(per_peer * g))
            .seconds;
    INFO("per node " << per_node << " nodes " << nodes << " groups of " << g);
    CHECK(fluid == Approx(simulated).epsilon(1e-6));
  }
}

TEST_CASE("bytes on the links add up to the program's traffic, every strategy", "[step][strategy][traffic]") {
  for (const auto& c : std::vector<Case>{{"allgather", "te-all-gather", "zigzag"},
                                         {"allgather", "rfa-llama3", "contiguous"},
                                         {"ulysses", "te-a2a", "zigzag"},
                                         {"usp:2x4", "te-a2a-p2p", "zigzag"},
                                         {"usp:4x2", "usp", "zigzag"},
                                         {"double-ring:2", "internevo", "zigzag"},
                                         {"ring", "torch-cp", "zigzag"}}) {
    INFO(c.cp << " " << c.impl);
    const auto s = resolve("attn:8:8:16", 1, 8, 8 * 64, c.layout, c.cp, c.impl);
    sim::StepOptions o;
    o.topology = "nodes:2x4";
    const auto r = sim::simulate_step(s, o);
    // Every transfer leaves its sender over one link out of the GPU (NVLink or NIC): per GPU,
    // the bytes on its outgoing links are the rank's closed-form traffic.
    std::map<std::string, std::int64_t> sent;
    for (const auto& l : r.link_bytes)
      if (l.from.starts_with("gpu")) sent[l.from] += l.bytes_sent;
    const auto& p = *s.program;
    REQUIRE(sent.size() == 8);
    for (const auto& [gpu, bytes] : sent) {
      INFO(gpu);
      CHECK(bytes == (p.sent_bytes_fwd + p.sent_bytes_bwd) * s.model.layers);
    }
    for (const auto& l : r.link_bytes) CHECK(l.bytes_sent == l.bytes_received);
  }
}

TEST_CASE("protocols: a transfer-bound ring's backward per what shares a message", "[step][protocol]") {
  // Three devices, compute negligible, links of bandwidth B and no latency: T = K/V block / B,
  // dK/dV blocks in fp32 take 2 T. The forward takes 2 T (two hops in sequence).
  //  concurrent, home hop: K/V(0) and dK/dV(0) share the hop from 0 (K/V in at 2T), then
  //    dK/dV(0)'s second half and K/V(1) share it (both in at 4T), dK/dV(1) 4T..6T, home 6T..8T: 8 T;
  //  ordered, home hop: K/V(0) 0..T, dK/dV(0) T..3T, K/V(1) 3T..4T, dK/dV(1) 4T..6T, home 6T..8T: 8 T;
  //  fused, no home hop: [K/V] 0..T, [K/V | dK/dV] T..4T, [dK/dV] 4T..6T: 6 T.
  struct P {
    models::BackwardMessages messages;
    bool home;
    double backward_t;
    bool analytic_exact;
  };
  for (const P& pc : {P{models::BackwardMessages::Concurrent, true, 8, true}, P{models::BackwardMessages::Ordered, true, 8, true},
                      P{models::BackwardMessages::Fused, false, 6, true}}) {
    auto s = resolve("attn:8:8:64", 1, 3, 3 * 4096, "contiguous", "ring", "ringsim-tiles");
    s.hardware.peak_bf16_per_s = 1e30;
    s.hardware.peak_fp16_per_s = 1e30;
    s.hardware.peak_tf32_per_s = 1e30;
    s.hardware.peak_fp32_per_s = 1e30;
    s.profile.link_latency_s = 0.0;
    s.profile.dkv_wire_bytes = 4;
    test::rebuild_cost(s);
    s.impl.protocol.backward = pc.messages;
    s.impl.protocol.dkv_home_hop = pc.home;
    s.program = std::make_shared<const models::Program>(models::build_program(s));
    const double bw = s.hardware.intra_link_bandwidth_bytes_per_s * s.profile.link_efficiency;
    const double t = static_cast<double>(s.workload->kv_block_bytes()) / bw;
    INFO(models::Protocol::name(pc.messages));
    for (const auto sync : {sim::Sync::Async, sim::Sync::Barrier}) {
      const auto r = sim::simulate_step(s, femto(sync));
      CHECK(r.step_s == Approx((2 + pc.backward_t) * t).epsilon(1e-6));
    }
    const double analytic = models::predict(s).step_s;
    if (pc.analytic_exact)
      CHECK(analytic == Approx((2 + pc.backward_t) * t).epsilon(1e-6));
    else
      CHECK(analytic >= (2 + pc.backward_t) * t);  // the closed form lets K/V and dK/dV share every round
  }
}

TEST_CASE("a double ring of windows of one is the ring, event for event", "[step][strategy]") {
  // W = 1: every window is one position and every hop an outer one; the schedule is the ring's.
  // One implementation runs both (its parts offered the double ring too), so only the schedule differs.
  // The double ring has no ordered-message rule (its inner and outer hops are separate process
  // groups): both run concurrent K/V and dK/dV messages.
  auto parts = models::resolve_parts(resolve("attn:8:8:64", 1, 8, 8 * 1024, "zigzag", "ring", "ring-flash-attn").spec,
                                     models::Catalog());
  parts.impl.strategies.push_back("double-ring");
  parts.impl.protocol.backward = models::BackwardMessages::Concurrent;
  models::ScenarioSpec spec = resolve("attn:8:8:64", 1, 8, 8 * 1024, "zigzag", "ring", "ring-flash-attn").spec;
  auto ring = models::resolve(spec, parts);
  spec.cp = ringsim::models::Strategy::parse("double-ring:1");
  auto dbl = models::resolve(spec, parts);
  // The schedules alone: NCCL's kernel beside a step is charged for a ring round's hop, and for a
  // double ring's inner hops only (ring_transfers.hpp), which a window of one has none of.
  ring.cost->set_comm_sm_share(0, 0);
  dbl.cost->set_comm_sm_share(0, 0);
  sim::StepOptions o;
  o.topology = "nodes:2x4";
  const auto a = sim::simulate_step(ring, o);
  const auto b = sim::simulate_step(dbl, o);
  CHECK(a.step_s == Approx(b.step_s).epsilon(1e-12));
  CHECK(a.compute_s == b.compute_s);
}

TEST_CASE("a collective call lasts at least the host's time to issue it, in both solvers", "[step][strategy][host]") {
  // With ideal links every all-to-all is host-bound: each call lasts host_collective_s plus
  // host_collective_peer_s per peer of its group, a USP group of one included (the library calls
  // all_to_all_4D at a Ulysses degree of 1), and the simulator holds each group as long.
  const double host = 300e-6, peer = 40e-6;
  struct HostCase {
    std::string cp;
    std::int64_t group;  // the all-to-all's group size
  };
  for (const auto& [cp, group] : {HostCase{"ulysses", 4}, HostCase{"usp:2x2", 2}, HostCase{"usp:1x4", 1}, HostCase{"usp:4x1", 4}}) {
    auto s = resolve("attn:32:8:128", 1, 4, 4096, "zigzag", cp, "usp");
    s.profile.host_collective_s = s.profile.host_collective_peer_s = 0;
    make_ideal(s);
    const double before = models::predict(s).exposed_all_to_all_s;
    s.profile.host_collective_s = host;
    s.profile.host_collective_peer_s = peer;
    test::rebuild_cost(s);
    const auto p = models::predict(s);
    INFO(cp);
    CHECK(before == Approx(0).margin(1e-12));
    // Four all-to-alls forward (Q, K, V, out) and four backward (dout, dQ, dK, dV) per layer.
    const double layers = static_cast<double>(s.model.layers);
    CHECK(p.exposed_all_to_all_s == Approx(8 * layers * (host + static_cast<double>(group - 1) * peer)).epsilon(1e-12));
    const auto barrier = sim::simulate_step(s, femto(sim::Sync::Barrier));
    CHECK(barrier.step_s == Approx(p.step_s).epsilon(1e-9));
    CHECK(sim::simulate_step(s, femto(sim::Sync::Async)).step_s <= barrier.step_s * (1 + 1e-12));
  }
}

TEST_CASE("a double ring's rounds, taken by distance in the analytic model, equal the simulator's position by position",
          "[step][strategy]") {
  // The analytic model visits a double ring's round as four rectangles of positions at one distance
  // each (split where the library's rank variant starts: ring-flash-attention's unfused sliced
  // merges from rank 2); the lock-step simulator runs every position. Windows of every size that
  // divides the ring, rings up to 64 (rank 2 then falls inside, at the edge of and past a window).
  int checked = 0;
  for (const std::int64_t sp : {8, 16, 32, 64})
    for (std::int64_t w = 2; w < sp; w *= 2) {
      auto s = resolve("attn:32:8:128", 1, sp, sp * 128, "zigzag", "double-ring:" + std::to_string(w), "internevo");
      make_ideal(s);
      const double analytic = models::predict(s).step_s;
      const auto barrier = sim::simulate_step(s, femto(sim::Sync::Barrier));
      INFO("sp " << sp << " window " << w);
      CHECK(barrier.step_s == Approx(analytic).epsilon(1e-9));
      ++checked;
    }
  CHECK(checked == 2 + 3 + 4 + 5);  // windows 2 to sp / 2 of each ring
}
