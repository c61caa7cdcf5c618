#include "models/transport/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace ringsim::models::transport {
namespace {

// NCCL's latency constants in microseconds (src/graph/tuning.cc @ 5067397c, baseLatencies and
// hwLatencies; index [algorithm][protocol], algorithms tree and ring, protocols LL, LL128, Simple).
constexpr double kBaseLatUs[2][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};
constexpr double kHwLatUs[3][2][3] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}},  // NVLink
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}},   // PCI
    {{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}}, // NET
};
enum Hw { kNvlink = 0, kPci = 1, kNet = 2 };
enum Algo { kTree = 0, kRing = 1 };
constexpr const char* kProtocol[3] = {"LL", "LL128", "Simple"};

std::vector<std::vector<ResourceUse>> routes_of(const Fabric& f, std::span<const Transfer> ts, std::vector<double>* lat,
                                                std::vector<PathKind>* kinds) {
  std::vector<std::vector<ResourceUse>> flows;
  flows.reserve(ts.size());
  for (const auto& t : ts) {
    auto r = f.route(t.src, t.dst);
    if (lat) lat->push_back(r.latency_s);
    if (kinds) kinds->push_back(r.kind);
    flows.push_back(std::move(r.uses));
  }
  return flows;
}

// Transfers crossing `resource` (each crossing counted); `copies`, where given, how many
// transfers of the whole pattern each flow stands for (node_symmetric below).
std::int64_t sharing_of(std::span<const std::vector<ResourceUse>> flows, std::int32_t resource,
                        std::span<const double> copies = {}) {
  if (resource < 0) return 0;
  std::int64_t n = 0;
  for (std::size_t i = 0; i < flows.size(); ++i)
    for (const auto& u : flows[i])
      if (u.resource == resource) n += copies.empty() ? 1 : static_cast<std::int64_t>(copies[i]);
  return n;
}

// Members of a group by node, nodes in order of first appearance.
std::vector<std::vector<std::int64_t>> by_node(const Fabric& f, const std::vector<std::int64_t>& group) {
  std::vector<std::vector<std::int64_t>> nodes;
  std::vector<std::int64_t> ids;
  for (const auto d : group) {
    const auto node = d / f.machine().gpus;
    const auto it = std::find(ids.begin(), ids.end(), node);
    if (it == ids.end()) {
      ids.push_back(node);
      nodes.push_back({d});
    } else {
      nodes[static_cast<std::size_t>(it - ids.begin())].push_back(d);
    }
  }
  return nodes;
}

struct RingChannels {
  double bus_bytes_per_s = 0;  // channels x the slowest channel's rate
  std::int32_t bottleneck = -1;
  std::int64_t sharing = 0;
  std::int64_t channels = 1;
};

// NCCL's ring channels over every group at once (see the header).
RingChannels ring_channels(const Fabric& f, std::span<const std::vector<std::int64_t>> groups) {
  std::vector<std::vector<std::int64_t>> per_node0 = by_node(f, groups.front());
  const auto nodes = static_cast<std::int64_t>(per_node0.size());
  std::int64_t ppn = std::numeric_limits<std::int64_t>::max();
  for (const auto& m : per_node0) ppn = std::min<std::int64_t>(ppn, static_cast<std::int64_t>(m.size()));
  const std::int64_t channels = nodes > 1 ? std::max<std::int64_t>(1, std::min(ppn, f.machine().nics)) : 1;
  std::vector<Transfer> ts;
  std::vector<std::int64_t> channel_of;
  for (const auto& g : groups) {
    const auto nodes_of = by_node(f, g);
    for (std::int64_t c = 0; c < channels; ++c) {
      std::vector<std::int64_t> order;
      for (const auto& m : nodes_of) {
        const auto p = static_cast<std::int64_t>(m.size());
        for (std::int64_t i = 0; i < p; ++i) order.push_back(m[static_cast<std::size_t>((c + i) % p)]);
      }
      for (std::size_t i = 0; i < order.size(); ++i) {
        ts.push_back({order[i], order[(i + 1) % order.size()], 1.0});
        channel_of.push_back(c);
      }
    }
  }
  std::vector<double> lat;
  const auto flows = routes_of(f, ts, &lat, nullptr);
  const auto rates = max_min_rates(f.capacities(), flows);
  RingChannels out;
  out.channels = channels;
  double slowest = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (rates.rate_bytes_per_s[i] < slowest) {
      slowest = rates.rate_bytes_per_s[i];
      out.bottleneck = rates.bottleneck[i];
    }
  }
  out.sharing = sharing_of(flows, out.bottleneck);
  out.bus_bytes_per_s = static_cast<double>(channels) * slowest;
  return out;
}

