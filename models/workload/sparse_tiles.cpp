#include "models/workload/sparse_tiles.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "models/io/error.hpp"

namespace ringsim::models {
namespace {

using Index = std::size_t;
Index idx(std::int64_t i) noexcept { return static_cast<Index>(i); }

constexpr std::uint64_t kGroupMask = ~SortedRows::kPositionMask;

// Per query row, filled completely by key_intervals: left uninitialised until then (zero-filling
// them was a visible share of a block's time).
struct Intervals {
  std::unique_ptr<std::int64_t[]> lo;  // null with a single group
  std::unique_ptr<std::int64_t[]> hi;
};

// For every query row i, the key rows it may attend form one contiguous run [lo_i, hi_i) of the
// sorted K rows: the keys of its group (contiguous, sorted by position) up to its own position,
// i.e. hi_i = #keys <= key_i and lo_i = #keys of a smaller group. Both are nondecreasing in i.
// With a single group lo is all zero and is left empty.
template <bool Grouped>
Intervals key_intervals(const SortedRows& q, const SortedRows& k) {
  Intervals out;
  const std::int64_t m = q.size();
  const std::int64_t n = k.size();
  const std::uint64_t* qk = q.key.data();
  const std::uint64_t* kk = k.key.data();
  out.hi.reset(new std::int64_t[idx(m)]);
  std::int64_t* h = out.hi.get();
  // Branch-free merge: how queries and keys interleave is data, not a predictable pattern.
  // hi[i] is rewritten until i advances, which is when j is final for it. One merge is a
  // chain of dependent loads, so the query rows are cut into kChains pieces whose merges run
  // interleaved (each starts where a binary search puts it).
  constexpr int kChains = 4;
  std::int64_t i[kChains];
  std::int64_t i_end[kChains];
  std::int64_t j[kChains];
  for (int c = 0; c < kChains; ++c) {
    i[c] = m * c / kChains;
    i_end[c] = m * (c + 1) / kChains;
    j[c] = i[c] == 0 ? 0 : std::upper_bound(kk, kk + n, qk[i[c] - 1]) - kk;
  }
  auto step = [&](int c) {
    const bool take_key = kk[j[c]] <= qk[i[c]];
    h[i[c]] = j[c];
    j[c] += take_key;
    i[c] += !take_key;
  };
  auto active = [&](int c) { return i[c] < i_end[c] && j[c] < n; };
  while (active(0) && active(1) && active(2) && active(3)) {
    step(0);
    step(1);
    step(2);
    step(3);
  }
  for (int c = 0; c < kChains; ++c) {
    while (active(c)) step(c);
    for (; i[c] < i_end[c]; ++i[c]) h[i[c]] = j[c];
  }
  if constexpr (Grouped) {
    out.lo.reset(new std::int64_t[idx(m)]);
    std::int64_t* lo = out.lo.get();
    std::int64_t jl = 0;
    std::uint64_t group = ~std::uint64_t{0};
    for (std::int64_t r = 0; r < m; ++r) {
      const std::uint64_t g = qk[r] & kGroupMask;
      if (g != group) {  // once per group present in the block
        group = g;
        jl = std::lower_bound(kk + jl, kk + n, g) - kk;
      }
      lo[r] = jl;
    }
  }
  return out;
}

// G(t) = sum over rows of min(x_row, t) for a nondecreasing x, evaluated at nondecreasing t:
// the amortised pointer makes a whole row of tiles cost O(rows + tiles).
class ClampSum {
 public:
  ClampSum(const std::int64_t* x, std::int64_t begin, std::int64_t end) noexcept : x_(x), p_(begin), end_(end) {}
  std::int64_t at(std::int64_t t) noexcept {
    while (p_ < end_ && x_[p_] <= t) sum_ += x_[p_++];
    return sum_ + t * (end_ - p_);
  }

 private:
  const std::int64_t* x_;
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
  const std::int64_t last_cols = n - (nk - 1) * tk;

  const Intervals iv = key_intervals<Grouped>(q, k);
  const std::int64_t* lo = iv.lo.get();
  const std::int64_t* hi = iv.hi.get();

  // Per key tile: smallest position, and (grouped) its first and last group.
  std::vector<std::int64_t> k_min(idx(nk));
  std::vector<std::uint64_t> k_first(Grouped ? idx(nk) : 0);
  std::vector<std::uint64_t> k_last(Grouped ? idx(nk) : 0);
  for (std::int64_t kt = 0; kt < nk; ++kt) {
    const std::int64_t b0 = kt * tk;
    const std::int64_t b1 = std::min(n, b0 + tk);
    if constexpr (Grouped) {
      k_first[idx(kt)] = k.key[idx(b0)] & kGroupMask;
      k_last[idx(kt)] = k.key[idx(b1 - 1)] & kGroupMask;
      std::uint64_t mn = SortedRows::kPositionMask;
      for (std::int64_t j = b0; j < b1; ++j) mn = std::min(mn, k.key[idx(j)] & SortedRows::kPositionMask);
      k_min[idx(kt)] = static_cast<std::int64_t>(mn);
    } else {
      k_min[idx(kt)] = k.pos(b0);
    }
  }

