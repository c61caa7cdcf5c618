// The per-document counting of packed batches (models/workload/document_work.hpp) against the exact
// counts: Workload's block counts at 1 x 1 tiles, the all-gather's kernel calls, and brute force
// over every token pair, on random small batches of every layout, with and without padding.
#include <algorithm>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

#include "models/families/attention_cost.hpp"
#include "models/workload/document_work.hpp"
#include "models/workload/documents.hpp"
#include "models/io/error.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"
#include "models/program/program.hpp"
#include "models/workload/workload.hpp"

using namespace ringsim::models;

namespace {

const std::vector<std::string> kLayouts = {"contiguous", "striped", "zigzag", "doc-zigzag", "doc-zigzag-docmajor",
                                           "ptrr:2", "ptrr:3"};

// A random batch on n positions: documents (multiples of the layout's quantum) filling n_seq,
// or, with padding, stopping short of it (the rest is padding).
struct Batch {
  std::int64_t n_seq = 0;
  std::vector<std::int64_t> lengths;  // the documents; padding after them
  [[nodiscard]] std::int64_t used() const { return std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0}); }
};

Batch random_batch(std::mt19937_64& rng, const DocLayout& layout, std::int64_t n, bool padding) {
  const std::int64_t q = layout.document_quantum(n);
  std::int64_t unit = n;
  if (layout.kind == DocLayoutKind::Zigzag || q > 1) unit = 2 * n;
  if (layout.kind == DocLayoutKind::Ptrr) unit = layout.block * n;
  unit = std::lcm(unit, q);
  Batch b;
  b.n_seq = unit * static_cast<std::int64_t>(1 + rng() % 4);
  std::int64_t left = b.n_seq;
  if (padding) left -= q * static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(b.n_seq / q));
  while (left > 0) {
    // Mostly short documents, sometimes one across several positions.
    const std::int64_t units = rng() % 4 == 0 ? 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(b.n_seq / q))
                                              : 1 + static_cast<std::int64_t>(rng() % 3);
    const std::int64_t l = std::min(left, units * q);
    b.lengths.push_back(l);
    left -= l;
  }
  return b;
}

// The documents as main's layouts see them: the padding as one more document.
Documents with_padding_document(const Batch& b) {
  Documents d;
  d.lengths = b.lengths;
  if (b.used() < b.n_seq) d.lengths.push_back(b.n_seq - b.used());
  return d;
}

// The layout's token placement. ptrr deals its blocks by their times, a block of padding
// visiting nothing (time 0): built from models::ptrr_groups with those times.
Layout layout_of(const DocLayout& dl, const Batch& b, std::int64_t n) {
  const Documents d = with_padding_document(b);
  if (dl.kind == DocLayoutKind::Ptrr) {
    const std::int64_t blocks = b.n_seq / dl.block;
    std::vector<std::int64_t> time(static_cast<std::size_t>(blocks), 0);
    std::int64_t s = 0;
    for (const auto l : b.lengths) {
      for (std::int64_t q = (s + dl.block - 1) / dl.block; q * dl.block < s + l; ++q)
        time[static_cast<std::size_t>(q)] = q - s / dl.block + 1;
      s += l;
    }
    std::vector<std::int64_t> order;
    for (const auto& g : ptrr_groups(time, n))
      for (const auto blk : g)
        for (std::int64_t t = 0; t < dl.block; ++t) order.push_back(blk * dl.block + t);
    return Layout::permutation(std::move(order), n, dl.spec);
  }
  if (const auto spec = LayoutSpec::parse(dl.spec); spec.from_documents()) return document_layout(spec, d, n);
  return Layout::make(LayoutSpec::parse(dl.spec), b.n_seq, n);
}

// Document of every token (-1: padding).
std::vector<std::int64_t> doc_ids(const Batch& b) {
  std::vector<std::int64_t> id(static_cast<std::size_t>(b.n_seq), -1);
  std::int64_t s = 0;
  for (std::size_t d = 0; d < b.lengths.size(); ++d) {
    std::fill(id.begin() + s, id.begin() + s + b.lengths[d], static_cast<std::int64_t>(d));
    s += b.lengths[d];
  }
  return id;
}

