#include "models/attention_cost.hpp"

#include <algorithm>

#include "models/error.hpp"

namespace ringsim::models {

namespace {

// A loop over the block's tiles that skips fully masked ones: the Striped Attention paper's JAX
// blockwise kernel (lax.cond per key chunk), SCFA's Triton kernels (key-tile ranges from the
// index vectors) and ringsim's own tile-schedule kernel. Every visited tile costs its padded
// FLOPs at the profile's attention efficiency, partly masked and skipped tiles what the profile
// says (CostModel::attention_fwd_s / attention_bwd_s): the block's geometry beyond its tile
// counts does not matter.
class BlockwiseCost final : public AttentionCost {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "blockwise"; }
  [[nodiscard]] RoundCost block(const ResolvedScenario& s, std::int64_t, std::int64_t,
                                const BlockStats& b) const override {
    return {s.cost->attention_fwd_s(b), s.cost->attention_bwd_s(b), b.tiles_visited * s.spec.batch};
  }
};

}  // namespace

std::vector<std::string> attention_cost_families() { return {"blockwise"}; }

std::shared_ptr<const AttentionCost> make_attention_cost(std::string_view family) {
  if (family == "blockwise") {
    static const auto blockwise = std::make_shared<const BlockwiseCost>();  // stateless: one for all
    return blockwise;
  }
  std::string list;
  for (const auto& f : attention_cost_families()) list += (list.empty() ? "" : ", ") + f;
  throw InputError({}, 0, "kernel", "unknown kernel family '" + std::string(family) + "' (known: " + list + ")");
}

RoundCostSummary round_cost(const ResolvedScenario& s, std::int64_t round) {
  const auto& w = *s.workload;
  const AttentionCost& a = *s.attention;
  const std::int64_t n = w.devices();
  RoundCostSummary r;
  double fwd_sum = 0, bwd_sum = 0;
  w.for_each_class(round, [&](std::int64_t device, const BlockStats& b, std::int64_t count) {
    const RoundCost c = a.block(s, device, Workload::kv_block_of(device, round, n), b);
    r.fwd_max_s = std::max(r.fwd_max_s, c.fwd_s);
    r.bwd_max_s = std::max(r.bwd_max_s, c.bwd_s);
    fwd_sum += c.fwd_s * static_cast<double>(count);
    bwd_sum += c.bwd_s * static_cast<double>(count);
  });
  r.fwd_mean_s = fwd_sum / static_cast<double>(n);
  r.bwd_mean_s = bwd_sum / static_cast<double>(n);
  return r;
}

}  // namespace ringsim::models
