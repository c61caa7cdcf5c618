// One configuration over many packed batches (models/analytic/packed_model.hpp) equals `predict` of the
// same scenario with those documents at 1 x 1 tiles (element granularity), for every strategy,
// implementation and layout that runs packed documents, on random small batches.
#include <cmath>
#include <memory>
#include <random>

#include <catch2/catch.hpp>

#include "models/analytic/analytic.hpp"
#include "models/analytic/breakdown.hpp"
#include "models/workload/documents.hpp"
#include "models/io/error.hpp"
#include "models/analytic/packed_model.hpp"
#include "models/catalog/resolve.hpp"

using namespace ringsim::models;

namespace {

struct Config {
  std::string impl, cp;
  std::int64_t sp;
  std::vector<std::string> layouts;
};

// Random documents filling n_seq, each a multiple of q.
std::vector<std::int64_t> random_docs(std::mt19937_64& rng, std::int64_t n_seq, std::int64_t q) {
  std::vector<std::int64_t> d;
  std::int64_t left = n_seq;
  while (left > 0) {
    const std::int64_t units = rng() % 5 == 0 ? 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n_seq / q))
                                              : 1 + static_cast<std::int64_t>(rng() % 4);
    d.push_back(std::min(left, units * q));
    left -= d.back();
  }
  return d;
}

void check_close(double got, double want, const char* what) {
  INFO(what << ": packed " << got << ", predict " << want);
  CHECK(std::abs(got - want) <= 1e-9 * std::max(1e-30, std::abs(want)));
}

// Every configuration's packed prediction against predict of the same batch, on random batches.
// `blockwise`: timed by the additive blockwise family instead of the implementation's own.
void check_against_predict(const std::vector<Config>& configs, bool blockwise) {
  const Catalog catalog;
  std::mt19937_64 rng(5);
  for (const auto& cfg : configs) {
    for (const auto& layout : cfg.layouts) {
      ScenarioSpec spec;
      spec.hardware = "h100-sxm";
      spec.model = "llama3-8b";
      spec.mp = 1;
      spec.sp = cfg.sp;
      spec.n_seq = 128;
      spec.cp = Strategy::parse(cfg.cp);
      spec.layout = ringsim::models::LayoutSpec::parse(layout);
      spec.impl = cfg.impl;
      spec.docs = DocumentsSpec::given("packed");
      spec.tile = TileShape{1, 1};
      auto parts = resolve_parts(spec, catalog);
      if (cfg.cp.starts_with("double-ring")) parts.impl.strategies.push_back("double-ring");
      if (blockwise) parts.attention = make_attention_cost("blockwise");
      const PackedModel model(spec, parts);
      PackedModel::Workspace ws;
      for (int trial = 0; trial < 6; ++trial) {
        auto docs = std::make_shared<Documents>();
        docs->spec = spec.docs->text();
        docs->lengths = random_docs(rng, spec.n_seq, model.document_quantum());
        INFO(cfg.impl << " " << cfg.cp << " " << layout << ", " << docs->lengths.size() << " documents");
        const ResolvedScenario full = resolve(spec, parts, docs);
        const Prediction want = predict(full);
        const Prediction got = model.predict(docs->lengths, ws);
        check_close(got.step_s, want.step_s, "step");
        check_close(got.attention_fwd_s, want.attention_fwd_s, "attention forward");
        check_close(got.attention_bwd_s, want.attention_bwd_s, "attention backward");
        check_close(got.exposed_transfer_s, want.exposed_transfer_s, "exposed ring transfers");
        check_close(got.exposed_collectives_s(), want.exposed_collectives_s(), "exposed collectives");
        check_close(got.attention_busiest_s, want.attention_busiest_s, "busiest device");
        check_close(got.attention_mean_s, want.attention_mean_s, "mean device");
        check_close(got.imbalance, want.imbalance, "imbalance");
        check_close(got.model_flops, want.model_flops, "model FLOPs");
        check_close(got.hide_threshold_tokens, want.hide_threshold_tokens, "hide threshold");
        check_close(got.memory_bytes, want.memory_bytes, "memory");
        CHECK(why(got, pass_breakdown(got)) == why(want, pass_breakdown(want)));
      }
    }
  }
}

}  // namespace

