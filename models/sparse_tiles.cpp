#include "models/sparse_tiles.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "models/error.hpp"

namespace ringsim::models {
namespace {

using Index = std::size_t;

Index idx(std::int64_t i) noexcept { return static_cast<Index>(i); }

// For every query row i, the key rows it may attend form one contiguous run [lo_i, hi_i) of the
// sorted K rows: the keys of its group (contiguous, sorted by position) up to its own position.
// Both ends are nondecreasing in i, so one merge finds them all.
template <bool Grouped>
void key_intervals(const SortedRows& q, const SortedRows& k, std::vector<std::int64_t>& lo,
                   std::vector<std::int64_t>& hi) {
  const std::int64_t m = q.size();
  const std::int64_t n = k.size();
  lo.assign(idx(m), 0);
  hi.assign(idx(m), 0);
  std::int64_t j_lo = 0;
  std::int64_t j_hi = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t p = q.pos[idx(i)];
    if constexpr (Grouped) {
      const std::int32_t g = q.group[idx(i)];
      while (j_lo < n && k.group[idx(j_lo)] < g) ++j_lo;
      j_hi = std::max(j_hi, j_lo);
      while (j_hi < n && k.group[idx(j_hi)] == g && k.pos[idx(j_hi)] <= p) ++j_hi;
      lo[idx(i)] = j_lo;
    } else {
      while (j_hi < n && k.pos[idx(j_hi)] <= p) ++j_hi;
    }
    hi[idx(i)] = j_hi;
  }
}

// G(t) = sum over rows of min(x_row, t) for a nondecreasing x, evaluated at nondecreasing t:
// the amortised pointer makes a whole row of tiles cost O(rows + tiles).
class ClampSum {
 public:
  ClampSum(const std::vector<std::int64_t>& x, std::int64_t begin, std::int64_t end) noexcept
      : x_(x), p_(begin), end_(end) {}
  std::int64_t at(std::int64_t t) noexcept {
    while (p_ < end_ && x_[idx(p_)] <= t) sum_ += x_[idx(p_++)];
    return sum_ + t * (end_ - p_);
  }

 private:
  const std::vector<std::int64_t>& x_;
  std::int64_t p_;
  std::int64_t end_;
  std::int64_t sum_ = 0;
};

template <bool Grouped>
void visit_impl(const SortedRows& q, const SortedRows& k, TileShape tile, TileVisitor visit) {
  const std::int64_t m = q.size();
  const std::int64_t n = k.size();
  const std::int64_t tq = tile.q;
  const std::int64_t tk = tile.k;
  const std::int64_t nq = (m + tq - 1) / tq;
  const std::int64_t nk = (n + tk - 1) / tk;

  std::vector<std::int64_t> lo;
  std::vector<std::int64_t> hi;
  key_intervals<Grouped>(q, k, lo, hi);

  // Per key tile: smallest position, and (grouped) its first and last group.
  std::vector<std::int64_t> k_min(idx(nk));
  std::vector<std::int32_t> k_first(Grouped ? idx(nk) : 0);
  std::vector<std::int32_t> k_last(Grouped ? idx(nk) : 0);
  for (std::int64_t kt = 0; kt < nk; ++kt) {
    const std::int64_t b0 = kt * tk;
    const std::int64_t b1 = std::min(n, b0 + tk);
    if constexpr (Grouped) {
      k_first[idx(kt)] = k.group[idx(b0)];
      k_last[idx(kt)] = k.group[idx(b1 - 1)];
      k_min[idx(kt)] = *std::min_element(k.pos.begin() + b0, k.pos.begin() + b1);
    } else {
      k_min[idx(kt)] = k.pos[idx(b0)];
    }
  }

  std::vector<std::int64_t> allowed(idx(nk), 0);
  for (std::int64_t qt = 0; qt < nq; ++qt) {
    const std::int64_t a = qt * tq;
    const std::int64_t b = std::min(m, a + tq);
    const std::int64_t rows = b - a;

    // Visited range: group overlap first, then the causal trim of its end.
    std::int64_t start = 0;
    std::int64_t end = nk;
    std::int64_t q_max = 0;
    if constexpr (Grouped) {
      const std::int32_t g_min = q.group[idx(a)];
      const std::int32_t g_max = q.group[idx(b - 1)];
      start = std::partition_point(k_last.begin(), k_last.end(), [&](std::int32_t g) { return g < g_min; }) -
              k_last.begin();
      end = std::partition_point(k_first.begin(), k_first.end(), [&](std::int32_t g) { return g <= g_max; }) -
            k_first.begin();
      q_max = *std::max_element(q.pos.begin() + a, q.pos.begin() + b);
      // Positions restart with every group, so the qualifying key tiles need not be a prefix:
      // the kernel keeps everything up to the last one.
      while (end > start && k_min[idx(end - 1)] > q_max) --end;
    } else {
      q_max = q.pos[idx(b - 1)];
      end = std::partition_point(k_min.begin(), k_min.end(), [&](std::int64_t p) { return p <= q_max; }) -
            k_min.begin();
    }
    if (end < start) end = start;

    // Allowed pairs: only key tiles meeting [lo of the first row, hi of the last row) can hold any.
    const std::int64_t lo_min = Grouped ? lo[idx(a)] : 0;
    const std::int64_t hi_max = hi[idx(b - 1)];
    std::int64_t kt0 = 0;
    std::int64_t kt1 = 0;
    if (hi_max > lo_min) {
      kt0 = lo_min / tk;
      kt1 = (hi_max + tk - 1) / tk;
      // |[lo, hi) n [L, R)| summed over rows = (G_hi(R) - G_hi(L)) - (G_lo(R) - G_lo(L)).
      ClampSum g_hi(hi, a, b);
      ClampSum g_lo(lo, a, b);
      std::int64_t prev_hi = g_hi.at(kt0 * tk);
      std::int64_t prev_lo = Grouped ? g_lo.at(kt0 * tk) : 0;
      for (std::int64_t kt = kt0; kt < kt1; ++kt) {
        const std::int64_t r = std::min(n, (kt + 1) * tk);
        const std::int64_t cur_hi = g_hi.at(r);
        const std::int64_t cur_lo = Grouped ? g_lo.at(r) : 0;
        allowed[idx(kt)] = (cur_hi - prev_hi) - (cur_lo - prev_lo);
        prev_hi = cur_hi;
        prev_lo = cur_lo;
      }
    }

    for (std::int64_t kt = 0; kt < nk; ++kt) {
      const std::int64_t cols = std::min(n, (kt + 1) * tk) - kt * tk;
      const std::int64_t count = (kt >= kt0 && kt < kt1) ? allowed[idx(kt)] : 0;
      visit(TileCount{qt, kt, rows, cols, count, kt >= start && kt < end});
    }
  }
}

template <bool Grouped>
std::int64_t count_impl(const SortedRows& q, const SortedRows& k) {
  std::vector<std::int64_t> lo;
  std::vector<std::int64_t> hi;
  key_intervals<Grouped>(q, k, lo, hi);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < hi.size(); ++i) total += hi[i] - lo[i];
  return total;
}

