#include "models/workload/mask.hpp"

#include <algorithm>
#include <cmath>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {
namespace {

__extension__ typedef __int128 i128;  // exact intermediate sums of 64-bit counts

// sum_{i=0}^{n-1} floor((a*i + b) / m) for n >= 0, m > 0, a >= 0, b >= 0 (Euclid-like, O(log)).
i128 floor_sum(i128 n, i128 m, i128 a, i128 b) {
  i128 ans = 0;
  while (true) {
    if (a >= m) {
      ans += n * (n - 1) / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      ans += n * (b / m);
      b %= m;
    }
    const i128 y_max = a * n + b;
    if (y_max < m) break;
    n = y_max / m;
    b = y_max % m;
    std::swap(m, a);
  }
  return ans;
}

i128 ceil_div(i128 x, i128 y) {  // y > 0
  return x >= 0 ? (x + y - 1) / y : -((-x) / y);
}

std::int64_t count_le_sets(std::span<const Progression> q, std::span<const Progression> k, std::int64_t offset) {
  std::int64_t total = 0;
  for (const auto& a : q)
    for (const auto& b : k) total += count_pairs_le(a, b, offset);
  return total;
}

std::int64_t size_of(std::span<const Progression> s) {
  std::int64_t n = 0;
  for (const auto& p : s) n += p.count;
  return n;
}

// Progression restricted to positions in [lo, hi).
Progression clip(const Progression& p, std::int64_t lo, std::int64_t hi) {
  if (p.count == 0 || hi <= lo) return {p.start, p.stride, 0};
  std::int64_t first = 0;
  if (p.start < lo) first = static_cast<std::int64_t>(ceil_div(lo - p.start, p.stride));
  std::int64_t last = p.count;  // exclusive
  if (p.last() >= hi) last = static_cast<std::int64_t>(ceil_div(hi - p.start, p.stride));
  last = std::min(last, p.count);
  if (last <= first) return {p.start, p.stride, 0};
  return {p.start + first * p.stride, p.stride, last - first};
}

class CausalMask final : public Mask {
 public:
  // On monotone layouts a tile holds an allowed pair iff its first key precedes its last query,
  // so each tile row's computed tiles are a prefix found by binary search: O(rows log tiles)
  // per block instead of O(tiles).
  bool block_shortcut(const Layout& l, std::int64_t j, std::int64_t k, TileShape t, BlockStats& out) const override {
    if (!l.monotone()) return false;
    const std::int64_t c = l.block();
    const std::int64_t nq = (c + t.q - 1) / t.q;
    const std::int64_t nk = (c + t.k - 1) / t.k;
    out = {};
    out.tiles_total = nq * nk;
    // Tokens grow along a monotone layout's block, so both boundaries below only move right as
    // the query tile moves down: two walks over the key tiles, O(nq + nk) token lookups.
    // Contiguous and striped blocks are arithmetic progressions: positions without a lookup.
    const auto qa = l.affine(j), ka = l.affine(k);
    auto q_pos = [&](std::int64_t local) { return qa ? qa->start + local * qa->stride : l.token(j, local); };
    auto k_pos = [&](std::int64_t local) { return ka ? ka->start + local * ka->stride : l.token(k, local); };
    std::int64_t lo = 0;  // first key tile whose first key is after the query tile's last query
    std::int64_t a = 0;   // first key tile whose last key is after the query tile's first query
    for (std::int64_t qt = 0; qt < nq; ++qt) {
      const std::int64_t rows = std::min(c, (qt + 1) * t.q) - qt * t.q;
      const std::int64_t q_last = q_pos(qt * t.q + rows - 1);
      while (lo < nk && k_pos(lo * t.k) <= q_last) ++lo;
      // Tiles [0, a) are entirely allowed: their last key precedes the tile's first query.
      const std::int64_t q_first = q_pos(qt * t.q);
      while (a < lo && k_pos(std::min(c, (a + 1) * t.k) - 1) <= q_first) ++a;
      out.tiles_computed += lo;
      out.visited_area += rows * std::min(c, lo * t.k);
      out.masked_area += rows * (std::min(c, lo * t.k) - std::min(c, a * t.k));
      out.tiles_masked += lo - a;
    }
    out.tiles_visited = out.tiles_computed;
    out.skipped_area = c * c - out.visited_area;
    // Reused: a sweep calls this per block, and a layout's segments are a handful.
    thread_local std::vector<Progression> qs, ks;
    qs.clear();
    ks.clear();
    l.segments(j, 0, c, qs);
    l.segments(k, 0, c, ks);
    out.allowed_pairs = count(qs, ks);
    return true;
  }

