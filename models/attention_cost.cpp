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
  // The call's tiles at the scenario's tile shape, timed as a block; CostModel counts a tile once
  // for the device's heads and batch, so a call of other heads or batch scales by the ratio.
  [[nodiscard]] RoundCost call(const ResolvedScenario& s, const AttentionCall& c) const override {
    const BlockStats b = call_tiles(c, s.tile);
    const double scale = static_cast<double>(c.heads * c.batch) /
                         static_cast<double>(s.cost->heads_per_device() * s.spec.batch);
    return {s.cost->attention_fwd_s(b) * scale, s.cost->attention_bwd_s(b) * scale, b.tiles_visited * c.batch};
  }
  // CostModel's tile time is linear in the tile counts and areas of a block with visited tiles.
  [[nodiscard]] bool additive() const noexcept override { return true; }
};

// Allowed keys of query i: min(k_len, max(0, i + diagonal + 1)); summed over [lo, hi) in closed form.
std::int64_t allowed_in_rows(std::int64_t lo, std::int64_t hi, std::int64_t k_len, std::int64_t diagonal) {
  // Rows with i + diagonal + 1 <= 0 allow nothing; rows with i + diagonal + 1 >= k_len allow all.
  const std::int64_t first_some = std::clamp<std::int64_t>(-diagonal, lo, hi);
  const std::int64_t first_all = std::clamp<std::int64_t>(k_len - 1 - diagonal, first_some, hi);
  // Rows [first_some, first_all) allow i + diagonal + 1 keys: an arithmetic series.
  const std::int64_t n = first_all - first_some;
  const std::int64_t a = first_some + diagonal + 1;
  return n * a + n * (n - 1) / 2 + (hi - first_all) * k_len;
}

}  // namespace

BlockStats call_tiles(const AttentionCall& c, TileShape tile) {
  BlockStats b;
  if (c.q_len <= 0 || c.k_len <= 0 || tile.q <= 0 || tile.k <= 0) return b;
  const std::int64_t rows = (c.q_len + tile.q - 1) / tile.q;
  const std::int64_t cols = (c.k_len + tile.k - 1) / tile.k;
  b.tiles_total = rows * cols;
  const std::int64_t last_cols = c.k_len - (cols - 1) * tile.k;  // width of the last tile column
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t q0 = r * tile.q, q1 = std::min(c.q_len, q0 + tile.q);
    const std::int64_t h = q1 - q0;
    std::int64_t visited = cols, full = cols;
    if (c.causal) {
      // Tile t holds an allowed pair iff its first key t tk <= q1 - 1 + diagonal; every pair
      // of it is allowed iff its last key <= q0 + diagonal.
      const std::int64_t reach = q1 - 1 + c.diagonal;
      visited = reach < 0 ? 0 : std::min(cols, reach / tile.k + 1);
      const std::int64_t sure = q0 + c.diagonal;  // keys <= sure are allowed for every row of the tile
      full = sure < 0 ? 0 : std::min(cols, (sure + 1) / tile.k);
      if (full == cols - 1 && sure >= c.k_len - 1) full = cols;  // a short last column fits under it
      full = std::min(full, visited);
    }
    b.tiles_visited += visited;
    b.tiles_computed += visited;
    const std::int64_t visited_width = visited == 0 ? 0 : (visited == cols ? (cols - 1) * tile.k + last_cols : visited * tile.k);
    const std::int64_t full_width = full == 0 ? 0 : (full == cols ? (cols - 1) * tile.k + last_cols : full * tile.k);
    b.visited_area += h * visited_width;
    b.masked_area += h * (visited_width - full_width);
    b.skipped_area += h * (c.k_len - visited_width);
    b.allowed_pairs += c.causal ? allowed_in_rows(q0, q1, c.k_len, c.diagonal) : h * c.k_len;
  }
  return b;
}

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