TEST_CASE("packed model: every strategy's prediction equals predict at 1 x 1 tiles", "[packed][oracle]") {
  // The exact counting is under test: every library's strategy and layouts, timed by the
  // additive blockwise family (the GPU libraries' own flash family is the next test's).
  check_against_predict(
      {
          {"ringsim-tiles", "ring", 4, {"contiguous", "striped", "zigzag", "doc-zigzag", "doc-zigzag-docmajor", "ptrr:4"}},
          // torch-cp's ring (SDPA) takes no document mask: packed documents go through its flex
          // all-gather path only (configs/ring_steps: no varlen entry), so it is not here.
          {"torch-cp", "allgather", 4, {"contiguous", "zigzag", "doc-zigzag", "doc-zigzag-docmajor", "ptrr:4"}},
          {"te-all-gather", "allgather", 4, {"zigzag", "doc-zigzag"}},
          {"rfa-llama3", "allgather", 2, {"contiguous"}},
          {"te-a2a", "ulysses", 4, {"zigzag", "doc-zigzag"}},
          {"verl-ulysses", "ulysses", 2, {"contiguous"}},
          {"te-a2a-p2p", "usp:2x2", 4, {"doc-zigzag"}},  // TE THD: each document in 2N chunks
          // No implementation in the catalog runs a double ring over packed documents; the model's
          // path for it (the window schedule) is checked with ringsim-tiles made to offer one.
          {"ringsim-tiles", "double-ring:2", 4, {"contiguous", "striped", "doc-zigzag", "ptrr:4"}},
      },
      true);
}

TEST_CASE("packed model: the libraries' flash family, block by block and call by call, equals predict at 1 x 1 tiles",
          "[packed][oracle]") {
  // The flash family is not additive (CTA waves, a host floor per step): the packed model times
  // each position's varlen step on its own, as predict times each device's, and Ulysses' calls
  // per document length.
  check_against_predict(
      {
          {"ring-flash-attn", "ring", 4, {"contiguous", "doc-zigzag"}},
          {"te-a2a-p2p", "usp:2x2", 4, {"doc-zigzag"}},
          // Ulysses: one flash call per document length on every rank.
          {"te-a2a", "ulysses", 4, {"zigzag", "doc-zigzag"}},
          {"verl-ulysses", "ulysses", 2, {"contiguous"}},
          // All-gather: each rank's calls, one per run of its queries within a document.
          {"te-all-gather", "allgather", 4, {"zigzag", "doc-zigzag"}},
          {"rfa-llama3", "allgather", 2, {"contiguous"}},
          {"torch-cp", "allgather", 4, {"contiguous", "zigzag", "doc-zigzag", "doc-zigzag-docmajor", "ptrr:4"}},
      },
      false);
}

TEST_CASE("packed model: configurations that cannot run say why", "[packed][errors]") {
  const Catalog catalog;
  ScenarioSpec spec;
  spec.hardware = "h100-sxm";
  spec.model = "llama3-8b";
  spec.sp = 4;
  spec.n_seq = 100;  // a multiple of 4, not of 2 x 4: doc-zigzag cannot split it
  spec.layout = ringsim::models::LayoutSpec::parse("doc-zigzag");
  spec.impl = "ringsim-tiles";
  spec.docs = ringsim::models::DocumentsSpec::given("packed");
  const auto parts = resolve_parts(spec, catalog);
  CHECK_THROWS_AS(PackedModel(spec, parts), InputError);
  spec.n_seq = 128;
  spec.layout = ringsim::models::LayoutSpec::parse("cyclic:2");  // a layout the per-document counting does not know
  CHECK_THROWS_AS(PackedModel(spec, parts), InputError);
  spec.layout = ringsim::models::LayoutSpec::parse("striped");
  spec.cp = ringsim::models::Strategy::parse("usp:2x2");  // ringsim-tiles runs rings only
  CHECK_THROWS_AS(PackedModel(spec, parts), InputError);
  // A striped all-gather under the flash family: one call per token, refused by name.
  spec.cp = ringsim::models::Strategy::parse("allgather");
  spec.layout = ringsim::models::LayoutSpec::parse("striped");
  spec.impl = "ringsim-tiles";
  auto striped = resolve_parts(spec, catalog);
  striped.impl.strategies.push_back("allgather");
  striped.attention = make_attention_cost("flash");
  try {
    const PackedModel m(spec, striped);
    FAIL("a striped all-gather timed call by call was accepted");
  } catch (const InputError& e) {
    CHECK(e.field() == "layout");
  }
}