  double count_steps(const Layout& l, TileShape t) const noexcept override {
    if (!l.monotone()) return Mask::count_steps(l, t);
    // Two walks over the tiles, then one closed-form count over the blocks' segments.
    const double c = static_cast<double>(l.block());
    const double s = static_cast<double>(l.max_segments(l.block()));
    return std::ceil(c / static_cast<double>(t.q)) + std::ceil(c / static_cast<double>(t.k)) + s * s;
  }

  MaskKind kind() const noexcept override { return MaskKind::Causal; }
  std::string name() const override { return "causal"; }
  bool allowed(std::int64_t q, std::int64_t p, std::int64_t) const noexcept override { return p <= q; }
  std::int64_t count(std::span<const Progression> q, std::span<const Progression> k) const override {
    return count_le_sets(q, k, 0);
  }
  bool shift_invariant() const noexcept override { return true; }
  bool order_only() const noexcept override { return true; }

 protected:
  std::optional<std::int64_t> decided_by_range(std::int64_t q_min, std::int64_t q_max, std::int64_t k_min,
                                               std::int64_t k_max, std::int64_t n) const noexcept override {
    if (k_max <= q_min) return n;
    if (k_min > q_max) return 0;
    return std::nullopt;
  }
};

class FullMask final : public Mask {
 public:
  bool block_shortcut(const Layout& l, std::int64_t, std::int64_t, TileShape t, BlockStats& out) const override {
    const std::int64_t c = l.block();
    const std::int64_t tiles = ((c + t.q - 1) / t.q) * ((c + t.k - 1) / t.k);
    out = {tiles, tiles, tiles, c * c, c * c, 0, 0};
    return true;
  }

  double count_steps(const Layout&, TileShape) const noexcept override { return 1; }

  MaskKind kind() const noexcept override { return MaskKind::Full; }
  std::string name() const override { return "full"; }
  bool allowed(std::int64_t, std::int64_t, std::int64_t) const noexcept override { return true; }
  std::int64_t count(std::span<const Progression> q, std::span<const Progression> k) const override {
    return size_of(q) * size_of(k);
  }
  bool shift_invariant() const noexcept override { return true; }
  bool order_only() const noexcept override { return true; }

 protected:
  std::optional<std::int64_t> decided_by_range(std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                               std::int64_t n) const noexcept override {
    return n;
  }
};

class WindowMask final : public Mask {
 public:
  explicit WindowMask(std::int64_t w) : w_(w) {}
  MaskKind kind() const noexcept override { return MaskKind::Window; }
  std::string name() const override { return "window:" + std::to_string(w_); }
  bool allowed(std::int64_t q, std::int64_t p, std::int64_t) const noexcept override { return p <= q && p > q - w_; }
  std::int64_t count(std::span<const Progression> q, std::span<const Progression> k) const override {
    return count_le_sets(q, k, 0) - count_le_sets(q, k, -w_);
  }
  bool shift_invariant() const noexcept override { return true; }
  std::optional<std::int64_t> window() const noexcept override { return w_; }

 protected:
  std::optional<std::int64_t> decided_by_range(std::int64_t q_min, std::int64_t q_max, std::int64_t k_min,
                                               std::int64_t k_max, std::int64_t n) const noexcept override {
    if (k_min > q_max || k_max <= q_min - w_) return 0;
    if (k_max <= q_min && k_min > q_max - w_) return n;
    return std::nullopt;
  }