void check_pair(const SortedRows& q, const SortedRows& k) {
  if (q.grouped() != k.grouped() && q.size() > 0 && k.size() > 0)
    throw std::invalid_argument("sparse rows: query and key rows must both be grouped or both ungrouped");
}

}  // namespace

void visit_sorted_tiles(const SortedRows& q, const SortedRows& k, TileShape tile, TileVisitor visit) {
  if (tile.q <= 0 || tile.k <= 0)
    throw InputError({}, 0, "tile",
                     "tile sizes must be positive, got " + std::to_string(tile.q) + "x" + std::to_string(tile.k));
  if (q.size() == 0 || k.size() == 0) return;
  check_pair(q, k);
  if (q.grouped())
    visit_impl<true>(q, k, tile, visit);
  else
    visit_impl<false>(q, k, tile, visit);
}

std::int64_t count_sorted_pairs(const SortedRows& q, const SortedRows& k) {
  if (q.size() == 0 || k.size() == 0) return 0;
  check_pair(q, k);
  return q.grouped() ? count_impl<true>(q, k) : count_impl<false>(q, k);
}

void sort_rows(SortedRows& rows, std::int64_t n_groups) {
  const bool increasing = std::adjacent_find(rows.pos.begin(), rows.pos.end(), std::greater_equal<>()) == rows.pos.end();
  if (!rows.grouped()) {
    if (!increasing) std::sort(rows.pos.begin(), rows.pos.end());
    return;
  }
  const std::int64_t size = rows.size();
  if (increasing && n_groups <= 2 * size + 1024) {
    // Stable counting sort: O(rows + groups), keeps positions increasing inside each group.
    std::vector<std::int64_t> offset(idx(n_groups) + 1, 0);
    for (const std::int32_t g : rows.group) ++offset[idx(g) + 1];
    for (std::size_t g = 1; g < offset.size(); ++g) offset[g] += offset[g - 1];
    SortedRows out;
    out.group.resize(idx(size));
    out.pos.resize(idx(size));
    for (std::int64_t i = 0; i < size; ++i) {
      const std::int32_t g = rows.group[idx(i)];
      const std::int64_t dst = offset[idx(g)]++;
      out.group[idx(dst)] = g;
      out.pos[idx(dst)] = rows.pos[idx(i)];
    }
    rows = std::move(out);
    return;
  }
  // Positions are distinct, so sorting by (group, position) is the stable order by group.
  std::vector<std::pair<std::int32_t, std::int64_t>> pairs(idx(size));
  for (std::int64_t i = 0; i < size; ++i) pairs[idx(i)] = {rows.group[idx(i)], rows.pos[idx(i)]};
  std::sort(pairs.begin(), pairs.end());
  for (std::int64_t i = 0; i < size; ++i) {
    rows.group[idx(i)] = pairs[idx(i)].first;
    rows.pos[idx(i)] = pairs[idx(i)].second;
  }
}

}  // namespace ringsim::models
