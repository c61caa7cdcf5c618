#pragma once
// The attention program: what one layer's attention does on every device of a context-parallel
// group, forward and backward, as a list of stages: a ring pass, collectives (all-gather,
// reduce-scatter, all-to-all) among groups of ranks, and local compute (the kernel calls of a
// non-ring strategy, timed through AttentionCost::call). A stage may run together with the next
// one (a slice's kernel and the next slice's all-gather). The strategy builds it once from the
// scenario (build_program); the analytic model (models/analytic/analytic.cpp) and the simulator
// (sim/step.cpp) both run it, so a strategy enters as one builder here, not as branches in
// the solvers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/families/attention_cost.hpp"
#include "models/implementations/protocol.hpp"
#include "models/implementations/strategy.hpp"

namespace ringsim::models {

struct ResolvedScenario;

enum class StageKind : std::uint8_t { Compute, Collective, Ring };
enum class CollectiveKind : std::uint8_t { AllGather, ReduceScatter, AllToAll };

struct Stage {
  StageKind kind = StageKind::Compute;
  std::string label;
  // Collective: the groups that take part together and the bytes per member. AllGather: each
  // member's shard (it receives g - 1 of them); ReduceScatter: each member's output shard (it
  // sends g - 1 partial shards); AllToAll: what each member sends to each other member.
  CollectiveKind collective = CollectiveKind::AllGather;
  RankGroups groups;
  std::int64_t bytes = 0;
  // Compute: Program::compute[table] gives the seconds of every rank.
  std::size_t table = 0;
  bool with_next = false;  // runs at the same time as the next stage; the pair ends when both have
};

// One compute stage's work, per context-parallel rank: the kernel calls it issues (with their
// heads and batch), timed through AttentionCost::call when a solver runs the program, so that
// the seconds always follow the scenario's current cost model.
struct ComputeTable {
  bool backward = false;
  std::vector<std::vector<AttentionCall>> lists;  // distinct call lists
  std::vector<std::uint32_t> list_of;             // per rank: its list
  std::vector<std::int64_t> pairs;                // per rank: allowed (query, key) pairs, one head and sequence
};

// Seconds and kernel tiles of every rank of a compute table.
struct TableCost {
  std::vector<double> seconds;
  std::vector<std::int64_t> tiles;
};
[[nodiscard]] TableCost table_cost(const ResolvedScenario& s, const ComputeTable& table);

struct Program {
  StrategyKind kind = StrategyKind::Ring;
  std::vector<Stage> fwd, bwd;  // one layer
  std::vector<ComputeTable> compute;
  // The ring stage's rings: R positions, members `rings.stride` ranks apart (ring and double
  // ring: all sp ranks; usp: R ranks, one ring per Ulysses rank). Double ring: inner rings of
  // `window` consecutive positions, an outer ring across windows (0: one ring).
  RankGroups rings;
  std::int64_t window = 0;
  Protocol protocol;
  // Bytes per device the strategy holds beyond a ring's two K/V buffers: the gathered K/V and
  // dK/dV (all-gather), full-sequence Q, K, V and output of its heads (Ulysses).
  double buffer_bytes = 0;
  // Bytes each rank sends per layer, forward and backward (closed form; the simulator's link
  // counters must add up to it).
  std::int64_t sent_bytes_fwd = 0, sent_bytes_bwd = 0;

  [[nodiscard]] bool has_ring() const noexcept;
  // Ring position (in 0..R-1) whose K/V block position `position` holds in round `round`.
  [[nodiscard]] std::int64_t kv_position(std::int64_t position, std::int64_t round) const noexcept;
};

// Bytes of one device's dK/dV accumulator on the wire: its K/V block's bytes at the dK/dV dtype
// (the implementation's protocol, else the profile's).
[[nodiscard]] std::int64_t dkv_block_bytes(const ResolvedScenario& s, std::int64_t kv_block_bytes);

// Allowed pairs (one head, one sequence) each device computes in one layer's forward pass: per
// ring position (usp: per position of the ring part; every position meets every K/V block once,
// whatever the schedule) or, without a ring, per context-parallel rank from its kernel calls.
[[nodiscard]] std::vector<std::int64_t> device_pairs(const ResolvedScenario& s);

// The program of a resolved scenario's strategy (its implementation's protocol included).
// InputError for a mask the strategy cannot run (index-based masks outside the ring).
[[nodiscard]] Program build_program(const ResolvedScenario& s);

// One device's kernel calls under the all-gather strategy: per maximal run of its queries that
// are consecutive positions of one document, the run against every key of the document up to
// its end, causal and aligned bottom-right (TE all_gather's kv range per chunk; llama3's
// local_k_slice from the document's start). Calls of the same shape are merged into one call
// of a larger batch. `doc_starts`: {0} for a causal mask; empty for a full mask.
[[nodiscard]] std::vector<AttentionCall> allgather_calls(const Layout& layout, std::int64_t rank,
                                                         const std::vector<std::int64_t>& doc_starts, bool causal);
// The full-sequence calls of a device under Ulysses: one causal call per document.
[[nodiscard]] std::vector<AttentionCall> ulysses_calls(std::int64_t n_seq, const std::vector<std::int64_t>& doc_starts,
                                                       bool causal);

}  // namespace ringsim::models
