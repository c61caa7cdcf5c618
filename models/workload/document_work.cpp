#include "models/workload/document_work.hpp"

#include <algorithm>
#include <utility>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {

namespace {

// Pairs of a causal block of m tokens: m (m + 1) / 2 (0 for m <= 0).
constexpr std::int64_t tri(std::int64_t m) noexcept { return m > 0 ? m * (m + 1) / 2 : 0; }

constexpr std::size_t at(std::int64_t i) noexcept { return static_cast<std::size_t>(i); }

// A call over the run [a, b) of a document starting at s: its queries allow the keys from s up
// to themselves, sum over x in [a, b) of (x - s + 1), and its area is (b - a) x (b - s).
void add_run(RankWork& w, std::int64_t rank, std::int64_t a, std::int64_t b, std::int64_t s) {
  const std::int64_t len = b - a;
  w.pairs[at(rank)] += len * (a - s) + tri(len);
  w.area[at(rank)] += len * (b - s);
  if (w.keep_calls) w.calls[at(rank)].emplace_back(len, b - s);
}

// Per-document zigzag: the sums of w^2 and w over the documents (w = L / 2n, a chunk's tokens).
std::pair<std::int64_t, std::int64_t> chunk_sums(std::span<const std::int64_t> lengths, std::int64_t n) {
  std::int64_t s2 = 0, s1 = 0;
  for (const auto l : lengths) {
    const std::int64_t w = l / (2 * n);
    s2 += w * w;
    s1 += w;
  }
  return {s2, s1};
}

// Runs of one rank's calls as parts arrive in the rank's local order: a part continues the open
// run when it is on the same rank and starts where the run ends (consecutive positions).
struct RunBuilder {
  RankWork& w;
  std::int64_t doc_start;
  std::int64_t rank = -1, lo = 0, hi = 0;
  void part(std::int64_t r, std::int64_t a, std::int64_t b) {
    if (r == rank && a == hi) {
      hi = b;
      return;
    }
    close();
    rank = r, lo = a, hi = b;
  }
  void close() {
    if (rank >= 0) add_run(w, rank, lo, hi, doc_start);
    rank = -1;
  }
};

// Cyclic interval [start, start + len) (len in [0, n]) of a difference array indexed by row:
// stride apart entries (one column of an (n + 1) x n array, or a 1D array with stride 1).
void cyclic_segment(std::vector<std::int64_t>& v, std::int64_t n, std::int64_t stride, std::int64_t col,
                    std::int64_t start, std::int64_t len, std::int64_t x) {
  if (len <= 0 || x == 0) return;
  const std::int64_t end = start + len;
  v[at(start * stride + col)] += x;
  if (end <= n) {
    v[at(end * stride + col)] -= x;
  } else {
    v[at(col)] += x;
    v[at((end - n) * stride + col)] -= x;
  }
}

}  // namespace

DocumentTotals document_totals(std::span<const std::int64_t> lengths) noexcept {
  DocumentTotals t;
  for (const auto l : lengths) {
    t.pairs += tri(l);
    t.area += l * l;
  }
  return t;
}

BlockStats element_stats(std::int64_t pairs, std::int64_t area) noexcept {
  BlockStats b;
  b.tiles_total = area;
  b.tiles_computed = pairs;
  b.tiles_visited = pairs;
  b.allowed_pairs = pairs;
  b.visited_area = pairs;
  b.skipped_area = area - pairs;
  return b;
}

std::optional<DocLayoutKind> DocLayout::kind_of(const LayoutSpec& spec) noexcept {
  switch (spec.family()) {
    case LayoutFamily::Contiguous: return DocLayoutKind::Contiguous;
    case LayoutFamily::Striped: return DocLayoutKind::Striped;
    case LayoutFamily::Zigzag: return DocLayoutKind::Zigzag;
    case LayoutFamily::DocZigzag: return DocLayoutKind::DocZigzag;
    case LayoutFamily::DocZigzagDocMajor: return DocLayoutKind::DocZigzagDocMajor;
    case LayoutFamily::Ptrr: return DocLayoutKind::Ptrr;
    default: return std::nullopt;
  }
}

