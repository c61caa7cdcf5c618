#pragma once
// Internal to the step simulator (sim/step.cpp, sim/pass_sim.cpp): everything the engine passes
// of a step share, built once per step from the scenario and its attention program: the
// topology and placement, the phases of every layer, the per-(position, round) ring costs, the
// per-rank compute of non-ring stages, the routes of ring hops and collectives, and which of
// them are alone on their links (closed-form times).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/program/program.hpp"
#include "models/catalog/resolve.hpp"
#include "sim/collective.hpp"
#include "sim/engine.hpp"
#include "sim/ps_hops.hpp"
#include "sim/step.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim::detail {

// Other: device-local compute of a fixed duration; AllReduce: a tensor-parallel ring all-reduce
// among the mp devices that share a context-parallel rank; RingFwd/RingBwd: the program's ring
// pass; Compute: a non-ring strategy's kernels (a duration per rank); Collective: an all-gather,
// reduce-scatter or all-to-all among groups of ranks.
enum class PhaseKind : std::uint8_t { Other, AllReduce, RingFwd, RingBwd, Compute, Collective };

struct Phase {
  PhaseKind kind = PhaseKind::Other;
  Tick other_ticks = 0;          // Other: the same duration on every device
  std::int64_t chunk_bytes = 0;  // AllReduce: bytes of each of its 2 (mp - 1) steps
  std::size_t table = 0;         // Compute: StepPlan::tables index
  bool with_next = false;        // Compute: the next phase (a collective) runs at the same time
  std::size_t collective = 0;    // Collective: StepPlan::collectives index
  bool layer_end = false;        // the last phase of a layer's attention: a segment ends here
  std::string name;
};

// A run of phases ending a layer (or the trailing phases): segments with equal signatures are
// the same function of their entry times.
struct Segment {
  std::size_t begin = 0, end = 0;  // phases [begin, end)
  std::size_t signature = 0;       // index of the first segment with the same phases
};

// The routes of one group structure (groups of ranks, and how flows go among them), per group
// instance: instance (k, g) of tensor-parallel rank k and group g.
struct Channel {
  FlowPattern pattern = FlowPattern::RingSteps;
  models::RankGroups groups;
  std::int64_t groups_per_tp = 1;
  std::vector<GroupRoutes> routes;                  // per instance
  std::vector<std::vector<std::uint32_t>> members;  // per instance: simulator device indices in group order
  [[nodiscard]] std::size_t instance(std::int64_t tp, std::int64_t rank) const noexcept {
    const std::int64_t g = groups.size, s = groups.stride;
    return static_cast<std::size_t>(tp * groups_per_tp + (rank / (g * s)) * s + rank % s);
  }
};

struct CollectivePhase {
  models::CollectiveKind kind = models::CollectiveKind::AllGather;
  std::size_t channel = 0;
  std::int64_t bytes = 0;
  std::int64_t steps = 0;
  std::optional<Tick> closed_ticks;  // the whole collective, when its links carry nothing else
  Tick host_ticks = 0;                // the least it lasts: the host's work to issue it (models::collective_host_s)
};

enum class TransferKind : std::uint8_t { KV = 0, DKV = 1, TP = 2, OuterKV = 3, OuterDKV = 4, Fused = 5 };

struct StepPlan {
  StepPlan(const models::ResolvedScenario& scenario, const StepOptions& options);

  // Simulator device index dev = k * sp + j (tensor-parallel rank k, context-parallel rank j).
  [[nodiscard]] std::int64_t tp_of(std::int64_t dev) const noexcept { return dev / sp; }
  [[nodiscard]] std::int64_t rank_of(std::int64_t dev) const noexcept { return dev % sp; }
  [[nodiscard]] std::int64_t pos_of(std::int64_t dev) const { return pos[static_cast<std::size_t>(dev)]; }
  [[nodiscard]] std::int64_t succ_of(std::int64_t dev) const { return succ[static_cast<std::size_t>(dev)]; }
  [[nodiscard]] std::int64_t pred_of(std::int64_t dev) const { return pred[static_cast<std::size_t>(dev)]; }
  [[nodiscard]] std::int64_t outer_succ_of(std::int64_t dev) const { return outer_succ[static_cast<std::size_t>(dev)]; }
  [[nodiscard]] std::int64_t outer_pred_of(std::int64_t dev) const { return outer_pred[static_cast<std::size_t>(dev)]; }
  [[nodiscard]] std::int64_t tp_next(std::int64_t dev) const { return (dev + sp) % d; }
  [[nodiscard]] std::int64_t tp_prev(std::int64_t dev) const { return (dev - sp + d) % d; }
  [[nodiscard]] bool double_ring() const noexcept { return window > 0 && window < n; }

