#include "sim/step_plan.hpp"

#include "models/analytic/ring_transfers.hpp"

#include "models/hardware/hardware.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "models/families/attention_cost.hpp"
#include "models/io/error.hpp"
#include "models/program/collective_cost.hpp"
#include "sim/ring_hop.hpp"

namespace ringsim::sim::detail {

using models::InputError;

StepPlan::StepPlan(const models::ResolvedScenario& scenario, const StepOptions& options)
    : s(scenario), o(options), prog(*scenario.program), clock(options.ticks_per_s) {
  if (o.buffers < 1 || o.buffers > 2)
    throw InputError({}, 0, "buffers", "expected 1 (no overlap) or 2 (double buffering), got " + std::to_string(o.buffers));
  mp = s.spec.mp;
  sp = s.spec.sp;
  d = mp * sp;
  backward_messages = prog.protocol.backward;
  dkv_home_hop = prog.protocol.dkv_home_hop;
  topology = scenario_topology(s, o.topology, d);
  // A topology the user named is checked as every command checks it; the default one is built
  // for the mesh (its last node may be partly used, as a job of 12 GPUs on nodes of 8 is).
  if (!o.topology.empty())
    models::check_topology_hosts(topology->spec(), topology->device_count(), topology->devices_per_node(), mp * sp);
  embedding = std::make_unique<RingEmbedding>(*topology, mp, sp, o.placement);
  build_geometry();
  build_phases();
  build_costs();
  build_routes();
}

void StepPlan::build_geometry() {
  const bool ring = prog.has_ring();
  n = ring ? prog.rings.size : 1;
  window = ring && prog.window > 0 && prog.window < n ? prog.window : 0;
  rounds = n;
  const std::int64_t w = window > 0 ? window : n;
  const std::int64_t windows = n / w;
  for (std::int64_t dev = 0; dev < d; ++dev) {
    const std::int64_t k = dev / sp, j = dev % sp;
    const std::int64_t q = ring ? prog.rings.member(j) : 0;
    pos.push_back(q);
    auto at = [&](std::int64_t position) { return k * sp + prog.rings.rank(j, position); };
    if (!ring) {
      succ.push_back(dev);
      pred.push_back(dev);
      outer_succ.push_back(dev);
      outer_pred.push_back(dev);
      continue;
    }
    const std::int64_t base = (q / w) * w, i = q % w;
    succ.push_back(at(base + (i + 1) % w));
    pred.push_back(at(base + (i + w - 1) % w));
    outer_succ.push_back(at(((q / w + 1) % windows) * w + i));
    outer_pred.push_back(at(((q / w + windows - 1) % windows) * w + i));
  }
}

std::size_t StepPlan::channel_for(models::CollectiveKind kind, models::RankGroups groups) {
  const FlowPattern pattern = pattern_of(kind);
  for (std::size_t c = 0; c < channels.size(); ++c)
    if (channels[c].pattern == pattern && channels[c].groups == groups) return c;
  Channel ch;
  ch.pattern = pattern;
  ch.groups = groups;
  ch.groups_per_tp = sp / groups.size;
  Topology::RouteFinder finder(*topology);
  ch.routes.resize(static_cast<std::size_t>(mp * ch.groups_per_tp));
  ch.members.resize(ch.routes.size());
  std::vector<std::int64_t> physical;
  for (std::int64_t k = 0; k < mp; ++k)
    for (std::int64_t j = 0; j < sp; ++j) {
      if (groups.member(j) != 0) continue;  // visit each group once, from its first member
      const std::size_t inst = ch.instance(k, j);
      physical.clear();
      for (std::int64_t m = 0; m < groups.size; ++m) {
        const std::int64_t rank = groups.rank(j, m);
        physical.push_back(embedding->device(k, rank));
        ch.members[inst].push_back(static_cast<std::uint32_t>(k * sp + rank));
      }
      ch.routes[inst] = group_routes(finder, pattern, physical);
    }
  channels.push_back(std::move(ch));
  return channels.size() - 1;
}

void StepPlan::build_phases() {
  const auto& m = s.model;
  models::StepShape shape;
  shape.tokens = s.layout->block();
  shape.batch = s.spec.batch;
  shape.mp = mp;
  shape.recompute = s.profile.recompute;
  shape.fp8 = s.profile.fp8_matmuls;
  const bool mp_inter = s.tp_crosses_nodes();
  double layer_fwd = 0, layer_bwd = 0, step_once = 0;
  std::vector<double> ar_fwd, ar_bwd;  // bytes of each tensor-parallel all-reduce of a layer
  for (const auto& op : models::step_ops(m, shape)) {
    if (op.kind == models::OpKind::Collective) {
      // Routed over the topology as events, not charged as a duration.
      (op.phase == models::Phase::Forward ? ar_fwd : ar_bwd).push_back(op.bytes);
      continue;
    }
    const double t = s.cost->op_s(op, mp_inter);
    if (!op.per_layer)
      step_once += t;
    else if (op.phase == models::Phase::Forward)
      layer_fwd += t;
    else
      layer_bwd += t;
  }
  // SCFA's gather/sort/scatter around the sparse kernel (0 unless the mask is index-based):
  // device-local memory-bound work, as in models::predict.
  layer_fwd += s.cost->sparse_prep_fwd_s(s.layout->block());
  layer_bwd += s.cost->sparse_prep_bwd_s(s.layout->block());
  // The ops of a layer run before its attention; their all-reduces follow them. The order inside
  // a layer changes when traffic meets on shared links, not how much there is.
  auto all_reduces = [&](const std::vector<double>& list, const std::string& where) {
    for (const double bytes : list) {
      Phase ph;
      ph.kind = PhaseKind::AllReduce;
      ph.chunk_bytes = static_cast<std::int64_t>(std::ceil(bytes / static_cast<double>(mp)));
      ph.name = "tp all-reduce " + where;
      phases.push_back(ph);
    }
  };
  auto other = [&](double seconds, std::string name) {
    Phase ph;
    ph.kind = PhaseKind::Other;
    ph.other_ticks = clock.to_ticks(seconds);
    ph.name = std::move(name);
    phases.push_back(ph);
  };
  auto attention = [&](const std::vector<models::Stage>& stages, bool backward, const std::string& layer) {
    for (const auto& st : stages) {
      Phase ph;
      ph.name = st.label + " " + layer;
      switch (st.kind) {
        case models::StageKind::Ring: ph.kind = backward ? PhaseKind::RingBwd : PhaseKind::RingFwd; break;
        case models::StageKind::Compute:
          ph.kind = PhaseKind::Compute;
          ph.table = st.table;
          ph.with_next = st.with_next;
          break;
        case models::StageKind::Collective: {
          ph.kind = PhaseKind::Collective;
          CollectivePhase c;
          c.kind = st.collective;
          c.channel = channel_for(st.collective, st.groups);
          c.bytes = st.bytes;
          c.steps = steps_of(pattern_of(st.collective), st.groups.size);
          c.host_ticks = clock.to_ticks(models::collective_host_s(s.profile, st.groups));
          // Equal collectives share an entry, so equal layers have equal phase signatures. The
          // host time follows from the groups, which the channel fixes: it needs no comparison.
          std::size_t idx = collectives.size();
          for (std::size_t i = 0; i < collectives.size(); ++i)
            if (collectives[i].kind == c.kind && collectives[i].channel == c.channel && collectives[i].bytes == c.bytes)
              idx = i;
          if (idx == collectives.size()) collectives.push_back(c);
          ph.collective = idx;
          break;
        }
      }
      phases.push_back(ph);
    }
    if (!stages.empty()) phases.back().layer_end = true;
  };
  const auto layers = m.layers;
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string tag = std::string(1, 'L').append(std::to_string(l));
    if (layer_fwd > 0) other(layer_fwd, "ops fwd " + tag);
    all_reduces(ar_fwd, "fwd " + tag);
    attention(prog.fwd, false, tag);
  }
  if (step_once > 0) other(step_once, "lm head");
  for (std::int64_t l = layers - 1; l >= 0; --l) {
    const std::string tag = std::string(1, 'L').append(std::to_string(l));
    if (layer_bwd > 0) other(layer_bwd, "ops bwd " + tag);
    all_reduces(ar_bwd, "bwd " + tag);
    attention(prog.bwd, true, tag);
  }
  // Segments: cut after every layer's attention.
  std::size_t begin = 0;
  for (std::size_t i = 0; i < phases.size(); ++i)
    if (phases[i].layer_end || i + 1 == phases.size()) {
      Segment seg{begin, i + 1, segments.size()};
      for (const auto& other_seg : segments)
        if (other_seg.end - other_seg.begin == seg.end - seg.begin &&
            std::equal(phases.begin() + static_cast<std::ptrdiff_t>(seg.begin),
                       phases.begin() + static_cast<std::ptrdiff_t>(seg.end),
                       phases.begin() + static_cast<std::ptrdiff_t>(other_seg.begin), [](const Phase& a, const Phase& b) {
                         return a.kind == b.kind && a.other_ticks == b.other_ticks && a.chunk_bytes == b.chunk_bytes &&
                                a.table == b.table && a.with_next == b.with_next && a.collective == b.collective;
                       })) {
          seg.signature = other_seg.signature;
          break;
        }
      segments.push_back(seg);
      begin = i + 1;
    }
}