DocLayout DocLayout::of(const LayoutSpec& spec) {
  const auto kind = kind_of(spec);
  if (!kind)
    throw InputError({}, 0, "layout",
                     "layout '" + spec.text() +
                         "' is not counted per document (expected contiguous, striped, zigzag, doc-zigzag, "
                         "doc-zigzag-docmajor or ptrr[:B])");
  DocLayout l;
  l.kind = *kind;
  l.block = spec.block();
  l.spec = spec.text();
  return l;
}

bool DocLayout::counted(const LayoutSpec& spec) noexcept { return kind_of(spec).has_value(); }

std::int64_t DocLayout::document_quantum(std::int64_t n) const noexcept {
  return kind == DocLayoutKind::DocZigzag || kind == DocLayoutKind::DocZigzagDocMajor ? 2 * n : 1;
}

void DocLayout::check(std::int64_t n_seq, std::int64_t n) const {
  std::int64_t multiple = n;
  if (kind == DocLayoutKind::Zigzag || kind == DocLayoutKind::DocZigzag || kind == DocLayoutKind::DocZigzagDocMajor)
    multiple = 2 * n;
  if (kind == DocLayoutKind::Ptrr) multiple = block * n;
  if (n_seq >= (std::int64_t{1} << 32))
    throw InputError({}, 0, "seq", "the per-document counting takes sequences below 2^32 tokens, got " + std::to_string(n_seq));
  if (n <= 0 || n_seq <= 0 || n_seq % multiple != 0)
    throw InputError({}, 0, "layout",
                     spec + " on " + std::to_string(n) + " positions needs n_seq to be a multiple of " +
                         std::to_string(multiple) + ", got " + std::to_string(n_seq));
}

void DocumentCounter::ptrr_positions(std::span<const std::int64_t> lengths, std::int64_t n_seq, std::int64_t n,
                                     std::int64_t b) {
  // torch's _PTRRLoadBalancer (models/workload/documents.hpp, ptrr_groups): a block's time is the key
  // blocks it visits, [block of its first token's document start, itself] (none for a block of
  // padding); blocks sorted by descending time (stable) are dealt to the n positions in snake
  // order. A counting sort (times are at most the block count) gives the stable sort's order.
  const std::int64_t blocks = n_seq / b;
  time_.assign(at(blocks), 0);
  std::int64_t s = 0;
  for (const auto l : lengths) {
    const std::int64_t e = s + l, first_block = s / b;
    for (std::int64_t q = (s + b - 1) / b; q * b < e; ++q) time_[at(q)] = q - first_block + 1;
    s = e;
  }
  count_.assign(at(blocks + 2), 0);
  for (const auto t : time_) ++count_[at(t)];
  // Offsets in descending time order: count_[t] becomes the first slot of time t.
  std::int64_t offset = 0;
  for (std::int64_t t = blocks + 1; t-- > 0;) {
    const std::int64_t c = count_[at(t)];
    count_[at(t)] = offset;
    offset += c;
  }
  // The snake's position of every place in the sorted order (kept while n and the block count
  // stay), then each block's place.
  if (static_cast<std::int64_t>(snake_.size()) != blocks || snake_n_ != n) {
    snake_.resize(at(blocks));
    std::int64_t row = 0, col = 0;
    for (auto& p : snake_) {
      p = static_cast<std::int32_t>(row % 2 == 0 ? col : n - 1 - col);
      if (++col == n) col = 0, ++row;
    }
    snake_n_ = n;
  }
  position_of_block_.resize(at(blocks));
  for (std::int64_t q = 0; q < blocks; ++q) position_of_block_[at(q)] = snake_[at(count_[at(time_[at(q)])]++)];
}