// An all-to-all whose groups each span the same k >= 3 nodes, at the same GPUs of each, is
// symmetric under any permutation of those nodes (a fabric's nodes are alike and its network has
// no resource of its own), and max-min fair rates are unique, so the pattern's transfers from GPU
// a of one node to GPU b of another all run at one rate whichever the two nodes are. The pattern
// on the first two of the nodes, each transfer between them standing for its k - 1 copies (a
// flow of k - 1 times the weight on every resource it crosses loads them as its copies do, and
// finishes with them), gives every rate and finish of the whole: O(N) to check, O(G^2) transfers
// instead of N^2 (pass-Q's all-to-all over a ring of 65,536 GPUs).
struct Reduced {
  std::vector<Transfer> transfers;
  std::vector<double> copies;  // how many transfers of the whole pattern each stands for
};
std::optional<Reduced> node_symmetric(const Fabric& f, std::span<const std::vector<std::int64_t>> groups, double share) {
  const std::int64_t gpus = f.machine().gpus;
  std::vector<std::int64_t> nodes;                                    // the first group's, ascending
  std::vector<std::int64_t> owner(static_cast<std::size_t>(gpus), -1);  // per GPU index: its group
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    std::vector<std::int64_t> sorted(groups[gi].begin(), groups[gi].end());
    std::sort(sorted.begin(), sorted.end());  // node by node, GPU indices ascending within each
    std::vector<std::int64_t> ids, locals;
    for (const auto d : sorted) {
      if (ids.empty() || ids.back() != d / gpus) ids.push_back(d / gpus);
      if (ids.size() == 1) locals.push_back(d % gpus);
    }
    if (gi == 0) nodes = ids;
    if (ids != nodes || nodes.size() < 3 || sorted.size() != nodes.size() * locals.size()) return std::nullopt;
    // Every node holds the first node's GPU indices (as many members each, so a mismatch shows).
    for (std::size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] % gpus != locals[i % locals.size()] || sorted[i] / gpus != nodes[i / locals.size()]) return std::nullopt;
    for (const auto l : locals) {
      auto& o = owner[static_cast<std::size_t>(l)];
      if (o >= 0) return std::nullopt;  // two groups on one GPU
      o = static_cast<std::int64_t>(gi);
    }
  }
  Reduced out;
  const double copies = static_cast<double>(nodes.size() - 1);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    std::vector<std::int64_t> members;
    for (const auto node : {nodes[0], nodes[1]})
      for (std::int64_t l = 0; l < gpus; ++l)
        if (owner[static_cast<std::size_t>(l)] == static_cast<std::int64_t>(gi)) members.push_back(node * gpus + l);
    for (const auto a : members)
      for (const auto b : members) {
        if (a == b) continue;
        out.transfers.push_back({a, b, share});
        out.copies.push_back(a / gpus == b / gpus ? 1.0 : copies);
      }
  }
  return out;
}

int intra_hw(const Fabric& f, const std::vector<std::int64_t>& group) {
  const auto& m = f.machine();
  if (m.fabric == MachineSpec::Fabric::NvSwitch) return kNvlink;
  for (std::size_t i = 0; i < group.size(); ++i)
    for (std::size_t j = i + 1; j < group.size(); ++j) {
      if (group[i] / m.gpus != group[j] / m.gpus) continue;
      if (!m.bridged(static_cast<std::int32_t>(group[i] % m.gpus), static_cast<std::int32_t>(group[j] % m.gpus))) return kPci;
    }
  return kNvlink;
}

}  // namespace