 private:
  std::int64_t w_;
};

class DocumentMask final : public Mask {
 public:
  DocumentMask(std::vector<std::int64_t> starts, std::int64_t n_seq) : starts_(std::move(starts)), n_seq_(n_seq) {
    min_length_ = n_seq_;
    for (std::size_t d = 0; d < starts_.size(); ++d)
      min_length_ = std::min(min_length_, (d + 1 < starts_.size() ? starts_[d + 1] : n_seq_) - starts_[d]);
  }
  // Monotone devices: block_shortcut below, a few walks over the block's tokens and one over
  // its tiles. Otherwise each closed-form count walks the documents its progressions' range meets.
  double count_steps(const Layout& l, TileShape t) const noexcept override {
    bool all_monotone = true;
    for (std::int64_t d = 0; d < l.n_dev() && all_monotone; ++d) all_monotone = l.monotone(d);
    if (all_monotone) {
      const double c = static_cast<double>(l.block());
      return 6 * c + std::ceil(c / static_cast<double>(t.q)) * std::ceil(c / static_cast<double>(t.k)) +
             static_cast<double>(starts_.size());
    }
    const double span = static_cast<double>(l.max_span(std::max(t.q, t.k)));
    const double docs = std::min(static_cast<double>(starts_.size()), 2 + 2 * span / static_cast<double>(min_length_));
    return Mask::count_steps(l, t) * docs;
  }
  MaskKind kind() const noexcept override { return MaskKind::Documents; }
  std::string name() const override { return "docs(" + std::to_string(starts_.size()) + ")"; }
  bool allowed(std::int64_t q, std::int64_t p, std::int64_t) const noexcept override {
    return p <= q && doc_of(p) == doc_of(q);
  }
  const std::vector<std::int64_t>* document_starts() const noexcept override { return &starts_; }
  // Where both devices hold increasing tokens (contiguous, striped, and the per-document
  // balancers' permutations), query x's allowed keys are one range of the key block's local
  // indices, [first key at or after its document's start, last key at or before x], and both
  // ends only move right as x does. A tile row's counts then come from those ranges with a
  // difference array over the key tiles: O(block + tiles) per block instead of a count per tile.
  bool block_shortcut(const Layout& l, std::int64_t j, std::int64_t k, TileShape t, BlockStats& out) const override {
    if (!l.monotone(j) || !l.monotone(k)) return false;
    const std::int64_t c = l.block();
    const std::int64_t nq = (c + t.q - 1) / t.q;
    const std::int64_t nk = (c + t.k - 1) / t.k;
    thread_local std::vector<std::int64_t> qpos, kpos, cnt, diff;
    qpos.resize(static_cast<std::size_t>(c));
    kpos.resize(static_cast<std::size_t>(c));
    for (std::int64_t i = 0; i < c; ++i) {
      qpos[static_cast<std::size_t>(i)] = l.token(j, i);
      kpos[static_cast<std::size_t>(i)] = l.token(k, i);
    }
    out = {};
    out.tiles_total = nq * nk;
    cnt.assign(static_cast<std::size_t>(nk), 0);
    diff.assign(static_cast<std::size_t>(nk) + 1, 0);
    std::size_t doc = 0;
    std::int64_t lo = 0, end = 0;  // the current query's allowed key range [lo, end)
    for (std::int64_t qt = 0; qt < nq; ++qt) {
      const std::int64_t r0 = qt * t.q, r1 = std::min(c, r0 + t.q);
      for (std::int64_t a = r0; a < r1; ++a) {
        const std::int64_t q = qpos[static_cast<std::size_t>(a)];
        while (doc + 1 < starts_.size() && starts_[doc + 1] <= q) ++doc;
        const std::int64_t s = starts_[doc];
        while (lo < c && kpos[static_cast<std::size_t>(lo)] < s) ++lo;
        end = std::max(end, lo);
        while (end < c && kpos[static_cast<std::size_t>(end)] <= q) ++end;
        if (lo >= end) continue;
        const std::int64_t tl = lo / t.k, th = (end - 1) / t.k;
        if (tl == th) {
          cnt[static_cast<std::size_t>(tl)] += end - lo;
        } else {
          cnt[static_cast<std::size_t>(tl)] += (tl + 1) * t.k - lo;
          cnt[static_cast<std::size_t>(th)] += end - th * t.k;
          diff[static_cast<std::size_t>(tl + 1)] += t.k;
          diff[static_cast<std::size_t>(th)] -= t.k;
        }
      }
      const std::int64_t rows = r1 - r0;
      std::int64_t run = 0;
      for (std::int64_t kt = 0; kt < nk; ++kt) {
        run += diff[static_cast<std::size_t>(kt)];
        const std::int64_t allowed = cnt[static_cast<std::size_t>(kt)] + run;
        const std::int64_t cols = std::min(c, (kt + 1) * t.k) - kt * t.k;
        out.allowed_pairs += allowed;
        if (allowed > 0) {
          ++out.tiles_computed;
          out.visited_area += rows * cols;
          if (allowed < rows * cols) {
            out.masked_area += rows * cols;
            ++out.tiles_masked;
          }
        } else {
          out.skipped_area += rows * cols;
        }
        cnt[static_cast<std::size_t>(kt)] = 0;
        diff[static_cast<std::size_t>(kt)] = 0;
      }
      diff[static_cast<std::size_t>(nk)] = 0;
    }
    out.tiles_visited = out.tiles_computed;
    return true;
  }