  std::vector<std::int64_t> allowed(idx(nk), 0);
  for (std::int64_t qt = 0; qt < nq; ++qt) {
    const std::int64_t a = qt * tq;
    const std::int64_t b = std::min(m, a + tq);

    // Visited range: group overlap first, then the causal trim of its end.
    std::int64_t start = 0;
    std::int64_t end = nk;
    if constexpr (Grouped) {
      const std::uint64_t g_min = q.key[idx(a)] & kGroupMask;
      const std::uint64_t g_max = q.key[idx(b - 1)] & kGroupMask;
      start = std::partition_point(k_last.begin(), k_last.end(), [&](std::uint64_t g) { return g < g_min; }) -
              k_last.begin();
      end = std::partition_point(k_first.begin(), k_first.end(), [&](std::uint64_t g) { return g <= g_max; }) -
            k_first.begin();
      std::uint64_t mx = 0;
      for (std::int64_t i = a; i < b; ++i) mx = std::max(mx, q.key[idx(i)] & SortedRows::kPositionMask);
      const auto q_max = static_cast<std::int64_t>(mx);
      // Positions restart with every group, so the key tiles that qualify need not be a
      // prefix: the kernel keeps everything up to the last one.
      while (end > start && k_min[idx(end - 1)] > q_max) --end;
    } else {
      const std::int64_t q_max = q.pos(b - 1);
      end = std::partition_point(k_min.begin(), k_min.end(), [&](std::int64_t p) { return p <= q_max; }) -
            k_min.begin();
    }
    end = std::max(end, start);

    // Allowed pairs: only key tiles meeting [lo of the first row, hi of the last row) can hold any.
    const std::int64_t lo_min = Grouped ? lo[a] : 0;
    const std::int64_t hi_max = hi[b - 1];
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

    TileCount t{qt, 0, b - a, tk, 0, false};
    for (std::int64_t kt = 0; kt < nk; ++kt) {
      t.k_tile = kt;
      t.cols = kt == nk - 1 ? last_cols : tk;
      t.allowed = (kt >= kt0 && kt < kt1) ? allowed[idx(kt)] : 0;
      t.visited = kt >= start && kt < end;
      visit(t);
    }
  }
}

template <bool Grouped>
std::int64_t count_impl(const SortedRows& q, const SortedRows& k) {
  const Intervals iv = key_intervals<Grouped>(q, k);
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < q.size(); ++i) total += iv.hi[idx(i)] - (Grouped ? iv.lo[idx(i)] : 0);
  return total;
}

// Sorted keys all in group 0 (query/key dropping, or a single bucket) need no group logic.
bool grouped(const SortedRows& q, const SortedRows& k) noexcept {
  return (q.key.back() & kGroupMask) != 0 || (k.key.back() & kGroupMask) != 0;
}

}  // namespace

void visit_sorted_tiles(const SortedRows& q, const SortedRows& k, TileShape tile, TileVisitor visit) {
  if (tile.q <= 0 || tile.k <= 0)
    throw InputError({}, 0, "tile",
                     "tile sizes must be positive, got " + std::to_string(tile.q) + "x" + std::to_string(tile.k));
  if (q.size() == 0 || k.size() == 0) return;
  if (grouped(q, k))
    visit_impl<true>(q, k, tile, visit);
  else
    visit_impl<false>(q, k, tile, visit);
}

std::int64_t count_sorted_pairs(const SortedRows& q, const SortedRows& k) {
  if (q.size() == 0 || k.size() == 0) return 0;
  return grouped(q, k) ? count_impl<true>(q, k) : count_impl<false>(q, k);
}

void sort_rows(SortedRows& rows, std::int64_t n_groups, bool positions_increasing) {
  auto& key = rows.key;
  const std::int64_t size = rows.size();
  if (!positions_increasing) {
    positions_increasing = true;
    for (std::int64_t i = 1; i < size; ++i)
      positions_increasing &= (key[idx(i - 1)] & SortedRows::kPositionMask) < (key[idx(i)] & SortedRows::kPositionMask);
  }
  if (positions_increasing && n_groups <= 1) return;  // one group: already in key order
  if (positions_increasing && n_groups <= 2 * size + 1024) {
    // Stable counting sort by group: O(rows + groups), positions stay increasing in a group.
    std::vector<std::int64_t> offset(idx(n_groups) + 1, 0);
    for (const std::uint64_t kv : key) ++offset[idx(static_cast<std::int64_t>(kv >> SortedRows::kPositionBits)) + 1];
    for (std::size_t g = 1; g < offset.size(); ++g) offset[g] += offset[g - 1];
    std::vector<std::uint64_t> out(idx(size));
    for (const std::uint64_t kv : key)
      out[idx(offset[idx(static_cast<std::int64_t>(kv >> SortedRows::kPositionBits))]++)] = kv;
    key = std::move(out);
    return;
  }
  std::sort(key.begin(), key.end());
}

}  // namespace ringsim::models