void StepPlan::build_costs() {
  // Ring: per position and round (every ring has the same workload: mp and the Ulysses groups
  // split heads). The workload memoises blocks by class, so equal blocks are one object: key on
  // its address.
  if (prog.has_ring()) {
    const models::ResolvedScenario& rs = s.ring_scenario();
    const auto& w = *rs.workload;
    const Tick overhead = clock.to_ticks(s.profile.round_overhead_s);
    cost_of.resize(static_cast<std::size_t>(n * n));
    // The transfer each round's compute overlaps: NCCL's kernel beside it slows the compute
    // (CostModel::beside_comm_s), as in the analytic model's rounds.
    const models::RingRoundTransfers xs = models::ring_round_transfers(s, prog);
    // Keyed by the block's counts, the rank variant of its cost (AttentionCost::block_variant) and
    // the round's transfers (first, middle and last rounds differ).
    std::map<std::tuple<const models::BlockStats*, int, double, double>, std::uint32_t> index;
    for (std::int64_t q = 0; q < n; ++q)
      for (std::int64_t r = 0; r < n; ++r) {
        const std::int64_t kv = prog.kv_position(q, r);
        const auto& b = w.block(((q - kv) % n + n) % n, q);
        const double xf = xs.fwd[static_cast<std::size_t>(r)], xb = xs.bwd[static_cast<std::size_t>(r)];
        auto [it, fresh] =
            index.try_emplace({&b, rs.attention->block_variant(rs, q, kv), xf, xb}, static_cast<std::uint32_t>(costs.size()));
        if (fresh) {
          // The implementation's kernel family times the block (models/families/attention_cost.hpp).
          const models::RoundCost rc = rs.attention->block(rs, q, kv, b);
          const double fwd = rc.fwd_host_bound ? rc.fwd_s : s.cost->beside_comm_s(rc.fwd_s, xf, xs.group_spans_nodes);
          const double bwd = rc.bwd_host_bound ? rc.bwd_s : s.cost->beside_comm_s(rc.bwd_s, xb, xs.group_spans_nodes);
          costs.push_back({overhead + clock.to_ticks(fwd), overhead + clock.to_ticks(bwd), rc.tiles});
        }
        cost_of[static_cast<std::size_t>(q * n + r)] = it->second;
      }
    kv_bytes = w.kv_block_bytes();
    dkv_bytes = models::dkv_block_bytes(s, kv_bytes);
  } else {
    costs.push_back({0, 0, 0});
    cost_of.assign(1, 0);
  }
  // Non-ring compute, per rank, through the same kernel family (models/program/program.hpp).
  for (const auto& t : prog.compute) {
    const auto c = models::table_cost(s, t);
    std::vector<Tick> ticks;
    ticks.reserve(c.seconds.size());
    for (const double x : c.seconds) ticks.push_back(clock.to_ticks(x));
    table_ticks.push_back(std::move(ticks));
    table_tiles.push_back(c.tiles);
  }
}

