#include "models/families/families.hpp"

#include <array>

#include <algorithm>

#include "models/families/kernel_time.hpp"
#include "models/io/error.hpp"

namespace ringsim::models {

namespace {

// The tile loop's costs (CostModel::attention_fwd_s / attention_bwd_s) and the sparse kernel's
// efficiency and gathers; the bucket scans are timed from the hardware's memory latency.
constexpr std::array<std::string_view, 8> kScfaParameters{
    "masked_tile_penalty",
    "skipped_tile_cost",
    "masked_tile_s",
    "skipped_tile_s",
    "attention_bwd_factor",
    "sparse_kernel_efficiency",
    "sparse_prep_bytes_per_element",
    "hash_sort_bytes_per_token",
};

// SCFA's Triton kernels (epfml/dynamic-sparse-flash-attention, hsparse_attn.py, qksparse_attn.py):
// the tile loop of the blockwise family, plus the work that does not shrink with the number of
// buckets or the drop rate. For every query tile the forward first scans the key tiles' bucket
// ids (or compacted indices) one tile per loop step to find where its range starts and ends, and
// the backward runs one program per (batch, head) that, for every key tile in turn, scans all query
// tiles the same way: loop steps that each wait on one load, as many as the block's tiles per
// head, whatever the sparsity. The backward's compute also runs on only batch x heads programs, so
// the GPU's slots are filled in whole waves of those. Dense causal masks run as plain tiles.
class ScfaCost final : public AttentionCost {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "scfa"; }
  [[nodiscard]] std::span<const std::string_view> own_parameters() const noexcept override {
    return kScfaParameters;
  }
  [[nodiscard]] RoundCost block(const ResolvedScenario& s, std::int64_t, std::int64_t,
                                const BlockStats& b) const override {
    RoundCost r{s.cost->attention_fwd_s(b), s.cost->attention_bwd_s(b), b.tiles_visited * s.spec.batch};
    if (!s.cost->index_mask()) return r;
    add_scans(s, b, s.spec.batch, r);
    return r;
  }
  [[nodiscard]] RoundCost call(const ResolvedScenario& s, const AttentionCall& c) const override {
    const BlockStats b = call_tiles(c, s.tile);
    const double scale = static_cast<double>(c.heads * c.batch) /
                         static_cast<double>(s.cost->heads_per_device() * s.spec.batch);
    return {s.cost->attention_fwd_s(b) * scale, s.cost->attention_bwd_s(b) * scale, b.tiles_visited * c.batch};
  }
 private:
  static void add_scans(const ResolvedScenario& s, const BlockStats& b, std::int64_t batch, RoundCost& r) {
    const auto& hw = s.hardware;
    const auto& spec = *s.impl.kernel_model;
    if (!hw.has_compute_units() || hw.memory_latency_s <= 0)
      throw InputError({}, 0, "hardware",
                       hw.name + " gives no compute_units with memory_latency_s, which SCFA's bucket-range scans need");
    const KernelRates rates = KernelRates::of(hw, s.profile);
    const double latency = hw.memory_latency_s;
    // Programs per head and slots: the forward has one per query tile, the backward one per head.
    const std::int64_t mask_heads = std::max<std::int64_t>(1, s.mask->heads());
    const std::int64_t heads = s.cost->heads_per_device();
    const std::int64_t programs_bwd = heads * batch;
    const double tiles_per_head = static_cast<double>(b.tiles_total) / static_cast<double>(mask_heads);
    const std::int64_t slots_fwd = rates.sm_count * ctas_per_sm(spec, spec.fwd_tiles.front(), rates);
    const std::int64_t slots_bwd = rates.sm_count * ctas_per_sm(spec, spec.bwd_tiles.front(), rates);
    // Forward: every query tile of every head scans every key tile; the loop steps of different
    // programs overlap, one per slot at a time.
    const double fwd_steps = tiles_per_head * static_cast<double>(heads * batch);
    r.fwd_s += fwd_steps * latency / static_cast<double>(slots_fwd);
    // Backward: each program scans all query tiles for each of its key tiles, in sequence; the
    // programs run in waves of slots_bwd.
    const double waves = static_cast<double>((programs_bwd + slots_bwd - 1) / slots_bwd);
    r.bwd_s += waves * tiles_per_head * latency;
    // ... and its compute, spread by the cost model over the whole GPU, fills only
    // programs_bwd of waves x slots_bwd slots.
    const double fill = static_cast<double>(programs_bwd) / (waves * static_cast<double>(slots_bwd));
    const double compute_bwd = s.cost->attention_bwd_s(b) - (s.profile.recomputes_attention() ? s.cost->attention_fwd_s(b) : 0.0);
    r.bwd_s += compute_bwd * (1.0 / fill - 1.0);
  }
};

}  // namespace

std::shared_ptr<const AttentionCost> make_scfa_cost() {
  static const auto one = std::make_shared<const ScfaCost>();  // stateless: one for all scenarios
  return one;
}

}  // namespace ringsim::models