std::string_view to_string(Collective c) noexcept {
  switch (c) {
    case Collective::AllReduce: return "all-reduce";
    case Collective::AllGather: return "all-gather";
    case Collective::ReduceScatter: return "reduce-scatter";
    case Collective::AllToAll: return "all-to-all";
    case Collective::SendRecv: return "send/receive";
  }
  return "?";
}

PatternTime concurrent(const Fabric& fabric, std::span<const Transfer> transfers) {
  PatternTime out;
  if (transfers.empty()) return out;
  std::vector<double> lat;
  std::vector<PathKind> kinds;
  const auto flows = routes_of(fabric, transfers, &lat, &kinds);
  std::vector<double> bytes;
  bytes.reserve(transfers.size());
  for (const auto& t : transfers) bytes.push_back(std::max(t.bytes, 0.0));
  const auto finish = fluid_finish_s(fabric.capacities(), flows, bytes);
  const auto rates = max_min_rates(fabric.capacities(), flows);
  std::size_t worst = 0;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    out.latency_s = std::max(out.latency_s, lat[i]);
    if (lat[i] + finish[i] > lat[worst] + finish[worst]) worst = i;
  }
  out.seconds = lat[worst] + finish[worst];
  out.rate_bytes_per_s = rates.rate_bytes_per_s[worst];
  out.bottleneck = rates.bottleneck[worst];
  out.sharing = sharing_of(flows, out.bottleneck);
  out.kind = kinds[worst];
  return out;
}

HopRates hop_rates(const Fabric& fabric, std::span<const Transfer> transfers) {
  HopRates h;
  std::vector<double> lat;
  std::vector<PathKind> kinds;
  const auto flows = routes_of(fabric, transfers, &lat, &kinds);
  const auto rates = max_min_rates(fabric.capacities(), flows);
  const auto g = fabric.machine().gpus;
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    if (kinds[i] == PathKind::Local) continue;
    const bool inter = transfers[i].src / g != transfers[i].dst / g;
    double& rate = inter ? h.inter_bytes_per_s : h.intra_bytes_per_s;
    if (rate == 0 || rates.rate_bytes_per_s[i] < rate) {
      rate = rates.rate_bytes_per_s[i];
      (inter ? h.inter_bottleneck : h.intra_bottleneck) = rates.bottleneck[i];
      if (!inter) h.intra_kind = kinds[i];
    }
    double& l = inter ? h.inter_latency_s : h.intra_latency_s;
    l = std::max(l, lat[i]);
  }
  h.intra_sharing = sharing_of(flows, h.intra_bottleneck);
  h.inter_sharing = sharing_of(flows, h.inter_bottleneck);
  return h;
}

