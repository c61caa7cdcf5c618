#include "models/program/collective_cost.hpp"

#include <algorithm>

#include "models/cost/cost.hpp"

namespace ringsim::models {

bool RankPlacement::crosses(std::int64_t a, std::int64_t b) const noexcept {
  for (std::int64_t k = 0; k < mp; ++k)
    if (node(a, k) != node(b, k)) return true;
  return false;
}

double collective_s(const CostModel& cost, CollectiveKind kind, RankGroups g, std::int64_t bytes,
                    const RankPlacement& pl) {
  if (g.size <= 1 || bytes <= 0) return 0;
  const auto b = static_cast<double>(bytes);
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
