#include "kernels/schedule.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "models/io/error.hpp"

namespace ringsim::kernels {
namespace {

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw models::InputError({}, 0, field, "tile schedule: " + what);
}

std::int32_t ceil_div(std::int32_t a, std::int32_t b) noexcept {
  return static_cast<std::int32_t>((static_cast<std::int64_t>(a) + b - 1) / b);
}

struct Range {
  std::int32_t lo = std::numeric_limits<std::int32_t>::max();
  std::int32_t hi = std::numeric_limits<std::int32_t>::min();
};

// Min and max of `values` over each tile of `tile` consecutive entries: what lets the builder
// decide a tile from its ranges instead of its pairs.
std::vector<Range> tile_ranges(const std::vector<std::int32_t>& values, std::int32_t tile) {
  const auto n = static_cast<std::int32_t>(values.size());
  std::vector<Range> out(static_cast<std::size_t>(ceil_div(n, tile)));
  for (std::int32_t i = 0; i < n; ++i) {
    Range& r = out[static_cast<std::size_t>(i / tile)];
    r.lo = std::min(r.lo, values[static_cast<std::size_t>(i)]);
    r.hi = std::max(r.hi, values[static_cast<std::size_t>(i)]);
  }
  return out;
}

}  // namespace

std::int32_t TileSchedule::q_tiles() const noexcept { return tile_q > 0 ? ceil_div(rows, tile_q) : 0; }
std::int32_t TileSchedule::k_tiles() const noexcept { return tile_k > 0 ? ceil_div(cols, tile_k) : 0; }

std::int32_t TileSchedule::q_tile_rows(std::int32_t q_tile) const noexcept {
  const std::int64_t lo = static_cast<std::int64_t>(q_tile) * tile_q;
  return static_cast<std::int32_t>(std::min<std::int64_t>(tile_q, rows - lo));
}

std::int32_t TileSchedule::k_tile_cols(std::int32_t k_tile) const noexcept {
  const std::int64_t lo = static_cast<std::int64_t>(k_tile) * tile_k;
  return static_cast<std::int32_t>(std::min<std::int64_t>(tile_k, cols - lo));
}

void TileSchedule::set_items(std::vector<TileItem> new_items) {
  if (tile_q < 1) fail("tile_q", "must be >= 1, got " + std::to_string(tile_q));
  std::sort(new_items.begin(), new_items.end(), [](const TileItem& a, const TileItem& b) {
    return a.q_tile != b.q_tile ? a.q_tile < b.q_tile : a.k_tile < b.k_tile;
  });
  const std::int32_t nq = q_tiles();
  q_tile_offsets.assign(static_cast<std::size_t>(nq) + 1, 0);
  for (const TileItem& it : new_items) {
    if (it.q_tile < 0 || it.q_tile >= nq)
      fail("items", "q_tile " + std::to_string(it.q_tile) + " outside [0, " + std::to_string(nq) + ")");
    ++q_tile_offsets[static_cast<std::size_t>(it.q_tile) + 1];
  }
  for (std::size_t t = 1; t < q_tile_offsets.size(); ++t) q_tile_offsets[t] += q_tile_offsets[t - 1];
  items = std::move(new_items);
  validate();
}