// A hop whose links no other route uses shares bandwidth only with its own traffic: when that is
// one flow at a time its transfer time is closed form (latency + bytes / narrowest link), with no
// network events. A collective whose routes are alone on their links likewise. Everything else
// goes through the max-min network.
void StepPlan::build_routes() {
  const auto n_links = static_cast<std::size_t>(topology->link_count());
  std::vector<int> uses(n_links, 0);
  // Which kind of traffic first used a link, and whether another kind uses it too: traffic of
  // one kind (one collective structure) on a link cannot meet its own next layer's.
  constexpr int kNone = -1;
  std::vector<int> owner(n_links, kNone);
  std::vector<char> mixed(n_links, 0);
  auto claim = [&](const Route& r, int who) {
    for (auto l : r) {
      const auto li = static_cast<std::size_t>(l);
      ++uses[li];
      if (owner[li] == kNone)
        owner[li] = who;
      else if (owner[li] != who)
        mixed[li] = 1;
    }
  };
  Topology::RouteFinder finder(*topology);
  auto physical = [&](std::int64_t dev) { return embedding->device(dev / sp, dev % sp); };
  const auto dn = static_cast<std::size_t>(d);
  hop_routes.assign(dn, {});
  outer_routes.assign(dn, {});
  if (n > 1)
    for (std::int64_t dev = 0; dev < d; ++dev) {
      hop_routes[static_cast<std::size_t>(dev)] = finder.route(physical(dev), physical(succ_of(dev)));
      claim(hop_routes[static_cast<std::size_t>(dev)], 0);
      if (double_ring()) {
        outer_routes[static_cast<std::size_t>(dev)] = finder.route(physical(dev), physical(outer_succ_of(dev)));
        claim(outer_routes[static_cast<std::size_t>(dev)], 1);
      }
    }
  // Tensor-parallel all-reduces: a ring over the mp devices of each context-parallel rank.
  if (mp > 1) {
    tp_routes.resize(dn);
    for (std::int64_t dev = 0; dev < d; ++dev) {
      tp_routes[static_cast<std::size_t>(dev)] = finder.route(physical(dev), physical(tp_next(dev)));
      claim(tp_routes[static_cast<std::size_t>(dev)], 2);
    }
  }
  for (std::size_t c = 0; c < channels.size(); ++c)
    for (const auto& g : channels[c].routes)
      for (const auto& r : g.routes) claim(r, 3 + static_cast<int>(c));

  direct.assign(dn, 1);
  outer_direct.assign(dn, 1);
  kv_hop_ticks.assign(dn, 0);
  outer_kv_hop_ticks.assign(dn, 0);
  // A hop without links (a ring of one device, which sends nothing) keeps this placeholder.
  hops.assign(2 * dn, HopParams{1, 0});
  hop_latency_s.assign(2 * dn, 0.0);
  hop_bandwidth_bytes_per_s.assign(2 * dn, std::numeric_limits<double>::infinity());
  // A ring hop's time is sim/ring_hop.hpp's (the prefill simulation uses the same). A hop sharing
  // links with other traffic goes through the max-min network at the links' share instead.
  auto hop = [&](const Route& route, char& is_direct, Tick& kv_ticks, std::size_t h) {
    for (auto l : route)
      if (uses[static_cast<std::size_t>(l)] > 1) is_direct = 0;
    const auto link = ring_hop_link(*topology, route, s);
    kv_ticks = clock.to_ticks(link.seconds(static_cast<double>(kv_bytes)));
    hop_latency_s[h] = link.latency_s;
    hop_bandwidth_bytes_per_s[h] = link.bandwidth_bytes_per_s;
    if (std::isfinite(link.bandwidth_bytes_per_s)) hops[h] = {link.bandwidth_bytes_per_s, clock.to_ticks(link.latency_s)};
  };
  for (std::size_t dev = 0; dev < dn; ++dev) {
    hop(hop_routes[dev], direct[dev], kv_hop_ticks[dev], dev);
    isolated = isolated && direct[dev];
    if (double_ring()) {
      hop(outer_routes[dev], outer_direct[dev], outer_kv_hop_ticks[dev], dn + dev);
      isolated = isolated && outer_direct[dev];
    }
  }
  for (std::size_t l = 0; l < n_links; ++l) isolated = isolated && !mixed[l];
  // Collectives alone on their links: every group's step has one closed-form time.
  for (auto& c : collectives) {
    const auto& ch = channels[c.channel];
    double step = 0;
    bool closed = c.steps > 0;
    for (const auto& g : ch.routes) {
      if (!closed) break;
      const auto t = isolated_step_s(*topology, g, c.bytes, uses);
      if (!t) closed = false;
      else step = std::max(step, *t);
    }
    if (closed) c.closed_ticks = clock.to_ticks(step) * c.steps;
    // With the scenario's transport (GPUs: NCCL's collectives over the machine's resources and
    // NCCL's own latencies, models/transport/) a collective lasts what the analytic model says,
    // its group held for it: the transport already shares the machine's resources among the
    // collective's flows, which the topology graph here does not describe.
    if (s.cost->transport()) {
      const models::RankPlacement pl{s.spec.sp, s.spec.mp, std::max<std::int64_t>(1, s.hardware.devices_per_node)};
      c.closed_ticks = clock.to_ticks(models::collective_s(*s.cost, c.kind, ch.groups, c.bytes, pl));
    }
  }
}

}  // namespace ringsim::sim::detail