  std::int64_t count(std::span<const Progression> q, std::span<const Progression> k) const override {
    std::int64_t total = 0;
    for (const auto& a : q) {
      for (const auto& b : k) {
        if (a.count == 0 || b.count == 0 || b.start > a.last()) continue;
        // Only documents that meet both progressions' ranges contribute: those of the overlap.
        const std::size_t d_first = doc_of(std::max(a.start, b.start));
        const std::size_t d_last = doc_of(std::min(a.last(), b.last()));
        for (std::size_t d = d_first; d <= d_last; ++d) {
          const std::int64_t s = starts_[d];
          const std::int64_t e = d + 1 < starts_.size() ? starts_[d + 1] : n_seq_;
          const Progression ac = clip(a, s, e);
          const Progression bc = clip(b, s, e);
          if (ac.count && bc.count) total += count_pairs_le(ac, bc, 0);
        }
      }
    }
    return total;
  }

 protected:
  std::optional<std::int64_t> decided_by_range(std::int64_t q_min, std::int64_t q_max, std::int64_t k_min,
                                               std::int64_t k_max, std::int64_t n) const noexcept override {
    if (k_min > q_max) return 0;
    if (doc_of(k_max) < doc_of(q_min) && doc_of(q_max) == doc_of(q_min) && doc_of(k_min) == doc_of(k_max)) return 0;
    if (k_max <= q_min && doc_of(k_min) == doc_of(q_max)) return n;
    return std::nullopt;
  }

 private:
  std::size_t doc_of(std::int64_t pos) const noexcept {
    return static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), pos) - starts_.begin()) - 1;
  }
  std::vector<std::int64_t> starts_;  // starts_[0] == 0, strictly increasing
  std::int64_t n_seq_;
  std::int64_t min_length_;  // of the shortest document
};

}  // namespace

std::int64_t count_pairs_le(const Progression& a, const Progression& b, std::int64_t offset) noexcept {
  if (a.count <= 0 || b.count <= 0) return 0;
  // For the i-th query x_i = a.start + i*a.stride + offset - b.start, keys allowed number
  // clamp(floor(x_i / b.stride) + 1, 0, b.count).
  const i128 sa = a.stride, sb = b.stride, nb = b.count;
  const i128 x0 = static_cast<i128>(a.start) + offset - b.start;
  // i0: first i with x_i >= 0; i1: first i with x_i >= (nb - 1) * sb (all keys allowed).
  i128 i0 = x0 >= 0 ? 0 : ceil_div(-x0, sa);
  i128 i1 = ceil_div((nb - 1) * sb - x0, sa);
  const i128 n = a.count;
  i0 = std::clamp<i128>(i0, 0, n);
  i1 = std::clamp<i128>(i1, i0, n);
  i128 total = (n - i1) * nb;
  const i128 m = i1 - i0;
  if (m > 0) {
    const i128 b0 = x0 + sa * i0;
    if (sa % sb == 0) {
      // Common case (equal strides: contiguous, striped, zigzag): floor((sa t + b0) / sb) =
      // (sa / sb) t + floor(b0 / sb), an arithmetic series; b0 >= 0 here.
      total += (sa / sb) * (m * (m - 1) / 2) + m * (b0 / sb) + m;
    } else {
      total += floor_sum(m, sb, sa, b0) + m;
    }
  }
  return static_cast<std::int64_t>(total);
}

void Mask::visit_block(const Layout& layout, std::int64_t qd, std::int64_t kd, TileShape tile, std::int64_t,
                       TileVisitor visit) const {
  const std::int64_t c = layout.block();
  const std::int64_t nq = (c + tile.q - 1) / tile.q;
  const std::int64_t nk = (c + tile.k - 1) / tile.k;
  struct Side {
    std::int64_t lo = 0, hi = 0;  // index range into segs
    std::int64_t min = 0, max = 0;
  };
  // Key tiles' progressions are built once per block; query tiles' once per row.
  std::vector<Progression> kseg;
  std::vector<Side> keys(static_cast<std::size_t>(nk));
  for (std::int64_t kt = 0; kt < nk; ++kt) {
    auto& s = keys[static_cast<std::size_t>(kt)];
    s.lo = static_cast<std::int64_t>(kseg.size());
    layout.segments(kd, kt * tile.k, std::min(c, (kt + 1) * tile.k), kseg);
    s.hi = static_cast<std::int64_t>(kseg.size());
  }
  auto minmax = [](std::span<const Progression> ps, std::int64_t& mn, std::int64_t& mx) {
    mn = INT64_MAX;
    mx = INT64_MIN;
    for (const auto& p : ps) {
      mn = std::min(mn, p.start);
      mx = std::max(mx, p.last());
    }
  };
  for (auto& s : keys) {
    minmax(std::span(kseg).subspan(static_cast<std::size_t>(s.lo), static_cast<std::size_t>(s.hi - s.lo)), s.min,
           s.max);
  }
  std::vector<Progression> qseg;
  for (std::int64_t qt = 0; qt < nq; ++qt) {
    qseg.clear();
    const std::int64_t rows = std::min(c, (qt + 1) * tile.q) - qt * tile.q;
    layout.segments(qd, qt * tile.q, qt * tile.q + rows, qseg);
    std::int64_t qmin = 0, qmax = 0;
    minmax(qseg, qmin, qmax);
    for (std::int64_t kt = 0; kt < nk; ++kt) {
      const auto& s = keys[static_cast<std::size_t>(kt)];
      const std::int64_t cols = std::min(c, (kt + 1) * tile.k) - kt * tile.k;
      const auto ks = std::span<const Progression>(kseg).subspan(static_cast<std::size_t>(s.lo),
                                                                 static_cast<std::size_t>(s.hi - s.lo));
      const auto decided = decided_by_range(qmin, qmax, s.min, s.max, rows * cols);
      const std::int64_t allowed = decided ? *decided : count(qseg, ks);
      visit(TileCount{qt, kt, rows, cols, allowed, allowed > 0});
    }
  }
}