// Brute force: every (query, key) pair of one document, key not after query.
std::vector<std::int64_t> brute_ring(const Layout& l, const Batch& b, std::int64_t n) {
  const auto id = doc_ids(b);
  std::vector<std::int64_t> w(static_cast<std::size_t>(n * n), 0);
  for (std::int64_t x = 0; x < b.n_seq; ++x)
    for (std::int64_t y = 0; y <= x; ++y)
      if (id[static_cast<std::size_t>(x)] >= 0 && id[static_cast<std::size_t>(x)] == id[static_cast<std::size_t>(y)])
        ++w[static_cast<std::size_t>(l.place(x).device * n + l.place(y).device)];
  return w;
}

// Brute force of the all-gather's calls: a rank's queries in its local order, in maximal runs of
// consecutive positions of one document (zigzag: of one chunk; TE calls each DualChunkSwap chunk
// on its own); a run [a, b) of a document from s allows sum (x - s + 1) pairs over area
// (b - a) (b - s).
void brute_allgather(const Layout& l, const Batch& b, std::int64_t n, bool split_chunks, std::vector<std::int64_t>& pairs,
                     std::vector<std::int64_t>& area) {
  const auto id = doc_ids(b);
  std::vector<std::int64_t> start(b.lengths.size());
  std::int64_t s = 0;
  for (std::size_t d = 0; d < b.lengths.size(); ++d) start[d] = s, s += b.lengths[d];
  pairs.assign(static_cast<std::size_t>(n), 0);
  area.assign(static_cast<std::size_t>(n), 0);
  for (std::int64_t r = 0; r < n; ++r) {
    std::int64_t lo = -1, hi = -1, doc = -1;
    auto close = [&] {
      if (doc < 0) return;
      const std::int64_t s0 = start[static_cast<std::size_t>(doc)];
      for (std::int64_t x = lo; x < hi; ++x) pairs[static_cast<std::size_t>(r)] += x - s0 + 1;
      area[static_cast<std::size_t>(r)] += (hi - lo) * (hi - s0);
      doc = -1;
    };
    for (std::int64_t i = 0; i < l.block(); ++i) {
      const std::int64_t x = l.token(r, i);
      const std::int64_t d = id[static_cast<std::size_t>(x)];
      const bool chunk_start = split_chunks && i == l.block() / 2;
      if (d >= 0 && d == doc && x == hi && !chunk_start) {
        ++hi;
        continue;
      }
      close();
      if (d >= 0) doc = d, lo = x, hi = x + 1;
    }
    close();
  }
}

}  // namespace

TEST_CASE("document_work: ring pairs equal the workload's block counts at 1 x 1 tiles", "[document_work]") {
  std::mt19937_64 rng(17);
  DocumentCounter counter;
  RingPairs got;
  for (const auto& spec : kLayouts) {
    const auto dl = DocLayout::of(LayoutSpec::parse(spec));
    for (int trial = 0; trial < 40; ++trial) {
      const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 5);
      const Batch b = random_batch(rng, dl, n, false);
      const Layout layout = layout_of(dl, b, n);
      const auto mask = make_documents(with_padding_document(b).starts(), b.n_seq);
      counter.ring(dl, b.lengths, b.n_seq, n, got);
      const std::int64_t c = b.n_seq / n;
      for (std::int64_t q = 0; q < n; ++q)
        for (std::int64_t k = 0; k < n; ++k) {
          INFO(spec << " n " << n << " n_seq " << b.n_seq << " block (" << q << ", " << k << ")");
          CHECK(element_stats(got.at(q, k), c * c) == Workload::count_block(layout, *mask, q, k, TileShape{1, 1}));
        }
    }
  }
}

TEST_CASE("document_work: ring pairs equal brute force, with padding that attends nothing", "[document_work]") {
  std::mt19937_64 rng(23);
  DocumentCounter counter;
  RingPairs got;
  for (const auto& spec : kLayouts) {
    const auto dl = DocLayout::of(LayoutSpec::parse(spec));
    for (int trial = 0; trial < 40; ++trial) {
      const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 5);
      const Batch b = random_batch(rng, dl, n, true);
      counter.ring(dl, b.lengths, b.n_seq, n, got);
      INFO(spec << " n " << n << " n_seq " << b.n_seq << " documents " << b.lengths.size());
      CHECK(got.pairs == brute_ring(layout_of(dl, b, n), b, n));
      // Every pair of every document is somewhere on the grid.
      std::int64_t total = 0;
      for (const auto l : b.lengths) total += l * (l + 1) / 2;
      CHECK(std::accumulate(got.pairs.begin(), got.pairs.end(), std::int64_t{0}) == total);
    }
  }
}