void TileSchedule::validate() const {
  if (rows < 1) fail("rows", "must be >= 1, got " + std::to_string(rows));
  if (cols < 1) fail("cols", "must be >= 1, got " + std::to_string(cols));
  if (tile_q < 1) fail("tile_q", "must be >= 1, got " + std::to_string(tile_q));
  if (tile_k < 1) fail("tile_k", "must be >= 1, got " + std::to_string(tile_k));
  if (q_pos.size() != static_cast<std::size_t>(rows))
    fail("q_pos", "has " + std::to_string(q_pos.size()) + " entries for " + std::to_string(rows) + " rows");
  if (k_pos.size() != static_cast<std::size_t>(cols))
    fail("k_pos", "has " + std::to_string(k_pos.size()) + " entries for " + std::to_string(cols) + " cols");
  if (std::any_of(q_pos.begin(), q_pos.end(), [](std::int32_t p) { return p < 0; }))
    fail("q_pos", "positions must be >= 0");
  if (std::any_of(k_pos.begin(), k_pos.end(), [](std::int32_t p) { return p < 0; }))
    fail("k_pos", "positions must be >= 0");
  if (q_bucket.empty() != k_bucket.empty()) fail("q_bucket", "buckets must be given for both Q and K or for neither");
  if (!q_bucket.empty() && q_bucket.size() != static_cast<std::size_t>(rows))
    fail("q_bucket", "has " + std::to_string(q_bucket.size()) + " entries for " + std::to_string(rows) + " rows");
  if (!k_bucket.empty() && k_bucket.size() != static_cast<std::size_t>(cols))
    fail("k_bucket", "has " + std::to_string(k_bucket.size()) + " entries for " + std::to_string(cols) + " cols");

  const std::int32_t nq = q_tiles();
  const std::int32_t nk = k_tiles();
  if (q_tile_offsets.size() != static_cast<std::size_t>(nq) + 1)
    fail("q_tile_offsets", "needs q_tiles + 1 = " + std::to_string(nq + 1) + " entries, has " +
                               std::to_string(q_tile_offsets.size()));
  if (q_tile_offsets.front() != 0) fail("q_tile_offsets", "must start at 0");
  if (q_tile_offsets.back() != static_cast<std::int64_t>(items.size()))
    fail("q_tile_offsets", "must end at the item count " + std::to_string(items.size()));
  for (std::int32_t t = 0; t < nq; ++t) {
    const auto lo = q_tile_offsets[static_cast<std::size_t>(t)];
    const auto hi = q_tile_offsets[static_cast<std::size_t>(t) + 1];
    if (hi < lo) fail("q_tile_offsets", "must be non-decreasing (q tile " + std::to_string(t) + ")");
    for (auto i = lo; i < hi; ++i) {
      const TileItem& it = items[static_cast<std::size_t>(i)];
      const std::string where = "item " + std::to_string(i) + " ";
      if (it.q_tile != t) fail("items", where + "has q_tile " + std::to_string(it.q_tile) + " in the group of q tile " + std::to_string(t));
      if (it.k_tile < 0 || it.k_tile >= nk)
        fail("items", where + "k_tile " + std::to_string(it.k_tile) + " outside [0, " + std::to_string(nk) + ")");
      if (i > lo && items[static_cast<std::size_t>(i) - 1].k_tile >= it.k_tile)
        fail("items", where + "k tiles of a q tile must be strictly increasing (duplicate or unsorted)");
      switch (it.kind) {
        case TileKind::Full:
        case TileKind::Causal:
        case TileKind::IndexRanges: break;
        case TileKind::Window:
          if (it.window < 1) fail("items", where + "window must be >= 1, got " + std::to_string(it.window));
          break;
        default: fail("items", where + "unknown kind " + std::to_string(static_cast<std::int32_t>(it.kind)));
      }
    }
  }
}

bool TileSchedule::allowed(const TileItem& item, std::int32_t q_local, std::int32_t k_local) const noexcept {
  const auto qi = static_cast<std::size_t>(q_local);
  const auto ki = static_cast<std::size_t>(k_local);
  const std::int32_t qb = has_buckets() ? q_bucket[qi] : 0;
  const std::int32_t kb = has_buckets() ? k_bucket[ki] : 0;
  return pair_allowed(item.kind, item.window, q_pos[qi], k_pos[ki], qb, kb);
}

std::int64_t TileSchedule::visited_pairs() const noexcept {
  std::int64_t total = 0;
  for (const TileItem& it : items)
    total += static_cast<std::int64_t>(q_tile_rows(it.q_tile)) * k_tile_cols(it.k_tile);
  return total;
}

std::int64_t TileSchedule::allowed_pairs() const noexcept {
  std::int64_t total = 0;
  for (const TileItem& it : items) {
    const std::int32_t q0 = it.q_tile * tile_q;
    const std::int32_t k0 = it.k_tile * tile_k;
    for (std::int32_t q = q0; q < q0 + q_tile_rows(it.q_tile); ++q)
      for (std::int32_t k = k0; k < k0 + k_tile_cols(it.k_tile); ++k) total += allowed(it, q, k) ? 1 : 0;
  }
  return total;
}

