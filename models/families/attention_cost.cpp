#include "models/families/attention_cost.hpp"

#include <algorithm>

#include "models/families/families.hpp"
#include "models/io/error.hpp"

namespace ringsim::models {

namespace {

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

// Sum over i in [0, n) of floor((a i + b) / m), for a, b >= 0 and m > 0 (the Euclid-like
// reduction: O(log) steps).
std::int64_t floor_sum(std::int64_t n, std::int64_t m, std::int64_t a, std::int64_t b) {
  std::int64_t ans = 0;
  while (n > 0) {
    if (a >= m) ans += (n - 1) * n / 2 * (a / m), a %= m;
    if (b >= m) ans += n * (b / m), b %= m;
    const std::int64_t y = a * n + b;
    if (y < m) break;
    n = y / m;
    b = y % m;
    std::swap(m, a);
  }
  return ans;
}

// ceil(x / d) for d > 0 and any x.
std::int64_t ceil_div_any(std::int64_t x, std::int64_t d) { return x >= 0 ? (x + d - 1) / d : -((-x) / d); }

}  // namespace

std::int64_t call_allowed_pairs(const AttentionCall& c) {
  if (c.q_len <= 0 || c.k_len <= 0) return 0;
  return c.causal ? allowed_in_rows(0, c.q_len, c.k_len, c.diagonal) : c.q_len * c.k_len;
}

std::int64_t call_tiles_visited(const AttentionCall& c, TileShape tile) {
  if (c.q_len <= 0 || c.k_len <= 0 || tile.q <= 0 || tile.k <= 0) return 0;
  const std::int64_t rows = (c.q_len + tile.q - 1) / tile.q;
  const std::int64_t cols = (c.k_len + tile.k - 1) / tile.k;
  if (!c.causal) return rows * cols;
  // Row tile r reaches key q1 - 1 + diagonal (q1 its end) and visits the key tiles up to that
  // key's, at most cols: on the full row tiles the reach is tq r + b0, linear in r.
  const auto visited = [&](std::int64_t reach) { return reach < 0 ? 0 : std::min(cols, reach / tile.k + 1); };
  const std::int64_t full_rows = rows - 1, b0 = tile.q - 1 + c.diagonal;
  const std::int64_t start = std::clamp<std::int64_t>(ceil_div_any(-b0, tile.q), 0, full_rows);
  const std::int64_t sat = std::clamp<std::int64_t>(ceil_div_any((cols - 1) * tile.k - b0, tile.q), start, full_rows);
  const std::int64_t n = sat - start;
  const std::int64_t partial = n > 0 ? floor_sum(n, tile.k, tile.q, tile.q * start + b0) + n : 0;
  return partial + (full_rows - sat) * cols + visited(c.q_len - 1 + c.diagonal);
}

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
    b.tiles_masked += visited - full;
    b.skipped_area += h * (c.k_len - visited_width);
    b.allowed_pairs += c.causal ? allowed_in_rows(q0, q1, c.k_len, c.diagonal) : h * c.k_len;
  }
  return b;
}

RoundCost AttentionCost::calls(const ResolvedScenario& s, std::span<const AttentionCall> list) const {
  RoundCost sum;
  for (const auto& c : list) {
    const RoundCost r = call(s, c);
    sum.fwd_s += r.fwd_s;
    sum.bwd_s += r.bwd_s;
    sum.tiles += r.tiles;
  }
  return sum;
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
