#include "models/families/families.hpp"

#include <array>

namespace ringsim::models {

namespace {

// The tile loop's costs (CostModel::attention_fwd_s / attention_bwd_s), the per-round reshapes
// (round_memory_s), and the sparse kernel's work for the index masks the loop also runs.
constexpr std::array<std::string_view, 9> kBlockwiseParameters{
    "masked_tile_penalty",
    "skipped_tile_cost",
    "masked_tile_s",
    "skipped_tile_s",
    "attention_bwd_factor",
    "round_bytes_per_element",
    "sparse_kernel_efficiency",
    "sparse_prep_bytes_per_element",
    "hash_sort_bytes_per_token",
};

// A loop over the block's tiles that skips fully masked ones: the Striped Attention paper's JAX
// blockwise kernel (lax.cond per key chunk), SCFA's Triton kernels (key-tile ranges from the
// index vectors) and ringsim's own tile-schedule kernel. Every visited tile costs its padded
// FLOPs at the profile's attention efficiency, partly masked and skipped tiles what the profile
// says (CostModel::attention_fwd_s / attention_bwd_s): the block's geometry beyond its tile
// counts does not matter.
class BlockwiseCost final : public AttentionCost {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "blockwise"; }
  [[nodiscard]] std::span<const std::string_view> own_parameters() const noexcept override {
    return kBlockwiseParameters;
  }
  // CostModel's tile time is linear in the tile counts and areas of a block with visited tiles;
  // the per-round reshape term (round_memory_s) is one per call, which the packed model times
  // once per (position, round) block as predict does.
  [[nodiscard]] bool additive() const noexcept override { return true; }
  [[nodiscard]] RoundCost block(const ResolvedScenario& s, std::int64_t, std::int64_t,
                                const BlockStats& b) const override {
    // Each round also reshapes the whole block (Profile::round_bytes_per_element), whatever it visits.
    const double round = s.cost->round_memory_s(s.layout->block());
    const double bwd_round = s.profile.recomputes_attention() ? 2 * round : round;
    return {s.cost->attention_fwd_s(b) + round, s.cost->attention_bwd_s(b) + bwd_round, b.tiles_visited * s.spec.batch};
  }
  // The call's tiles at the scenario's tile shape, timed as a block; CostModel counts a tile once
  // for the device's heads and batch, so a call of other heads or batch scales by the ratio.
  [[nodiscard]] RoundCost call(const ResolvedScenario& s, const AttentionCall& c) const override {
    const BlockStats b = call_tiles(c, s.tile);
    const double scale = static_cast<double>(c.heads * c.batch) /
                         static_cast<double>(s.cost->heads_per_device() * s.spec.batch);
    const double round = s.cost->round_memory_s(c.q_len);
    const double bwd_round = s.profile.recomputes_attention() ? 2 * round : round;
    return {(s.cost->attention_fwd_s(b) + round) * scale, (s.cost->attention_bwd_s(b) + bwd_round) * scale,
            b.tiles_visited * c.batch};
  }
};

}  // namespace

std::shared_ptr<const AttentionCost> make_blockwise_cost() {
  static const auto one = std::make_shared<const BlockwiseCost>();  // stateless: one for all scenarios
  return one;
}

}  // namespace ringsim::models