void DocumentCounter::ring(const DocLayout& layout, std::span<const std::int64_t> lengths, std::int64_t n_seq,
                           std::int64_t n, RingPairs& out) {
  out.n = n;
  out.pairs.assign(at(n * n), 0);
  auto& w = out.pairs;
  const auto cell = [&](std::int64_t q, std::int64_t k) -> std::int64_t& { return w[at(q * n + k)]; };
  const std::int64_t c = n_seq / n;

  // A document over consecutive "pieces" (positions of a contiguous split, chunks of zigzag,
  // blocks of ptrr) in causal order: each piece's tokens attend the document's tokens seen
  // before on every position, and themselves causally.
  seen_.assign(at(n), 0);
  touched_.clear();
  const auto piece = [&](std::int64_t pos, std::int64_t tokens) {
    cell(pos, pos) += tri(tokens);
    std::int64_t* row = &cell(pos, 0);
    const auto t = static_cast<std::uint32_t>(tokens);
    if (2 * static_cast<std::int64_t>(touched_.size()) > n) {
      // Most positions seen (a long document): the whole row, which vectorises (32 x 32 -> 64-bit
      // products: DocLayout::check keeps n_seq below 2^32).
      for (std::int64_t k = 0; k < n; ++k) row[k] += static_cast<std::int64_t>(std::uint64_t{t} * seen_[at(k)]);
    } else {
      for (const auto k : touched_) row[k] += static_cast<std::int64_t>(std::uint64_t{t} * seen_[at(k)]);
    }
    if (seen_[at(pos)] == 0) touched_.push_back(pos);
    seen_[at(pos)] += static_cast<std::uint32_t>(tokens);
  };
  const auto end_document = [&] {
    for (const auto k : touched_) seen_[at(k)] = 0;
    touched_.clear();
  };

  std::int64_t s = 0;
  switch (layout.kind) {
    case DocLayoutKind::Contiguous:
    case DocLayoutKind::Zigzag: {
      // Contiguous: pieces of c tokens on positions 0..n-1. Zigzag: chunks of c / 2 tokens,
      // chunk t on position t (t < n) or 2n - 1 - t.
      const bool zig = layout.kind == DocLayoutKind::Zigzag;
      const std::int64_t len = zig ? c / 2 : c;
      const auto pos_of = [&](std::int64_t t) { return !zig || t < n ? t : 2 * n - 1 - t; };
      for (const auto l : lengths) {
        const std::int64_t e = s + l, t0 = s / len, t1 = (e - 1) / len;
        if (t0 == t1) {
          cell(pos_of(t0), pos_of(t0)) += tri(l);
        } else {
          for (std::int64_t t = t0; t <= t1; ++t) piece(pos_of(t), std::min(e, (t + 1) * len) - std::max(s, t * len));
          end_document();
        }
        s = e;
      }
      return;
    }
    case DocLayoutKind::DocZigzag: {
      // Every document of 2n chunks of w tokens puts chunks r and 2n-1-r on position r: position
      // q meets position k != q in 2 w^2 pairs (both of q's chunks after k's first, or q's
      // second after both of k's), and itself in 2 w^2 + w.
      const auto [s2, s1] = chunk_sums(lengths, n);
      std::fill(w.begin(), w.end(), 2 * s2);
      for (std::int64_t q = 0; q < n; ++q) cell(q, q) += s1;
      return;
    }
    case DocLayoutKind::DocZigzagDocMajor: {
      // The documents' chunks in the order 0, 2n-1, 1, 2n-2, ..., n-1, n, document after
      // document, cut into n shards of c: a document keeps its range of the sequence, so one
      // that does not cross a shard boundary sits on one position whole.
      for (const auto l : lengths) {
        const std::int64_t e = s + l, a = s / c, b = (e - 1) / c;
        if (a == b) {
          cell(a, a) += tri(l);
        } else {
          const std::int64_t wd = l / (2 * n);
          for (std::int64_t t = 0; t < 2 * n; ++t) {  // chunks in causal order
            const std::int64_t slot = t < n ? 2 * t : 2 * (2 * n - 1 - t) + 1;
            for (std::int64_t x = s + slot * wd, end = x + wd; x < end;) {
              const std::int64_t y = std::min(end, (x / c + 1) * c);
              piece(x / c, y - x);
              x = y;
            }
          }
          end_document();
        }
        s = e;
      }
      return;
    }
    case DocLayoutKind::Ptrr: {
      const std::int64_t b = layout.block;
      ptrr_positions(lengths, n_seq, n, b);
      for (const auto l : lengths) {
        const std::int64_t e = s + l, b0 = s / b, b1 = (e - 1) / b;
        if (b0 == b1) {
          const std::int64_t p = position_of_block_[at(b0)];
          cell(p, p) += tri(l);
        } else {
          for (std::int64_t blk = b0; blk <= b1; ++blk)
            piece(position_of_block_[at(blk)], std::min(e, (blk + 1) * b) - std::max(s, blk * b));
          end_document();
        }
        s = e;
      }
      return;
    }
    case DocLayoutKind::Striped: {
      // Token x on position x mod n. A document of L = q n + r tokens from s: with u and v the
      // query's and key's positions counted from s's (mod n), the pairs are
      //   T(q - 1) + q [u < r] + q [v <= u] + [v <= u < r]      (T(m) = m (m + 1) / 2)
      // (q or q + 1 tokens each side; a key on a later position than the query's lags one).
      // The grid is kept as a row-wise difference D (cell = base + prefix of D along its row):
      // a band of rows adds to column 0; the "rotated triangle" {v <= u < m} adds, in rows u,
      // +x at column s, -x at the column after the row's own (one cyclic diagonal) and +x at
      // column 0 where the row's columns wrap around.
      const std::int64_t stride = n;
      vertical_.assign(at((n + 1) * n), 0);
      diagonal_.assign(at(n + 1), 0);
      std::int64_t base = 0;
      const auto triangle = [&](std::int64_t s0, std::int64_t m, std::int64_t x) {
        if (m <= 0 || x == 0) return;
        cyclic_segment(vertical_, n, stride, s0, s0, m, x);
        cyclic_segment(diagonal_, n, 1, 0, s0, m, -x);
        const std::int64_t u0 = std::max<std::int64_t>(0, n - 1 - s0);
        if (m > u0) cyclic_segment(vertical_, n, stride, 0, (s0 + u0) % n, m - u0, x);
      };
      for (const auto l : lengths) {
        const std::int64_t s0 = s % n, q = l / n, r = l % n;
        base += tri(q - 1);
        cyclic_segment(vertical_, n, stride, 0, s0, r, q);
        triangle(s0, n, q);
        triangle(s0, r, 1);
        s += l;
      }
      column_.assign(at(n), 0);
      std::int64_t diag = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        for (std::int64_t k = 0; k < n; ++k) column_[at(k)] += vertical_[at(j * stride + k)];
        diag += diagonal_[at(j)];
        const std::int64_t diag_col = (j + 1) % n;
        std::int64_t run = base;
        for (std::int64_t k = 0; k < n; ++k) {
          run += column_[at(k)] + (k == diag_col ? diag : 0);
          cell(j, k) = run;
        }
      }
      return;
    }
  }
}