  const models::ResolvedScenario& s;
  const StepOptions& o;
  const models::Program& prog;
  Engine clock;  // tick conversions only: every pass runs its own engine
  std::int64_t mp = 1, sp = 1, d = 1;
  std::int64_t n = 1;       // ring positions = ring rounds (1 without a ring)
  std::int64_t window = 0;  // double ring: positions per window
  std::int64_t rounds = 1;  // matrix columns: ring rounds, or 1 for non-ring programs
  models::BackwardMessages backward_messages = models::BackwardMessages::Concurrent;
  bool dkv_home_hop = true;
  std::vector<std::int64_t> pos, succ, pred, outer_succ, outer_pred;  // per device
  std::unique_ptr<Topology> topology;
  std::unique_ptr<RingEmbedding> embedding;  // placement: physical device of (k, j)
  std::vector<Phase> phases;
  std::vector<Segment> segments;
  // The cost of a device-round of the ring: few distinct blocks (the workload's classes), so a
  // small table and a per-cell index into it [position * n + round].
  struct RoundCost {
    Tick fwd = 0, bwd = 0;
    std::int64_t tiles = 0;
  };
  std::vector<RoundCost> costs;
  std::vector<std::uint32_t> cost_of;
  [[nodiscard]] const RoundCost& cost(std::int64_t position, std::int64_t round) const {
    return costs[cost_of[static_cast<std::size_t>(position * n + round)]];
  }
  std::int64_t kv_bytes = 0, dkv_bytes = 0;
  // Non-ring compute: per table, per rank.
  std::vector<std::vector<Tick>> table_ticks;
  std::vector<std::vector<std::int64_t>> table_tiles;
  std::vector<Channel> channels;
  std::vector<CollectivePhase> collectives;
  // Ring hops per device (inner, and outer for a double ring): whether the hop has its links to
  // itself, its closed-form time for one K/V block, its processor-sharing parameters.
  std::vector<Route> hop_routes, outer_routes;
  std::vector<char> direct, outer_direct;
  std::vector<Tick> kv_hop_ticks, outer_kv_hop_ticks;
  std::vector<HopParams> hops;  // [0, d): inner hops; [d, 2 d): outer hops
  std::vector<double> hop_latency_s, hop_bandwidth_bytes_per_s;  // same indices
  // A lone transfer of `bytes` on hop h: the closed form (latency + bytes / narrowest link).
  [[nodiscard]] Tick lone_hop_ticks(std::size_t h, std::int64_t bytes) const {
    return clock.to_ticks(hop_latency_s[h] + static_cast<double>(bytes) / hop_bandwidth_bytes_per_s[h]);
  }
  std::vector<Route> tp_routes;  // per device: to its successor in its tensor-parallel group (mp > 1)
  bool isolated = true;  // layers cannot interact (see simulate_step)

 private:
  void build_geometry();
  void build_phases();
  void build_costs();
  void build_routes();
  std::size_t channel_for(models::CollectiveKind kind, models::RankGroups groups);
};

// What a pass did, with times relative to its origin (the earliest entry).
struct PassOutcome {
  std::vector<Tick> exit, last_end;  // per device: left the pass; last compute ended
  std::vector<Tick> wait, transfer;  // round x device cells (compute is known in advance)
  std::vector<Tick> busy;            // per device
  std::vector<std::int64_t> link_sent, link_received;
  // Per link, relative to the pass's origin: the first and last tick a flow drew bandwidth on it
  // (Network::link_first_use / link_last_use; kNeverUsed / -1 where none did).
  std::vector<Tick> link_first_use, link_last_use;
  std::int64_t events = 0, tiles = 0;
};

// Where a pass writes the Chrome trace: shared by the passes of a step.
struct TraceSink {
  std::vector<TraceSpan> spans;
  std::int64_t limit = 0;
  bool truncated = false;
};

}  // namespace ringsim::sim::detail
