#pragma once
// A context-parallel strategy: how the sp devices of a context-parallel group share one
// sequence's attention (which device holds which queries, how keys and values reach it). The
// strategy is an axis of the scenario (`--cp`, the `cp` column): parsed and checked here; the
// attention program (models/program/program.hpp) turns it into stages that both solvers run.
//
//   ring            sp rounds, K/V blocks passed to the next device each round (Ring Attention;
//                   shared/background/striped-attention.md)
//   allgather       K/V all-gathered, then each device attends its own queries to every key it
//                   needs; dK/dV reduce-scattered in the backward (Llama 3 paper 3.3.2)
//   ulysses         all-to-all of Q, K, V: heads scattered, sequence gathered; full-sequence
//                   attention on sp-th of the heads; all-to-all of the output (DeepSpeed Ulysses)
//   usp:UxR         Ulysses inside groups of U ranks, a ring across R groups (USP / YunChang;
//                   TE "a2a+p2p"); U x R = sp. Ulysses groups are consecutive ranks (on the fast
//                   links) unless `:ring-inner` puts the rings there instead
//   double-ring:W   an inner ring inside windows of W consecutive ranks, an outer ring across
//                   windows (LoongTrain / InternEvo)
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::models {

struct ModelConfig;

enum class StrategyKind { Ring, AllGather, Ulysses, Hybrid, DoubleRing };

// Which sub-groups sit on consecutive ranks (and so, with tensor-parallel groups inside a node,
// on the fast links).
enum class GroupPlacement { UlyssesInner, RingInner };

// Groups of `size` context-parallel ranks whose members are `stride` ranks apart: the group of
// rank j holds base(j) + m * stride for m in [0, size). Consecutive groups (stride 1) and the
// strided groups across them partition 0..sp-1 together.
struct RankGroups {
  std::int64_t size = 1;
  std::int64_t stride = 1;
  [[nodiscard]] std::int64_t member(std::int64_t rank) const noexcept { return (rank / stride) % size; }
  [[nodiscard]] std::int64_t base(std::int64_t rank) const noexcept { return rank - member(rank) * stride; }
  [[nodiscard]] std::int64_t rank(std::int64_t any_rank_of_group, std::int64_t m) const noexcept {
    return base(any_rank_of_group) + m * stride;
  }
  friend bool operator==(const RankGroups&, const RankGroups&) = default;
};

// Heads one device attends with after Ulysses' all-to-all, per tensor-parallel rank.
struct UlyssesHeads {
  std::int64_t q_heads = 0;        // query heads per device
  std::int64_t kv_heads = 0;       // KV heads per device (1 when replicated)
  std::int64_t kv_replication = 1; // how often each KV head is sent: 1, or U / (KV heads per tp rank)
};

struct Strategy {
  StrategyKind kind = StrategyKind::Ring;
  std::string spec = "ring";  // as written
  std::int64_t ulysses = 0;   // usp: U as written (ulysses: the whole group, sp)
  std::int64_t ring = 0;      // usp: R as written
  std::int64_t window = 0;    // double-ring: W
  GroupPlacement placement = GroupPlacement::UlyssesInner;

  // Throws InputError (field "cp") for an unknown or malformed strategy, naming the known ones.
  [[nodiscard]] static Strategy parse(std::string_view spec);
  [[nodiscard]] static std::vector<std::string> known();
  // The families implementations list: ring, allgather, ulysses, usp, double-ring.
  [[nodiscard]] static const std::vector<std::string>& families();
  // Whether a family's program has a ring stage (ring, usp, double-ring).
  [[nodiscard]] static bool family_has_ring(std::string_view family) noexcept;
  // This strategy's family (one of families(); all-gather and hybrid are other spellings).
  [[nodiscard]] const std::string& family_name() const noexcept;
  [[nodiscard]] const std::string& text() const noexcept { return spec; }
  friend bool operator==(const Strategy& a, const Strategy& b) noexcept { return a.spec == b.spec; }

  // Ulysses and ring degrees of a group of sp ranks (ring: 1 x sp, ulysses: sp x 1, allgather:
  // 1 x 1 with sp all-gather members, double ring: 1 x sp).
  [[nodiscard]] std::int64_t ulysses_degree(std::int64_t sp) const noexcept;
  [[nodiscard]] std::int64_t ring_degree(std::int64_t sp) const noexcept;
  [[nodiscard]] bool has_ring() const noexcept {
    return kind == StrategyKind::Ring || kind == StrategyKind::Hybrid || kind == StrategyKind::DoubleRing;
  }
  [[nodiscard]] bool has_ulysses() const noexcept { return kind == StrategyKind::Ulysses || kind == StrategyKind::Hybrid; }
  // The all-to-all groups (U ranks) and the rings (R positions) over sp ranks.
  [[nodiscard]] RankGroups ulysses_groups(std::int64_t sp) const noexcept;
  [[nodiscard]] RankGroups ring_groups(std::int64_t sp) const noexcept;

  // InputError (field "cp") when the strategy cannot split this mesh and model: U x R != sp, a
  // Ulysses degree that does not divide the query heads per tensor-parallel rank, or (without
  // KV-head replication) the KV heads, a window that does not divide sp. `impl` names the
  // implementation in the message.
  void check(const ModelConfig& model, std::int64_t mp, std::int64_t sp, bool kv_head_replication,
             const std::string& impl) const;
  // The part of check() that needs only the group size: U x R == sp for a hybrid, W divides sp
  // for a double ring. Every command checks a strategy against its devices through this one
  // function (check() calls it; plan-docs calls it for the strategies a user names).
  void check_shape(std::int64_t sp) const;
  [[nodiscard]] UlyssesHeads ulysses_heads(const ModelConfig& model, std::int64_t mp, std::int64_t sp) const;
};

// Each of `texts` parsed (lists of --cp and of request files).
[[nodiscard]] std::vector<Strategy> parse_strategies(const std::vector<std::string>& texts);

}  // namespace ringsim::models
