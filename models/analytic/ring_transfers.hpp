// The transfer each round of a program's ring overlaps, as the lock-step model prices it (the
// implementation's backward protocol, a double ring's inner hops): the analytic model's rounds and
// the simulator's compute beside NCCL's kernel (CostModel::beside_comm_s) read the same figures.
#pragma once

#include <cstdint>
#include <vector>

#include "models/program/collective_cost.hpp"
#include "models/program/program.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

// A double ring's rounds overlap their inner hops (and the outer dK/dV at a window's start); the
// outer K/V transfer overlaps a whole window and is not charged to any round's compute.
struct RingRoundTransfers {
  std::vector<double> fwd, bwd;    // seconds per round: what the round's compute overlaps
  bool group_spans_nodes = false;  // the ring's communicator reaches another node
  bool double_ring = false;        // rounds grouped in windows (prog.window < rounds)
  // Transfers no round's compute overlaps: a single ring's dK/dV walking home after the last
  // round (the protocol's dkv_home_hop, else 0); a double ring's dK/dV around the window after
  // its last inner step, its next window's K/V over the outer hop (overlapping the whole window)
  // and the accumulators' final outer hop.
  double home_s = 0, window_dkv_s = 0, outer_kv_s = 0, outer_dkv_s = 0;
};

[[nodiscard]] RankPlacement placement_of(const ResolvedScenario& s);
// Whether the ring's (inner) hops leave their node: the hop type a round's transfer pays.
[[nodiscard]] bool ring_inter(const ResolvedScenario& s, const Program& prog);
[[nodiscard]] RingRoundTransfers ring_round_transfers(const ResolvedScenario& s, const Program& prog);

}  // namespace ringsim::models
