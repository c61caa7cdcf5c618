// Plans from a length distribution: reading lengths and histograms, packing against a plain
// first-fit that scans every sequence (NeMo's), the plan's figures against predictions of its
// packs made one by one, its rankings against a scan of the figures, and the same bytes for any
// thread count.
#include <algorithm>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>

#include "models/analytic/training_step.hpp"

#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/analytic/packed_model.hpp"
#include "planning/length_plan.hpp"
#include "planning/lengths.hpp"
#include "planning/packing.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim;
using namespace ringsim::planning;

namespace {

// NeMo's first_fit written out: every sequence scanned in order for room.
std::vector<std::vector<std::int64_t>> plain_first_fit(const std::vector<std::int64_t>& padded, std::int64_t n_seq) {
  std::vector<std::vector<std::int64_t>> bins;
  std::vector<std::int64_t> used;
  for (const auto l : padded) {
    std::size_t b = 0;
    while (b < bins.size() && used[b] + l > n_seq) ++b;
    if (b == bins.size()) {
      bins.emplace_back();
      used.push_back(0);
    }
    bins[b].push_back(l);
    used[b] += l;
  }
  return bins;
}

std::vector<std::vector<std::int64_t>> packs_of(const Packs& p) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t i = 0; i < p.size(); ++i) {
    const auto s = p.pack(i);
    out.emplace_back(s.begin(), s.end());
  }
  return out;
}

// Lengths cut at n_seq and padded to q, in order.
std::vector<std::int64_t> pieces(const std::vector<std::int64_t>& lengths, std::int64_t n_seq, std::int64_t q) {
  std::vector<std::int64_t> out;
  for (auto l : lengths) {
    for (; l > n_seq; l -= n_seq) out.push_back(n_seq);
    out.push_back((l + q - 1) / q * q);
  }
  return out;
}

LengthPlanRequest small_request() {
  LengthPlanRequest r;
  r.hardware = "h100-sxm";
  r.model = "llama3-8b";
  r.n_seq = 4096;
  r.mp = 1;
  r.sp = 4;
  r.bucket_edges = {256, 1024};
  r.recompute = models::Recompute::Full;
  return r;
}

}  // namespace

TEST_CASE("lengths: one per line or LENGTH,COUNT rows, comments and a header, errors name file and line",
          "[lengths]") {
  test::TempDir dir;
  const auto f = dir.file("lengths.csv");
  test::write_file(f, "length,count\n# a histogram and single documents\n100,2\n7\n 30,3 \n");
  CHECK(read_lengths(f).lengths == std::vector<std::int64_t>{100, 100, 7, 30, 30, 30});
  test::write_file(f, "30 3\n");  // words without the comma: refused, not read as one number
  CHECK_THROWS_AS(read_lengths(f), models::InputError);
  test::write_file(f, "5\n6,0\n");
  try {
    (void)read_lengths(f);
    FAIL("a count of 0 was accepted");
  } catch (const models::InputError& e) {
    CHECK(e.line() == 2);
    CHECK(e.field() == "lengths");
  }
  test::write_file(f, "5,1,2\n");
  CHECK_THROWS_AS(read_lengths(f), models::InputError);
  test::write_file(f, "5\nx\n");
  CHECK_THROWS_AS(read_lengths(f), models::InputError);
  test::write_file(f, "# nothing\n");
  CHECK_THROWS_AS(read_lengths(f), models::InputError);
  test::write_file(f, "1,99999999999\n");  // past the sample's size: refused before allocating
  CHECK_THROWS_AS(read_lengths(f), models::InputError);
  CHECK_THROWS_AS(read_lengths(dir.file("missing.csv")), models::InputError);
  CHECK_THROWS_AS(read_lengths("lognormal:100:1:1"), models::InputError);
  CHECK_THROWS_AS(read_lengths("lognormal:100:1:1:0"), models::InputError);
  const auto a = read_lengths("lognormal:1000:1.2:7:500");
  CHECK(a.lengths.size() == 500);
  CHECK(a.lengths == read_lengths("lognormal:1000:1.2:7:500").lengths);
  CHECK(*std::min_element(a.lengths.begin(), a.lengths.end()) >= 1);
}

