#include "models/program/collective_cost.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "models/cost/cost.hpp"

namespace ringsim::models {

bool RankPlacement::crosses(std::int64_t a, std::int64_t b) const noexcept {
  for (std::int64_t k = 0; k < mp; ++k)
    if (node(a, k) != node(b, k)) return true;
  return false;
}

namespace {

// NCCL's collective over the fabric, every group and tensor-parallel rank at once; nccl-tests
// counts an all-gather by its output and an all-to-all by its whole send buffer, g shards.
const transport::CollectivePlan& plan_of(const transport::ScenarioTransport& t, CollectiveKind kind, RankGroups g,
                                         const RankPlacement& pl) {
  const auto nccl = kind == CollectiveKind::AllGather       ? transport::Collective::AllGather
                    : kind == CollectiveKind::ReduceScatter ? transport::Collective::ReduceScatter
                                                            : transport::Collective::AllToAll;
  std::string key = "cp|";
  for (const auto x : {static_cast<std::int64_t>(kind), g.size, g.stride, pl.mp, pl.sp}) {
    key += std::to_string(x);
    key += '|';
  }
  return t.plan(key, nccl, [&] {
    std::vector<std::vector<std::int64_t>> groups;
    for (std::int64_t j = 0; j < pl.sp; ++j) {
      if (g.member(j) != 0) continue;
      for (std::int64_t k = 0; k < pl.mp; ++k) {
        std::vector<std::int64_t> devices;
        for (std::int64_t m = 0; m < g.size; ++m) devices.push_back(g.rank(j, m) * pl.mp + k);
        groups.push_back(std::move(devices));
      }
    }
    return groups;
  });
}

// Whether the placement is the scenario's (its transport's devices and node size); another
// placement, which a caller may ask about, gets the closed forms below.
bool on_fabric(const transport::ScenarioTransport& t, const RankPlacement& pl) {
  return pl.sp * pl.mp <= t.devices() && pl.devices_per_node == t.fabric().machine().gpus;
}

}  // namespace

bool on_transport(const CostModel& cost, const RankPlacement& pl) {
  const auto* t = cost.transport();
  return t && on_fabric(*t, pl);
}

std::string collective_bound(const CostModel& cost, CollectiveKind kind, RankGroups g, std::int64_t bytes,
                             const RankPlacement& pl) {
  const auto* t = cost.transport();
  if (!t || !on_fabric(*t, pl) || g.size <= 1 || bytes <= 0) return {};
  const auto c = plan_of(*t, kind, g, pl).time(static_cast<double>(bytes) * static_cast<double>(g.size));
  std::string out = c.algorithm + ", " + c.protocol;
  if (const auto b = transport::describe_bound(t->fabric(), c.bottleneck, c.sharing); !b.empty()) out += ": " + b;
  return out;
}

double collective_s(const CostModel& cost, CollectiveKind kind, RankGroups g, std::int64_t bytes,
                    const RankPlacement& pl) {
  if (g.size <= 1 || bytes <= 0) return 0;
  const auto b = static_cast<double>(bytes);
  if (const auto* t = cost.transport(); t && on_fabric(*t, pl))
    return plan_of(*t, kind, g, pl).time(b * static_cast<double>(g.size)).seconds;
  double worst = 0;
  if (kind == CollectiveKind::AllToAll) {
    for (std::int64_t j = 0; j < pl.sp; ++j)
      for (std::int64_t k = 0; k < pl.mp; ++k) {
        std::int64_t intra = 0, inter = 0;
        for (std::int64_t m = 0; m < g.size; ++m) {
          const std::int64_t peer = g.rank(j, m);
          if (peer == j) continue;
          (pl.node(peer, k) == pl.node(j, k) ? intra : inter) += 1;
        }
        if (intra > 0) worst = std::max(worst, cost.transfer_s(static_cast<double>(intra) * b, false));
        if (inter > 0) worst = std::max(worst, cost.transfer_s(static_cast<double>(inter) * b, true));
      }
    return worst;
  }
  // Ring all-gather / reduce-scatter: every step is as slow as its slowest hop.
  for (std::int64_t j = 0; j < pl.sp; ++j) {
    const std::int64_t next = g.rank(j, (g.member(j) + 1) % g.size);
    worst = std::max(worst, cost.transfer_s(b, pl.crosses(j, next)));
  }
  return static_cast<double>(g.size - 1) * worst;
}

double collective_host_s(const Profile& p, RankGroups g) noexcept {
  return p.host_collective_s + static_cast<double>(std::max<std::int64_t>(g.size - 1, 0)) * p.host_collective_peer_s;
}

RingHops ring_hops(RankGroups rings, std::int64_t window, const RankPlacement& pl) {
  RingHops h;
  if (rings.size <= 1) return h;
  const std::int64_t w = window > 0 ? window : rings.size;
  const std::int64_t windows = rings.size / w;
  for (std::int64_t j = 0; j < pl.sp; ++j) {
    const std::int64_t p = rings.member(j);
    const std::int64_t inner = (p / w) * w + (p % w + 1) % w;
    if (w > 1) h.inner_inter = h.inner_inter || pl.crosses(j, rings.rank(j, inner));
    if (windows > 1) {
      const std::int64_t outer = ((p / w + 1) % windows) * w + p % w;
      h.outer_inter = h.outer_inter || pl.crosses(j, rings.rank(j, outer));
    }
  }
  return h;
}

}  // namespace ringsim::models