TileSchedule build_schedule(ScheduleSpec spec) {
  TileSchedule s;
  s.rows = static_cast<std::int32_t>(spec.q_pos.size());
  s.cols = static_cast<std::int32_t>(spec.k_pos.size());
  s.tile_q = spec.tile_q;
  s.tile_k = spec.tile_k;
  s.q_pos = std::move(spec.q_pos);
  s.k_pos = std::move(spec.k_pos);
  const bool buckets = spec.rule == TileKind::IndexRanges && !spec.q_bucket.empty();
  if (buckets) {
    s.q_bucket = std::move(spec.q_bucket);
    s.k_bucket = std::move(spec.k_bucket);
  } else if (!spec.q_bucket.empty() || !spec.k_bucket.empty()) {
    if (spec.rule != TileKind::IndexRanges) fail("q_bucket", "buckets are only meaningful with the IndexRanges rule");
    fail("q_bucket", "buckets must be given for both Q and K or for neither");
  }
  if (spec.rule == TileKind::Window && spec.window < 1)
    fail("window", "must be >= 1, got " + std::to_string(spec.window));
  // Validate shapes before the range pass indexes anything (offsets are filled by set_items).
  s.q_tile_offsets.assign(static_cast<std::size_t>(s.q_tiles()) + 1, 0);
  s.validate();

  const TileKind partial = spec.rule == TileKind::IndexRanges && !buckets ? TileKind::Causal : spec.rule;
  const std::vector<Range> qr = tile_ranges(s.q_pos, s.tile_q);
  const std::vector<Range> kr = tile_ranges(s.k_pos, s.tile_k);
  std::vector<Range> qbr, kbr;
  if (buckets) {
    qbr = tile_ranges(s.q_bucket, s.tile_q);
    kbr = tile_ranges(s.k_bucket, s.tile_k);
  }
  const std::int64_t w = spec.window;

  std::vector<TileItem> items;
  for (std::int32_t qt = 0; qt < s.q_tiles(); ++qt) {
    const Range q = qr[static_cast<std::size_t>(qt)];
    for (std::int32_t kt = 0; kt < s.k_tiles(); ++kt) {
      const Range k = kr[static_cast<std::size_t>(kt)];
      TileKind kind = partial;
      switch (spec.rule) {
        case TileKind::Full: kind = TileKind::Full; break;
        case TileKind::Causal:
          if (k.lo > q.hi) continue;
          if (k.hi <= q.lo) kind = TileKind::Full;
          break;
        case TileKind::Window:
          if (k.lo > q.hi || static_cast<std::int64_t>(q.lo) - k.hi >= w) continue;
          if (k.hi <= q.lo && static_cast<std::int64_t>(q.hi) - k.lo < w) kind = TileKind::Full;
          break;
        case TileKind::IndexRanges: {
          if (k.lo > q.hi) continue;
          bool one_bucket = true;
          if (buckets) {
            const Range qb = qbr[static_cast<std::size_t>(qt)];
            const Range kb = kbr[static_cast<std::size_t>(kt)];
            if (kb.hi < qb.lo || kb.lo > qb.hi) continue;
            one_bucket = qb.lo == qb.hi && kb.lo == kb.hi && qb.lo == kb.lo;
          }
          if (k.hi <= q.lo && one_bucket) kind = TileKind::Full;
          break;
        }
      }
      items.push_back({qt, kt, kind, kind == TileKind::Window ? spec.window : 0});
    }
  }
  s.set_items(std::move(items));
  return s;
}

std::vector<std::int32_t> strided_positions(std::int32_t start, std::int32_t stride, std::int32_t count) {
  if (count < 0) fail("count", "must be >= 0, got " + std::to_string(count));
  if (stride < 1) fail("stride", "must be >= 1, got " + std::to_string(stride));
  if (start < 0) fail("start", "must be >= 0, got " + std::to_string(start));
  const std::int64_t last = static_cast<std::int64_t>(start) + static_cast<std::int64_t>(stride) * (count > 0 ? count - 1 : 0);
  if (last > std::numeric_limits<std::int32_t>::max()) fail("count", "positions overflow int32");
  std::vector<std::int32_t> out(static_cast<std::size_t>(count));
  for (std::int32_t i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = start + i * stride;
  return out;
}

}  // namespace ringsim::kernels