CollectivePlan::CollectivePlan(const Fabric& fabric, Collective kind, std::span<const std::vector<std::int64_t>> groups)
    : kind_(kind) {
  if (groups.empty() || groups.front().size() <= 1) return;
  n_ = static_cast<std::int64_t>(groups.front().size());
  for (const auto& g : groups)
    if (static_cast<std::int64_t>(g.size()) != n_) throw std::invalid_argument("collective groups of different sizes");
  const double nn = static_cast<double>(n_);
  if (kind == Collective::AllToAll || kind == Collective::SendRecv) {
    // Every transfer of the pattern moves the same share of the call's bytes, so its fluid
    // finish is linear in them: priced once per byte.
    std::vector<Transfer> ts;
    std::vector<double> copies;
    if (kind == Collective::AllToAll) {
      if (auto reduced = node_symmetric(fabric, groups, 1.0 / nn)) {
        ts = std::move(reduced->transfers);
        copies = std::move(reduced->copies);
      } else {
        for (const auto& g : groups)
          for (const auto a : g)
            for (const auto b : g)
              if (a != b) ts.push_back({a, b, 1.0 / nn});
      }
    } else {
      for (const auto& g : groups)
        for (std::size_t i = 0; i < g.size(); ++i) ts.push_back({g[i], g[(i + 1) % g.size()], 1.0});
    }
    std::vector<PathKind> kinds;
    auto flows = routes_of(fabric, ts, &direct_latency_s_, &kinds);
    for (std::size_t i = 0; i < copies.size(); ++i)
      for (auto& u : flows[i]) u.weight *= copies[i];
    std::vector<double> bytes;
    for (const auto& t : ts) bytes.push_back(t.bytes);
    direct_s_per_byte_ = fluid_finish_s(fabric.capacities(), flows, bytes);
    const auto rates = max_min_rates(fabric.capacities(), flows);
    std::size_t worst = 0;
    for (std::size_t i = 0; i < ts.size(); ++i)
      if (direct_s_per_byte_[i] > direct_s_per_byte_[worst]) worst = i;
    direct_bottleneck_ = rates.bottleneck[worst];
    direct_sharing_ = sharing_of(flows, direct_bottleneck_, copies);
    return;
  }
  const auto nodes_of = by_node(fabric, groups.front());
  nodes_ = static_cast<std::int64_t>(nodes_of.size());
  ppn_ = n_ / nodes_;
  intra_ = intra_hw(fabric, groups.front());
  // NCCL adds the network's latency to every inter-node step, twice with Simple (the flush):
  // ncclTopoTuneModel, interLat += graphs[a]->latencyInter.
  net_latency_us_ = nodes_ > 1 ? fabric.machine().nic_latency_s * 1e6 : 0.0;
  const RingChannels ring = ring_channels(fabric, groups);
  ring_bus_bytes_per_s_ = ring.bus_bytes_per_s;
  ring_bottleneck_ = ring.bottleneck;
  ring_sharing_ = ring.sharing;
  if (kind == Collective::AllReduce && nodes_ > 1) {
    // Tree: groups with ranks on the same node share the NICs those ranks sit beside; the
    // chain inside a node is the node's ring of the group's ranks.
    const auto& m = fabric.machine();
    const auto node0 = groups.front().front() / m.gpus;
    std::vector<std::int32_t> nics;
    double sharing_groups = 0;
    for (const auto& g : groups) {
      bool on = false;
      for (const auto d : g)
        if (d / m.gpus == node0) {
          on = true;
          nics.push_back(m.nic_of_gpu[static_cast<std::size_t>(d % m.gpus)]);
        }
      sharing_groups += on ? 1 : 0;
    }
    std::sort(nics.begin(), nics.end());
    nics.erase(std::unique(nics.begin(), nics.end()), nics.end());
    tree_nic_bytes_per_s_ = static_cast<double>(nics.size()) * m.nic_bytes_per_s * fabric.scale() / sharing_groups;
    tree_chain_bytes_per_s_ = std::numeric_limits<double>::infinity();
    if (ppn_ > 1) {
      std::vector<std::vector<std::int64_t>> node_groups;
      for (const auto& g : groups)
        for (auto& members : by_node(fabric, g)) node_groups.push_back(std::move(members));
      tree_chain_bytes_per_s_ = ring_channels(fabric, node_groups).bus_bytes_per_s;
    }
  }
}

