#pragma once
// The seam between what a device computes and how long it takes. An implementation's kernel
// family (Implementation::kernel) turns one device's attention work in one ring round, its Q
// block against one K/V block with that block's exact tile counts, into seconds, forward and
// backward. The analytic model and the simulator take every round's compute from here, so an
// implementation changes how work is timed in one place, and the two solvers stay in agreement.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace ringsim::models {

// One device's attention in one round of one layer (no per-round ring overhead: that belongs
// to the ring protocol, Profile::round_overhead_s).
struct RoundCost {
  double fwd_s = 0;
  double bwd_s = 0;          // with the recomputed forward when the profile rematerialises blocks
  std::int64_t tiles = 0;    // tiles the kernel runs, counted once for all heads, per sequence of the batch
                             // (the simulator's tile granularity)
  // Whether the host's floor (Profile::host_*), not the GPU's work, sets fwd_s / bwd_s: the GPU
  // then idles part of the step, and NCCL's kernel beside it slows nothing the step waits for
  // (CostModel::beside_comm_s applies to GPU-bound steps only).
  bool fwd_host_bound = false, bwd_host_bound = false;

  // Each pass: the GPU's work (kernels, merges) or the host's time to issue it, whichever is
  // longer; the backward with the recomputed forward after it.
  void set_floored(double fwd_work_s, double fwd_host_s, double bwd_work_s, double bwd_host_s, bool recompute) noexcept {
    fwd_s = fwd_work_s > fwd_host_s ? fwd_work_s : fwd_host_s;
    bwd_s = bwd_work_s > bwd_host_s ? bwd_work_s : bwd_host_s;
    fwd_host_bound = fwd_host_s > fwd_work_s;
    bwd_host_bound = bwd_host_s > bwd_work_s;
    if (recompute) {
      bwd_s += fwd_s;
      bwd_host_bound = bwd_host_bound && fwd_host_bound;
    }
  }
};

// One attention kernel call as a library issues it: q_len queries against k_len keys, each of
// `heads` query heads (sharing kv_heads K/V heads), for `batch` sequences. Causal calls allow key
// j for query i iff j <= i + diagonal (0: the usual square causal call; q_len - k_len: aligned
// bottom-right, as FlashAttention >= 2.1 does for q_len != k_len); full calls allow every pair.
struct AttentionCall {
  std::int64_t q_len = 0;
  std::int64_t k_len = 0;
  bool causal = false;
  std::int64_t diagonal = 0;
  std::int64_t heads = 1;
  std::int64_t kv_heads = 1;
  std::int64_t batch = 1;
  // A piece of a varlen call over packed documents (flash_attn_varlen_func): its forward never
  // splits the keys (FlashAttention-2 splits a varlen call only for decoding).
  bool varlen = false;
};

// The exact tile counts of a call at a tile shape (one head): visited tiles are those holding
// an allowed pair. O(tile rows).
[[nodiscard]] BlockStats call_tiles(const AttentionCall& c, TileShape tile);
// The same call's visited tiles and allowed pairs in closed form (O(log rows)): what call_tiles
// gives, for the callers that need only these.
[[nodiscard]] std::int64_t call_tiles_visited(const AttentionCall& c, TileShape tile);
[[nodiscard]] std::int64_t call_allowed_pairs(const AttentionCall& c);

class AttentionCost {
 public:
  virtual ~AttentionCost() = default;
  [[nodiscard]] virtual std::string_view family() const noexcept = 0;
  // The profile parameters this family reads besides the common ones
  // (models/cost/profile_params.hpp): a profile of an implementation running it holds these.
  [[nodiscard]] virtual std::span<const std::string_view> own_parameters() const noexcept = 0;
  // The Q block of ring position q_device against the K/V block of position k_device, whose
  // counts (at the scenario's tile, over all mask heads) are `b`.
  [[nodiscard]] virtual RoundCost block(const ResolvedScenario& s, std::int64_t q_device, std::int64_t k_device,
                                        const BlockStats& b) const = 0;
  // One kernel call on one device, whatever the strategy that issues it (all-gather, Ulysses,
  // a ring library's per-step calls), with the scenario's head dim, precision and profile.
  [[nodiscard]] virtual RoundCost call(const ResolvedScenario& s, const AttentionCall& c) const = 0;
  // One rank's calls of a pass (an all-gather rank's pieces, Ulysses' calls per document
  // length). By default their sum; a family whose varlen pieces are one kernel launch (flash:
  // flash_attn_varlen_func over every piece at once) times them as that launch.
  [[nodiscard]] virtual RoundCost calls(const ResolvedScenario& s, std::span<const AttentionCall> list) const;
  // Whether the time of several blocks with work is the time of one block of their summed counts
  // (a family linear in the counts). Planning over many packed batches (models/analytic/packed_model.hpp)
  // times a round's or a rank's work from its sums and needs it.
  [[nodiscard]] virtual bool additive() const noexcept { return false; }
  // Whether the scenario's tile leaves this implementation's times alone under this strategy,
  // mask family and layout family: its kernel runs the tiles its own launch code picks
  // (FlashAttention, cuDNN), so the asked tile changes only the counts reported beside the times
  // (tiles visited, imbalance) and the workspace's upper bound. A planner then times the
  // implementation at its own tile only (planning/prefilter.hpp).
  [[nodiscard]] virtual bool kernel_picks_tiles(const Implementation& /*im*/, const Strategy& /*strategy*/,
                                                std::string_view /*mask_family*/,
                                                std::string_view /*layout_family*/) const noexcept {
    return false;
  }
  // Whether block()'s times depend only on the step class of (q_device, k_device) in this
  // scenario (a ring library's fixed call shapes per class), not on the block's counts: a
  // prediction then times each class once (the flash family with closed-form step shapes).
  [[nodiscard]] virtual bool times_by_step_class(const ResolvedScenario&) const { return false; }
  // The first rank whose blocks of step class `cls` cost otherwise than rank 0's of the same
  // counts (block_variant 1 from there on), or -1 when no rank does.
  [[nodiscard]] virtual std::int64_t variant_from_rank(const ResolvedScenario&, StepClass /*cls*/) const { return -1; }
  // With times_by_step_class: 0, or 1 where device q_device's block of this class costs what
  // rank 0's does not (a library's code path that depends on the rank: q_device at or past
  // variant_from_rank); the analytic model and the simulator key their per-class times by
  // (class, variant).
  [[nodiscard]] int block_variant(const ResolvedScenario& s, std::int64_t q_device, std::int64_t k_device) const {
    return variant_at(variant_from_rank(s, step_class(q_device, k_device)), q_device);
  }
  // The variant of device q_device's block given its class's variant_from_rank `from`.
  [[nodiscard]] static int variant_at(std::int64_t from, std::int64_t q_device) noexcept {
    return from >= 0 && q_device >= from ? 1 : 0;
  }
};

// The kernel family named by an implementation; InputError (field "kernel") naming the known ones.
[[nodiscard]] std::shared_ptr<const AttentionCost> make_attention_cost(std::string_view family);
[[nodiscard]] std::vector<std::string> attention_cost_families();

// The cost of round `round` of the scenario's ring over its devices: the busiest device's forward
// and backward (a lock-step round lasts that long) and the means. Visits the workload's block
// classes, not every device, so it stays cheap at 65536 devices.
struct RoundCostSummary {
  double fwd_max_s = 0, bwd_max_s = 0;
  double fwd_mean_s = 0, bwd_mean_s = 0;
};
[[nodiscard]] RoundCostSummary round_cost(const ResolvedScenario& s, std::int64_t round);

}  // namespace ringsim::models
