// Packed documents: lengths from files and distributions, the document layouts libraries use,
// exact work against brute force, and the pytorch #189902 trap.
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

#include "models/analytic/analytic.hpp"
#include "models/analytic/breakdown.hpp"
#include "models/workload/documents.hpp"
#include "models/io/error.hpp"
#include "models/workload/mask.hpp"
#include "models/program/program.hpp"
#include "models/catalog/resolve.hpp"
#include "models/workload/workload.hpp"

using namespace ringsim::models;
namespace fs = std::filesystem;

namespace {

struct TempFile {
  explicit TempFile(const std::string& text) {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("ringsim_docs_" + std::to_string(reinterpret_cast<std::uintptr_t>(this)) + "_" + std::to_string(counter++) + ".csv");
    std::ofstream(path) << text;
  }
  ~TempFile() { fs::remove(path); }
  fs::path path;
};

Documents docs_of(std::vector<std::int64_t> lengths) {
  Documents d;
  d.lengths = std::move(lengths);
  return d;
}

// Allowed pairs with the query on each device, by brute force.
std::vector<std::int64_t> pairs_per_device(const Layout& l, const Mask& m) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(l.n_dev()), 0);
  for (std::int64_t q = 0; q < l.n_seq(); ++q)
    for (std::int64_t k = 0; k <= q; ++k)
      if (m.allowed(q, k, 0)) ++p[static_cast<std::size_t>(l.place(q).device)];
  return p;
}

double max_over_mean(const std::vector<std::int64_t>& v) {
  const double mean = static_cast<double>(std::accumulate(v.begin(), v.end(), std::int64_t{0})) / static_cast<double>(v.size());
  return static_cast<double>(*std::max_element(v.begin(), v.end())) / mean;
}

}  // namespace

TEST_CASE("document lengths from a file: header, commas, comments, the sum must be n_seq", "[docs]") {
  const TempFile f("length\n# three documents\n100, 300\n624\n");
  const auto d = Documents::make(DocumentsSpec::parse(f.path.string()), 1024);
  CHECK(d.lengths == std::vector<std::int64_t>{100, 300, 624});
  CHECK(d.starts() == std::vector<std::int64_t>{0, 100, 400});
  CHECK(d.causal_pairs() == 100 * 101 / 2 + 300 * 301 / 2 + 624 * 625 / 2);
  try {
    (void)Documents::make(DocumentsSpec::parse(f.path.string()), 1000);
    FAIL("accepted a sum above n_seq");
  } catch (const InputError& e) {
    CHECK(e.file() == f.path.string());
    CHECK(e.field() == "docs");
    CHECK(e.line() == 4);
  }
  try {
    (void)Documents::make(DocumentsSpec::parse(f.path.string()), 2048);
    FAIL("accepted a sum below n_seq");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("sum to 1024, expected n_seq = 2048") != std::string::npos);
  }
  const TempFile bad("100\n12x\n");
  try {
    (void)Documents::make(DocumentsSpec::parse(bad.path.string()), 112);
    FAIL("accepted a malformed length");
  } catch (const InputError& e) {
    CHECK(e.line() == 2);
  }
  CHECK_THROWS_AS(Documents::make(DocumentsSpec::parse("no/such/file.csv"), 10), InputError);
}