CollectiveTime CollectivePlan::time(double bytes) const {
  CollectiveTime out;
  if (n_ <= 1 || !(bytes > 0)) return out;
  const double nn = static_cast<double>(n_);
  if (kind_ == Collective::AllToAll || kind_ == Collective::SendRecv) {
    for (std::size_t i = 0; i < direct_latency_s_.size(); ++i) {
      out.seconds = std::max(out.seconds, direct_latency_s_[i] + direct_s_per_byte_[i] * bytes);
      out.latency_s = std::max(out.latency_s, direct_latency_s_[i]);
    }
    out.algorithm = "direct";
    out.protocol = "Simple";
    out.bottleneck = direct_bottleneck_;
    out.sharing = direct_sharing_;
    const double moved = kind_ == Collective::AllToAll ? bytes * (nn - 1) / nn : bytes;
    out.bus_bytes_per_s = out.seconds > 0 ? moved / out.seconds : 0.0;
    return out;
  }
  const std::int64_t nsteps = kind_ == Collective::AllReduce ? 2 * (n_ - 1) : n_ - 1;
  const std::int64_t inter_steps = nodes_ == 1 ? 0 : kind_ == Collective::AllReduce ? 2 * (nodes_ - 1) : nodes_ - 1;
  const double volume = static_cast<double>(nsteps) / nn * bytes;  // what each rank's link carries
  out.seconds = std::numeric_limits<double>::infinity();
  for (int p = 0; p < 3; ++p) {
    // LL128 only where the node's GPUs talk over NVLink (NCCL's default protocol enable).
    if (p == 1 && intra_ != kNvlink) continue;
    const double eff = p == 0 ? 0.5 : p == 1 ? 120.0 / 128.0 : 1.0;
    const double inter_us = kHwLatUs[kNet][kRing][p] + net_latency_us_ * (p == 2 ? 2.0 : 1.0);
    const double lat_us = kBaseLatUs[kRing][p] + static_cast<double>(nsteps - inter_steps) * kHwLatUs[intra_][kRing][p] +
                          static_cast<double>(inter_steps) * inter_us;
    const double t = lat_us * 1e-6 + volume / (ring_bus_bytes_per_s_ * eff);
    if (t < out.seconds) {
      out.seconds = t;
      out.algorithm = "ring";
      out.protocol = kProtocol[p];
      out.latency_s = lat_us * 1e-6;
      out.bus_bytes_per_s = ring_bus_bytes_per_s_ * eff;
      out.bottleneck = ring_bottleneck_;
      out.sharing = ring_sharing_;
    }
  }
  if (kind_ == Collective::AllReduce && nodes_ > 1) {
    // A node's NICs carry the buffer once each way with two nodes and twice with more (each node
    // is an inner node of one tree and a leaf of the other); the chain carries it up and down.
    const double inter_bytes = nodes_ == 2 ? bytes : 2 * bytes;
    const double t_bw = std::max(inter_bytes / tree_nic_bytes_per_s_, ppn_ > 1 ? 2 * bytes / tree_chain_bytes_per_s_ : 0.0);
    const double log_nodes = std::floor(std::log2(static_cast<double>(nodes_)));
    for (int p = 0; p < 3; ++p) {
      if (p == 1 && intra_ != kNvlink) continue;
      // NCCL's tree efficiencies: Simple 0.92, LL 1/3.8, LL128 120/128 between nodes.
      const double eff = p == 0 ? 1.0 / 3.8 : p == 1 ? 120.0 / 128.0 : 0.92;
      const double inter_us = kHwLatUs[kNet][kTree][p] + net_latency_us_ * (p == 2 ? 2.0 : 1.0);
      const double lat_us =
          kBaseLatUs[kTree][p] + 2 * (static_cast<double>(ppn_ - 1) * kHwLatUs[intra_][kTree][p] + log_nodes * inter_us);
      const double t = lat_us * 1e-6 + t_bw / eff;
      if (t < out.seconds) {
        out.seconds = t;
        out.algorithm = "tree";
        out.protocol = kProtocol[p];
        out.latency_s = lat_us * 1e-6;
        out.bus_bytes_per_s = 2 * (nn - 1) / nn * bytes / (t_bw / eff);
        out.bottleneck = -1;
        out.sharing = 0;
      }
    }
  }
  return out;
}

CollectivePlan CollectivePlan::resized(std::int64_t n, std::int64_t nodes) const {
  CollectivePlan p = *this;
  if (kind_ == Collective::AllToAll || kind_ == Collective::SendRecv)
    throw std::invalid_argument("a direct pattern's plan cannot be resized");
  p.n_ = std::max<std::int64_t>(1, n);
  p.nodes_ = std::max<std::int64_t>(1, nodes);
  return p;
}

CollectiveTime collective(const Fabric& fabric, Collective kind, std::span<const std::vector<std::int64_t>> groups,
                          double bytes) {
  return CollectivePlan(fabric, kind, groups).time(bytes);
}

}  // namespace ringsim::models::transport