TEST_CASE("packing: first-fit equals a plain scan of every sequence, cuts, padding and order", "[packing]") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const std::int64_t q = trial % 3 == 0 ? 8 : 1;
    const std::int64_t n_seq = q * static_cast<std::int64_t>(8 + rng() % 40);
    std::vector<std::int64_t> lengths(1 + rng() % 60);
    for (auto& l : lengths) l = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(trial % 5 == 0 ? 3 * n_seq : n_seq / 2));
    const auto p = pieces(lengths, n_seq, q);
    const auto ff = pack_documents(lengths, n_seq, q, Packing{PackingKind::FirstFit});
    CHECK(packs_of(ff) == plain_first_fit(p, n_seq));
    auto sorted = p;
    std::stable_sort(sorted.begin(), sorted.end(), std::greater<>());
    CHECK(packs_of(pack_documents(lengths, n_seq, q, Packing{PackingKind::FirstFitDecreasing})) == plain_first_fit(sorted, n_seq));
    // Shuffled: the same documents in the same number of sequences as first-fit of some order,
    // the same order for the same seed.
    const auto sh = pack_documents(lengths, n_seq, q, parse_packing("first-fit-shuffle:5"));
    CHECK(packs_of(sh) == packs_of(pack_documents(lengths, n_seq, q, parse_packing("first-fit-shuffle:5"))));
    std::vector<std::int64_t> all_sh = sh.lengths, all_p = p;
    std::sort(all_sh.begin(), all_sh.end());
    std::sort(all_p.begin(), all_p.end());
    CHECK(all_sh == all_p);
    // Next-fit: sequences in order, each closed by the first document that does not fit.
    const auto nf = packs_of(pack_documents(lengths, n_seq, q, Packing{PackingKind::NextFit}));
    std::vector<std::int64_t> flat;
    for (const auto& s : nf) {
      CHECK(std::accumulate(s.begin(), s.end(), std::int64_t{0}) <= n_seq);
      flat.insert(flat.end(), s.begin(), s.end());
    }
    CHECK(flat == p);
    for (std::size_t i = 0; i + 1 < nf.size(); ++i)
      CHECK(std::accumulate(nf[i].begin(), nf[i].end(), std::int64_t{0}) + nf[i + 1].front() > n_seq);
    // The file's tokens are all there, padding excluded, and each pack's longest document.
    CHECK(std::accumulate(ff.real_tokens.begin(), ff.real_tokens.end(), std::int64_t{0}) ==
          std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0}));
    for (std::int64_t i = 0; i < ff.size(); ++i) {
      const auto s = ff.pack(i);
      CHECK(*std::max_element(s.begin(), s.end()) >= ff.longest[static_cast<std::size_t>(i)]);
      CHECK(ff.longest[static_cast<std::size_t>(i)] <= n_seq);
    }
  }
  CHECK_THROWS_AS(pack_documents(std::vector<std::int64_t>{5}, 100, 8, Packing{}), models::InputError);
  CHECK(parse_packing("next-fit").kind == PackingKind::NextFit);
  CHECK(parse_packing("first-fit-shuffle").seed == 1);
  CHECK(parse_packing("first-fit-shuffle:7").seed == 7);
  CHECK_THROWS_AS(parse_packing("first-fit-shuffle:x"), models::InputError);
  CHECK(to_string(parse_packing("first-fit-shuffle:7")) == "first-fit-shuffle:7");
  CHECK_THROWS_AS(parse_packing("best-fit"), models::InputError);
}