TEST_CASE("log-normal documents: deterministic, long-tailed, quantised, summing to n_seq", "[docs]") {
  const auto a = Documents::make(DocumentsSpec::parse("lognormal:2000:1.5:42:16"), 1 << 20);
  const auto b = Documents::make(DocumentsSpec::parse("lognormal:2000:1.5:42:16"), 1 << 20);
  CHECK(a.lengths == b.lengths);
  CHECK(a.total() == (1 << 20));
  for (const auto l : a.lengths) CHECK(l % 16 == 0);
  // A long tail: the longest document is many times the median.
  auto sorted = a.lengths;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted.back() > 10 * sorted[sorted.size() / 2]);
  CHECK(Documents::make(DocumentsSpec::parse("lognormal:2000:1.5:43:16"), 1 << 20).lengths != a.lengths);
  CHECK_THROWS_AS(Documents::make(DocumentsSpec::parse("lognormal:2000:1.5:42:7"), 1000), InputError);  // 1000 % 7 != 0
  CHECK_THROWS_AS(Documents::make(DocumentsSpec::parse("lognormal:0:1:1"), 1000), InputError);
  CHECK_THROWS_AS(Documents::make(DocumentsSpec::parse("lognormal:10:1"), 1000), InputError);
}

TEST_CASE("document layouts: per-document head-tail chunks, rank-major or document-major", "[docs][layout]") {
  const auto d = docs_of({4, 12});
  const auto rank_major = document_layout(LayoutSpec::parse("doc-zigzag"), d, 2);
  const auto doc_major = document_layout(LayoutSpec::parse("doc-zigzag-docmajor"), d, 2);
  // Rank r gets chunks r and 3 - r of every document (chunks of 1 and of 3 tokens).
  CHECK(rank_major.positions(0) == std::vector<std::int64_t>{0, 3, 4, 5, 6, 13, 14, 15});
  CHECK(rank_major.positions(1) == std::vector<std::int64_t>{1, 2, 7, 8, 9, 10, 11, 12});
  // Document-major, then cut in two: the cut lands inside the second document.
  CHECK(doc_major.positions(0) == std::vector<std::int64_t>{0, 3, 1, 2, 4, 5, 6, 13});
  CHECK(doc_major.positions(1) == std::vector<std::int64_t>{14, 15, 7, 8, 9, 10, 11, 12});
  // A length that does not split into 2 N chunks is refused, naming the document.
  try {
    (void)document_layout(LayoutSpec::parse("doc-zigzag"), docs_of({6, 10}), 2);
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("document 0 has length 6") != std::string::npos);
  }
}

TEST_CASE("pytorch #189902: the document-major per-document balancer leaves a rank the causal tail", "[docs][trap]") {
  // The PR's example: documents of 4 and 12 tokens on 2 ranks.
  const auto d = docs_of({4, 12});
  const auto mask = make_documents(d.starts(), 16);
  CHECK(pairs_per_device(document_layout(LayoutSpec::parse("doc-zigzag-docmajor"), d, 2), *mask) == std::vector<std::int64_t>{26, 62});
  CHECK(pairs_per_device(document_layout(LayoutSpec::parse("doc-zigzag"), d, 2), *mask) == std::vector<std::int64_t>{44, 44});

  // At scale, through the scenario: a long-tailed batch on 8 ranks, all-gather (torch's flex
  // path). The document-major layout's busiest rank does far more than the mean, the rank-major
  // one none more; the prediction's imbalance and its "why" say so.
  const Catalog cat;
  ScenarioSpec s;
  s.hardware = "h100-sxm";
  s.model = "llama3-8b";
  s.mp = 1;
  s.sp = 8;
  s.n_seq = 131072;
  s.docs = ringsim::models::DocumentsSpec::parse("lognormal:4096:1.5:3:16");
  s.cp = ringsim::models::Strategy::parse("allgather");
  s.impl = "torch-cp";
  s.layout = ringsim::models::LayoutSpec::parse("doc-zigzag-docmajor");
  const auto trap = resolve(s, cat);
  s.layout = ringsim::models::LayoutSpec::parse("doc-zigzag");
  const auto fixed = resolve(s, cat);
  const double trap_ratio = max_over_mean(trap.program->compute.front().pairs);
  const double fixed_ratio = max_over_mean(fixed.program->compute.front().pairs);
  INFO("document-major " << trap_ratio << ", rank-major " << fixed_ratio);
  CHECK(trap_ratio > 1.3);
  CHECK(fixed_ratio == Approx(1.0).epsilon(1e-12));
  const auto pt = predict(trap), pf = predict(fixed);
  CHECK(pt.imbalance > 1.2);
  // Equal pairs; the kernels' CTA tiles and waves over the ranks' different call shapes differ a little.
  CHECK(pf.imbalance < 1.05);
  CHECK(pt.step_s > pf.step_s);
  CHECK(why(pt, pass_breakdown(pt)).find("imbalance") != std::string::npos);
}

