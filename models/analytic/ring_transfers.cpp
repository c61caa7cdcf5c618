#include "models/analytic/ring_transfers.hpp"

#include <algorithm>

#include "models/implementations/protocol.hpp"

namespace ringsim::models {

RankPlacement placement_of(const ResolvedScenario& s) {
  return {s.spec.sp, s.spec.mp, std::max<std::int64_t>(1, s.hardware.devices_per_node)};
}

bool ring_inter(const ResolvedScenario& s, const Program& prog) {
  const bool double_ring = prog.window > 0 && prog.window < s.ring_scenario().workload->rounds();
  const RingHops hops = ring_hops(prog.rings, prog.window, placement_of(s));
  return double_ring ? hops.inner_inter : (prog.rings.stride == 1 ? s.ring_crosses_nodes() : hops.inner_inter);
}

RingRoundTransfers ring_round_transfers(const ResolvedScenario& s, const Program& prog) {
  const ResolvedScenario& rs = s.ring_scenario();
  const auto& w = *rs.workload;
  const auto& cost = *s.cost;
  const auto& proto = prog.protocol;
  const std::int64_t n = w.rounds();
  const bool double_ring = prog.window > 0 && prog.window < n;
  const RingHops hops = ring_hops(prog.rings, prog.window, placement_of(s));
  const bool inter = ring_inter(s, prog);
  RingRoundTransfers x;
  x.group_spans_nodes = inter || hops.outer_inter || s.ring_crosses_nodes();
  x.double_ring = double_ring;
  x.fwd.assign(static_cast<std::size_t>(n), 0.0);
  x.bwd.assign(static_cast<std::size_t>(n), 0.0);
  const double kv_bytes = static_cast<double>(w.kv_block_bytes());
  const double dkv_bytes = static_cast<double>(dkv_block_bytes(s, w.kv_block_bytes()));
  const double t_kv = cost.ring_transfer_s(kv_bytes, inter);
  const double t_kv_dkv = cost.ring_transfer_s(kv_bytes + dkv_bytes, inter);
  const double t_dkv = n > 1 ? cost.ring_transfer_s(dkv_bytes, inter) : 0.0;
  const double t_outer_dkv = double_ring ? cost.ring_transfer_s(dkv_bytes, hops.outer_inter) : 0.0;
  x.home_s = !double_ring && proto.dkv_home_hop ? t_dkv : 0.0;
  x.window_dkv_s = double_ring && prog.window > 1 ? t_dkv : 0.0;
  x.outer_kv_s = double_ring ? cost.ring_transfer_s(kv_bytes, hops.outer_inter) : 0.0;
  x.outer_dkv_s = t_outer_dkv;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const bool last = i + 1 == n;
    if (!double_ring) {
      // Forward: the last round sends nothing. Backward, by the implementation's protocol
      // (models/implementations/protocol.hpp): concurrent K/V and dK/dV share the hop (both cross by
      // t(K/V + dK/dV)); ordered messages queue one behind the other (two latencies); a fused
      // message carries both. Round 0 moves only K/V and the last only dK/dV, except that the
      // concurrent protocol keeps ringsim's earlier closed form (K/V + dK/dV every round, its last
      // round's compute not overlapped).
      x.fwd[k] = last ? 0 : t_kv;
      double tb = t_kv_dkv;
      if (proto.backward == BackwardMessages::Ordered) tb = t_dkv + t_kv;
      if (proto.backward != BackwardMessages::Concurrent) tb = i == 0 ? t_kv : last ? t_dkv : tb;
      x.bwd[k] = last && proto.backward == BackwardMessages::Concurrent ? 0.0 : tb;
    } else {
      // Double ring (InternEvo): inner rounds of a window pass K/V (and the accumulators) around
      // the window; the outer hop's transfer overlaps the whole window (analytic.cpp).
      const std::int64_t wsz = prog.window, step = i % wsz, win = i / wsz;
      const bool last_step = step + 1 == wsz;
      x.fwd[k] = wsz > 1 && !last_step ? t_kv : 0.0;
      double tb = wsz > 1 ? (last_step ? t_dkv : (step == 0 ? t_kv : t_kv_dkv)) : 0.0;
      if (step == 0 && win > 0) tb = std::max(tb, t_outer_dkv);
      x.bwd[k] = tb;
    }
  }
  return x;
}

}  // namespace ringsim::models