TEST_CASE("length plan: figures are the packs' predictions summed, rankings sort them, any thread count", "[length_plan]") {
  const models::Catalog catalog;
  auto r = small_request();
  r.strategies = ringsim::models::parse_strategies({"ring", "allgather", "ulysses"});
  r.layouts = ringsim::models::parse_layouts({"contiguous", "striped", "zigzag", "doc-zigzag"});
  r.threads = 1;
  const auto sample = lognormal_lengths(300, 1.3, 11, 400);
  const auto plan = plan_from_lengths(r, sample, catalog);
  REQUIRE(plan.buckets.size() == 3);
  REQUIRE(!plan.ranking.back().empty());

  // One candidate by hand: every pack predicted on its own, summed per bucket.
  for (std::size_t c = 0; c < plan.candidates.size(); ++c) {
    const auto& cand = plan.candidates[c];
    if (!cand.skipped.empty()) continue;
    models::ScenarioSpec spec;
    spec.hardware = r.hardware;
    spec.model = r.model;
    spec.sp = r.sp;
    spec.n_seq = r.n_seq;
    spec.cp = models::Strategy::parse(cand.cp);
    spec.layout = models::LayoutSpec::parse(cand.layout);
    spec.impl = cand.impl;
    spec.docs = models::DocumentsSpec::given("packed");
    auto parts = models::resolve_parts(spec, catalog);
    parts.profile.recompute = true;
    const models::PackedModel model(spec, parts);
    models::PackedModel::Workspace ws;
    const auto& packs = plan.packings[static_cast<std::size_t>(cand.packing)];
    CHECK(packs.quantum == model.document_quantum());
    std::vector<double> step(plan.buckets.size() + 1, 0.0);
    std::vector<std::int64_t> count(plan.buckets.size() + 1, 0), tokens(plan.buckets.size() + 1, 0);
    // Each pack a step as predict trains it: one replica, the request's ZeRO stage, the gradient
    // synchronisation the pack's attention backward does not hide.
    models::TrainingOptions o;
    o.zero = r.zero;
    o.recompute = r.recompute;
    o.memory = r.memory;
    for (std::int64_t p = 0; p < packs.size(); ++p) {
      const auto pred = model.predict(packs.pack(p), ws);
      const double trained = models::training_step(model.scenario(), pred, o).step_s;
      std::size_t b = 0;
      while (packs.longest[static_cast<std::size_t>(p)] > plan.buckets[b].hi) ++b;
      for (const auto i : {b, plan.buckets.size()}) {
        step[i] += trained;
        ++count[i];
        tokens[i] += packs.real_tokens[static_cast<std::size_t>(p)];
      }
    }
    for (std::size_t b = 0; b <= plan.buckets.size(); ++b) {
      INFO(cand.cp << " " << cand.layout << " bucket " << b);
      CHECK(plan.figures[c][b].packs == count[b]);
      CHECK(plan.figures[c][b].real_tokens == tokens[b]);
      CHECK(plan.figures[c][b].sum.step_s == Approx(step[b]).epsilon(1e-12));
      CHECK(plan.figures[c][b].parts.total() == Approx(step[b]).epsilon(1e-9));
    }
  }
  // Rankings: every runnable candidate that fits and has packs, best tokens/s first.
  for (std::size_t b = 0; b <= plan.buckets.size(); ++b) {
    std::vector<std::size_t> listed;
    double last = 1e300;
    for (const auto& row : plan.ranking[b]) {
      const double rate = plan.figures[row.candidate][b].tokens_per_s();
      CHECK(rate <= last);
      last = rate;
      listed.push_back(row.candidate);
      for (const auto t : row.ties) {
        CHECK(plan.figures[t][b].tokens_per_s() == rate);
        CHECK(plan.candidates[t].cp == plan.candidates[row.candidate].cp);
        listed.push_back(t);
      }
    }
    std::sort(listed.begin(), listed.end());
    std::vector<std::size_t> expect;
    for (std::size_t c = 0; c < plan.candidates.size(); ++c)
      if (plan.candidates[c].skipped.empty() && plan.candidates[c].fits_memory && plan.figures[c][b].packs > 0)
        expect.push_back(c);
    CHECK(listed == expect);
  }
  auto on_ampere = r;
  on_ampere.hardware = "a100-80gb";
  const auto ampere = plan_from_lengths(on_ampere, sample, catalog);
  // Ulysses does the same work whatever the layout: its layouts tie (the ones without padding),
  // across libraries too where they call the same kernel. On Hopper TransformerEngine calls cuDNN
  // and verl FlashAttention-2, so this property is checked on an A100, where both call the latter.
  bool ulysses_runs = false, ulysses_ties = false;
  for (const auto& cand : ampere.candidates)
    if (cand.cp == "ulysses") {
      ulysses_runs = ulysses_runs || cand.skipped.empty();
    }
  for (const auto& row : ampere.ranking.back())
    if (ampere.candidates[row.candidate].cp == "ulysses" && !row.ties.empty()) ulysses_ties = true;
  CHECK(ulysses_runs);
  CHECK(ulysses_ties);

  auto r2 = r;
  r2.threads = 3;
  const auto again = plan_from_lengths(r2, sample, catalog);
  for (std::size_t c = 0; c < plan.candidates.size(); ++c)
    for (std::size_t b = 0; b <= plan.buckets.size(); ++b) {
      CHECK(again.figures[c][b].sum.step_s == plan.figures[c][b].sum.step_s);
      CHECK(again.figures[c][b].imbalance_sum == plan.figures[c][b].imbalance_sum);
    }
}