void DocumentCounter::allgather(const DocLayout& layout, std::span<const std::int64_t> lengths, std::int64_t n_seq,
                                std::int64_t n, RankWork& out) {
  out.pairs.assign(at(n), 0);
  out.area.assign(at(n), 0);
  if (out.keep_calls) {
    if (layout.kind == DocLayoutKind::Striped)
      throw InputError({}, 0, "layout", "a striped all-gather issues one kernel call per token: its calls are not listed");
    out.calls.resize(at(n));
    for (auto& c : out.calls) c.clear();
  }
  const std::int64_t c = n_seq / n;
  std::int64_t s = 0;
  switch (layout.kind) {
    case DocLayoutKind::Contiguous:
    case DocLayoutKind::Zigzag: {
      // Contiguous: a rank's block is one run of positions. Zigzag: two, one per chunk (the
      // layout keeps them apart even where they meet, on rank n - 1).
      const bool zig = layout.kind == DocLayoutKind::Zigzag;
      const std::int64_t len = zig ? c / 2 : c;
      for (const auto l : lengths) {
        const std::int64_t e = s + l;
        for (std::int64_t t = s / len; t * len < e; ++t) {
          const std::int64_t rank = !zig || t < n ? t : 2 * n - 1 - t;
          add_run(out, rank, std::max(s, t * len), std::min(e, (t + 1) * len), s);
        }
        s = e;
      }
      return;
    }
    case DocLayoutKind::Striped: {
      if (n == 1) {
        for (const auto l : lengths) {
          add_run(out, 0, s, s + l, s);
          s += l;
        }
        return;
      }
      // Every token its own run (n > 1): the rank u positions after s's holds q + [u < r]
      // tokens s + u + a n, each allowing u + a n + 1 keys: nu (u + 1) + n T(nu - 1), linear in
      // u on each band of u, so in the rank j on each of at most four intervals.
      row_.assign(at(n + 1), 0);     // coefficient of j
      column_.assign(at(n + 1), 0);  // constant
      const auto linear = [&](std::int64_t j0, std::int64_t j1, std::int64_t coef, std::int64_t cst) {
        if (j0 >= j1) return;
        row_[at(j0)] += coef, row_[at(j1)] -= coef;
        column_[at(j0)] += cst, column_[at(j1)] -= cst;
      };
      for (const auto l : lengths) {
        const std::int64_t s0 = s % n, q = l / n, r = l % n;
        const auto band = [&](std::int64_t u_lo, std::int64_t u_hi, std::int64_t nu) {
          if (nu == 0 || u_lo >= u_hi) return;
          const std::int64_t cst = nu + n * tri(nu - 1);  // value = nu u + cst
          const std::int64_t split = n - s0;              // u at which the rank wraps to 0
          linear(u_lo + s0, std::min(u_hi, split) + s0, nu, cst - nu * s0);
          linear(std::max(u_lo, split) + s0 - n, u_hi + s0 - n, nu, cst + nu * (n - s0));
        };
        band(0, r, q + 1);
        band(r, n, q);
        s += l;
      }
      std::int64_t coef = 0, cst = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        coef += row_[at(j)];
        cst += column_[at(j)];
        out.pairs[at(j)] = out.area[at(j)] = coef * j + cst;
      }
      return;
    }
    case DocLayoutKind::DocZigzag: {
      // Chunks j and 2n-1-j of every document: two runs (one on rank n - 1, where they meet),
      // with pairs 2n w^2 + w on every rank and areas (2n + 1) w^2, 2 (n + 1) w^2 on rank n - 1.
      const auto [s2, s1] = chunk_sums(lengths, n);
      for (std::int64_t j = 0; j < n; ++j) {
        out.pairs[at(j)] = 2 * n * s2 + s1;
        out.area[at(j)] = (j == n - 1 ? 2 * (n + 1) : 2 * n + 1) * s2;
      }
      // Its calls: chunk j (keys up to its end) and chunk 2n-1-j of every document, one run of
      // two chunks on rank n - 1.
      if (out.keep_calls)
        for (const auto l : lengths) {
          const std::int64_t w = l / (2 * n);
          for (std::int64_t j = 0; j + 1 < n; ++j) {
            out.calls[at(j)].emplace_back(w, (j + 1) * w);
            out.calls[at(j)].emplace_back(w, (2 * n - j) * w);
          }
          out.calls[at(n - 1)].emplace_back(2 * w, (n + 1) * w);
        }
      return;
    }
    case DocLayoutKind::DocZigzagDocMajor: {
      for (const auto l : lengths) {
        const std::int64_t e = s + l, a = s / c, b = (e - 1) / c, wd = l / (2 * n);
        if (a == b) {
          // Whole on one rank: a run per chunk but chunks n-1 and n, which meet.
          out.pairs[at(a)] += tri(l);
          out.area[at(a)] += wd * wd * (n * (2 * n + 1) + 1);
          if (out.keep_calls) {
            for (std::int64_t t = 0; t < 2 * n; ++t)
              if (t != n - 1 && t != n) out.calls[at(a)].emplace_back(wd, (t + 1) * wd);
            out.calls[at(a)].emplace_back(2 * wd, (n + 1) * wd);
          }
        } else {
          RunBuilder runs{out, s};
          for (std::int64_t slot = 0; slot < 2 * n; ++slot) {  // the rank's local order
            const std::int64_t t = slot % 2 == 0 ? slot / 2 : 2 * n - 1 - slot / 2;
            const std::int64_t from = s + slot * wd, orig = s + t * wd;
            for (std::int64_t x = from, end = from + wd; x < end;) {
              const std::int64_t y = std::min(end, (x / c + 1) * c);
              runs.part(x / c, orig + (x - from), orig + (y - from));
              x = y;
            }
          }
          runs.close();
        }
        s = e;
      }
      return;
    }
    case DocLayoutKind::Ptrr: {
      // A rank's blocks in increasing order: consecutive blocks of one rank are one run.
      const std::int64_t b = layout.block;
      ptrr_positions(lengths, n_seq, n, b);
      for (const auto l : lengths) {
        const std::int64_t e = s + l;
        RunBuilder runs{out, s};
        for (std::int64_t blk = s / b; blk * b < e; ++blk)
          runs.part(position_of_block_[at(blk)], std::max(s, blk * b), std::min(e, (blk + 1) * b));
        runs.close();
        s = e;
      }
      return;
    }
  }
}

}  // namespace ringsim::models