bool Mask::block_shortcut(const Layout&, std::int64_t, std::int64_t, TileShape, BlockStats&) const { return false; }

double Mask::count_steps(const Layout& l, TileShape t) const noexcept {
  // visit_block: the key tiles' segments once, each row's once, and per tile a closed-form
  // count over (query segments) x (key segments) where the range does not decide it.
  const double c = static_cast<double>(l.block());
  const double nq = std::ceil(c / static_cast<double>(t.q)), nk = std::ceil(c / static_cast<double>(t.k));
  const double sq = static_cast<double>(l.max_segments(t.q)), sk = static_cast<double>(l.max_segments(t.k));
  return nq * nk * sq * sk + nq * sq + nk * sk;
}

std::optional<std::int64_t> Mask::decided_by_range(std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                                   std::int64_t) const noexcept {
  return std::nullopt;
}

std::unique_ptr<Mask> make_causal() { return std::make_unique<CausalMask>(); }
std::unique_ptr<Mask> make_full() { return std::make_unique<FullMask>(); }
std::unique_ptr<Mask> make_window(std::int64_t w) {
  if (w <= 0) throw InputError({}, 0, "mask", "window size must be a positive integer, got " + std::to_string(w));
  return std::make_unique<WindowMask>(w);
}

std::unique_ptr<Mask> make_documents(std::vector<std::int64_t> starts, std::int64_t n_seq) {
  if (starts.empty() || starts.front() != 0) starts.insert(starts.begin(), 0);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    if (starts[i] < 0 || starts[i] >= n_seq)
      throw InputError({}, static_cast<std::int64_t>(i), "mask",
                       "document start " + std::to_string(starts[i]) + " is outside [0, n_seq = " +
                           std::to_string(n_seq) + ")");
    if (i > 0 && starts[i] <= starts[i - 1])
      throw InputError({}, static_cast<std::int64_t>(i), "mask",
                       "document starts must be strictly increasing (" + std::to_string(starts[i - 1]) + " then " +
                           std::to_string(starts[i]) + ")");
  }
  return std::make_unique<DocumentMask>(std::move(starts), n_seq);
}

std::unique_ptr<Mask> make_mask(const MaskSpec& spec, std::int64_t n_seq) {
  switch (spec.family()) {
    case MaskFamily::Causal: return make_causal();
    case MaskFamily::Full: return make_full();
    case MaskFamily::Window: return make_window(spec.window());
    case MaskFamily::Documents: {
      if (spec.file().empty())
        throw InputError({}, 0, "mask", "mask docs is per-document causal over packed documents: give them with --docs");
      const std::string& file = spec.file();
      std::vector<std::int64_t> starts;
      for (const auto& [v, line] : read_int_list(file, "document start", "document-boundary file", n_seq)) {
        if (v < 0 || v >= n_seq)
          throw InputError(file, line, "document start",
                           "position " + std::to_string(v) + " is outside [0, n_seq = " + std::to_string(n_seq) + ")");
        if (!starts.empty() && v <= starts.back())
          throw InputError(file, line, "document start",
                           "starts must be strictly increasing (" + std::to_string(starts.back()) + " then " +
                               std::to_string(v) + ")");
        starts.push_back(v);
      }
      return make_documents(std::move(starts), n_seq);
    }
    default: break;
  }
  throw InputError({}, 0, "mask", "mask " + spec.text() + " is index-based: one per head (make_sparse_mask)");
}

}  // namespace ringsim::models