TEST_CASE("PTRR: torch's scheduling example and its document-mask reordering", "[docs][layout]") {
  const auto groups = ptrr_groups({9, 14, 2, 20, 10, 15, 8, 14, 16, 19, 15, 3, 12, 1, 12, 10}, 4);
  CHECK(groups == std::vector<std::vector<std::int64_t>>{{3, 12, 13, 14}, {2, 4, 7, 9}, {1, 8, 11, 15}, {0, 5, 6, 10}});
  // _PTRRLoadBalancer's docstring: documents of 4, 8 and 4 blocks on 2 ranks.
  const auto l = document_layout(LayoutSpec::parse("ptrr:1"), docs_of({4, 8, 4}), 2);
  std::vector<std::int64_t> order = l.positions(0);
  const auto second = l.positions(1);
  order.insert(order.end(), second.begin(), second.end());
  CHECK(order == std::vector<std::int64_t>{2, 3, 5, 6, 8, 11, 12, 13, 0, 1, 4, 7, 9, 10, 14, 15});
  // Both ranks get 28 pairs, as the docstring says.
  const auto mask = make_documents(docs_of({4, 8, 4}).starts(), 16);
  CHECK(pairs_per_device(l, *mask) == std::vector<std::int64_t>{28, 28});
  CHECK_THROWS_AS(document_layout(LayoutSpec::parse("ptrr:3"), docs_of({4, 8, 4}), 2), InputError);  // 16 % (3 x 2) != 0
}

TEST_CASE("document layouts: per-(device, round) ring blocks equal brute force", "[docs][oracle]") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 4; ++trial) {
    const std::int64_t n_dev = 2 + static_cast<std::int64_t>(rng() % 3);
    const auto d = Documents::lognormal(12.0 * static_cast<double>(n_dev), 1.0, trial, 2 * n_dev, 2 * n_dev * 24);
    const auto mask = make_documents(d.starts(), d.total());
    for (const std::string spec : {"doc-zigzag", "doc-zigzag-docmajor", "ptrr:2"}) {
      INFO(spec << " trial " << trial);
      const auto l = document_layout(LayoutSpec::parse(spec), d, n_dev);
      const TileShape tile{4, 8};
      const Workload w(l, *mask, tile, 1);
      for (std::int64_t round = 0; round < n_dev; ++round)
        for (std::int64_t dev = 0; dev < n_dev; ++dev) {
          const auto k = Workload::kv_block_of(dev, round, n_dev);
          std::int64_t pairs = 0, tiles = 0;
          const auto qp = l.positions(dev), kp = l.positions(k);
          for (std::int64_t qt = 0; qt < l.block(); qt += tile.q)
            for (std::int64_t kt = 0; kt < l.block(); kt += tile.k) {
              std::int64_t in_tile = 0;
              for (std::int64_t a = qt; a < std::min(l.block(), qt + tile.q); ++a)
                for (std::int64_t b = kt; b < std::min(l.block(), kt + tile.k); ++b)
                  in_tile += mask->allowed(qp[static_cast<std::size_t>(a)], kp[static_cast<std::size_t>(b)], 0) ? 1 : 0;
              pairs += in_tile;
              tiles += in_tile > 0 ? 1 : 0;
            }
          const auto& b = w.block(round, dev);
          CHECK(b.allowed_pairs == pairs);
          CHECK(b.tiles_visited == tiles);
        }
    }
  }
}