TEST_CASE("length plan: candidates that cannot run say why, bad requests are input errors", "[length_plan][errors]") {
  const models::Catalog catalog;
  auto r = small_request();
  r.strategies = ringsim::models::parse_strategies({"ring", "double-ring:2"});
  r.layouts = ringsim::models::parse_layouts({"striped"});
  // No production library runs packed documents on a striped ring (ring-flash-attention has no
  // stripe varlen function): the research tile loop does.
  r.include_research = true;
  const auto plan = plan_from_lengths(r, lognormal_lengths(300, 1, 1, 50), catalog);
  REQUIRE(plan.candidates.size() == 2);
  INFO("candidate 0: " << plan.candidates[0].skipped << "; candidate 1: " << plan.candidates[1].skipped);
  CHECK(plan.candidates[0].skipped.empty());
  CHECK(plan.candidates[1].skipped.find("no implementation offers strategy double-ring:2") != std::string::npos);
  auto bad = r;
  bad.bucket_edges = {1024, 512};
  CHECK_THROWS_AS(plan_from_lengths(bad, lognormal_lengths(300, 1, 1, 50), catalog), models::InputError);
  bad = r;
  bad.bucket_edges = {4096};
  CHECK_THROWS_AS(plan_from_lengths(bad, lognormal_lengths(300, 1, 1, 50), catalog), models::InputError);
  bad = r;
  bad.layouts = ringsim::models::parse_layouts({"cyclic:2"});
  CHECK_THROWS_AS(plan_from_lengths(bad, lognormal_lengths(300, 1, 1, 50), catalog), models::InputError);
  CHECK_THROWS_AS(ringsim::models::parse_strategies({"rings"}), models::InputError);
  bad = r;
  bad.impls = {"nope"};
  CHECK_THROWS_AS(plan_from_lengths(bad, lognormal_lengths(300, 1, 1, 50), catalog), models::InputError);
}

TEST_CASE("length plan: a candidate's why names the packs' mean imbalance, not the sum's zero", "[length_plan]") {
  planning::BucketFigures f;
  f.packs = 4;
  f.imbalance_sum = 4 * 1.42;
  f.sum.step_s = 10;
  f.sum.attention_fwd_s = 3;
  f.sum.attention_bwd_s = 6;
  f.sum.other_compute_s = 1;  // the columns sum to the step, as a prediction's do
  f.sum.attention_busiest_s = 9;
  f.sum.attention_mean_s = 6.3;  // 2.7 s of the 10 s step waiting on the busiest device
  f.parts = models::pass_breakdown(f.sum);
  const auto why = f.why();
  INFO(why);
  CHECK(why.find("imbalance 1.42") != std::string::npos);
  CHECK(why.find("27% of the step") != std::string::npos);
}