TEST_CASE("document_work: all-gather pairs and areas equal its kernel calls and brute force", "[document_work]") {
  std::mt19937_64 rng(29);
  DocumentCounter counter;
  RankWork got;
  for (const auto& spec : kLayouts) {
    const auto dl = DocLayout::of(LayoutSpec::parse(spec));
    for (int trial = 0; trial < 40; ++trial) {
      const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 5);
      const bool padding = trial % 2 == 1;
      const Batch b = random_batch(rng, dl, n, padding);
      const Layout layout = layout_of(dl, b, n);
      counter.allgather(dl, b.lengths, b.n_seq, n, got);
      INFO(spec << " n " << n << " n_seq " << b.n_seq << " padding " << padding);
      std::vector<std::int64_t> pairs, area;
      brute_allgather(layout, b, n, dl.kind == DocLayoutKind::Zigzag, pairs, area);
      CHECK(got.pairs == pairs);
      CHECK(got.area == area);
      if (padding) continue;
      // Without padding: what the strategy's program issues (models/program/program.hpp), at 1 x 1 tiles.
      const auto starts = with_padding_document(b).starts();
      for (std::int64_t r = 0; r < n; ++r) {
        BlockStats sum;
        for (const auto& call : allgather_calls(layout, r, starts, true)) {
          const BlockStats t = call_tiles(call, TileShape{1, 1});
          sum.allowed_pairs += t.allowed_pairs * call.batch;
          sum.tiles_total += t.tiles_total * call.batch;
          sum.tiles_visited += t.tiles_visited * call.batch;
          sum.tiles_computed += t.tiles_computed * call.batch;
          sum.visited_area += t.visited_area * call.batch;
          sum.masked_area += t.masked_area * call.batch;
          sum.skipped_area += t.skipped_area * call.batch;
        }
        CHECK(element_stats(got.pairs[static_cast<std::size_t>(r)], got.area[static_cast<std::size_t>(r)]) == sum);
      }
    }
  }
}

TEST_CASE("document_work: Ulysses' per-document calls", "[document_work]") {
  const std::vector<std::int64_t> lengths = {3, 1, 4};
  const auto t = document_totals(lengths);
  CHECK(t.pairs == 6 + 1 + 10);
  CHECK(t.area == 9 + 1 + 16);
}

TEST_CASE("document_work: layouts it counts, their quanta and the sizes they need", "[document_work]") {
  CHECK(DocLayout::of(LayoutSpec::parse("ptrr")).block == 128);
  CHECK(DocLayout::of(LayoutSpec::parse("ptrr:64")).block == 64);
  CHECK(DocLayout::of(LayoutSpec::parse("doc-zigzag")).document_quantum(4) == 8);
  CHECK(DocLayout::of(LayoutSpec::parse("doc-zigzag-docmajor")).document_quantum(4) == 8);
  CHECK(DocLayout::of(LayoutSpec::parse("striped")).document_quantum(4) == 1);
  CHECK_FALSE(DocLayout::counted(LayoutSpec::parse("cyclic:2")));
  CHECK_THROWS_AS(LayoutSpec::parse("zigzag:3"), InputError);
  CHECK(DocLayout::counted(LayoutSpec::parse("doc-zigzag")));
  CHECK_THROWS_AS(DocLayout::of(LayoutSpec::parse("perm:x.txt")), InputError);
  CHECK_NOTHROW(DocLayout::of(LayoutSpec::parse("zigzag")).check(16, 8));
  CHECK_THROWS_AS(DocLayout::of(LayoutSpec::parse("zigzag")).check(8, 8), InputError);
  CHECK_THROWS_AS(DocLayout::of(LayoutSpec::parse("ptrr:4")).check(16, 8), InputError);
  CHECK_THROWS_AS(DocLayout::of(LayoutSpec::parse("contiguous")).check(12, 8), InputError);
}
