// Plans from a length distribution (Google Benchmark): documents per second
//   - through the per-document counting alone (models/document_work): a layout's ring grid, or
//     the all-gather's ranks, for every packed sequence of a sample;
//   - through the whole prediction of one configuration per packed sequence
//     (models/packed_model: counting, the ring's rounds, the program's stages);
//   - through a whole plan (planning/length_plan: packing, every candidate of the mesh), on one
//     thread.
// The sample: 20,000 log-normal documents (mean 4096 tokens, sigma 1.5, seed 1), packed first-fit
// into sequences of 128k tokens for 8 positions and of 1M tokens for 64.
#include <map>

#include <benchmark/benchmark.h>

#include "models/catalog/resolve.hpp"
#include "models/workload/document_work.hpp"
#include "models/analytic/packed_model.hpp"
#include "planning/length_plan.hpp"
#include "planning/lengths.hpp"
#include "planning/packing.hpp"

using namespace ringsim;

namespace {

const std::vector<std::string> kLayouts = {"contiguous", "striped", "zigzag", "doc-zigzag", "doc-zigzag-docmajor", "ptrr"};

std::int64_t n_seq_for(std::int64_t n) { return n >= 64 ? 1 << 20 : 1 << 17; }

const planning::Packs& packs_for(std::int64_t n, std::int64_t quantum) {
  static std::map<std::pair<std::int64_t, std::int64_t>, planning::Packs> cache;
  const auto key = std::make_pair(n, quantum);
  auto it = cache.find(key);
  if (it == cache.end()) {
    const auto sample = planning::lognormal_lengths(4096, 1.5, 1, 20000);
    it = cache.emplace(key, planning::pack_documents(sample.lengths, n_seq_for(n), quantum, planning::Packing{})).first;
  }
  return it->second;
}

void set_rates(benchmark::State& state, std::int64_t documents, std::int64_t sequences) {
  state.counters["documents_per_s"] = benchmark::Counter(static_cast<double>(documents), benchmark::Counter::kIsRate);
  state.counters["sequences_per_s"] = benchmark::Counter(static_cast<double>(sequences), benchmark::Counter::kIsRate);
}

// Every pack of the sample counted by `count(layout, pack, n_seq, n)` (a DocumentCounter
// method writing into the caller's buffer). Args: layout index, positions.
template <class Count>
void count_packs(benchmark::State& state, Count count) {
  const auto layout = models::DocLayout::of(models::LayoutSpec::parse(kLayouts[static_cast<std::size_t>(state.range(0))]));
  const std::int64_t n = state.range(1);
  const auto& packs = packs_for(n, layout.document_quantum(n));
  std::int64_t documents = 0, sequences = 0;
  for (auto _ : state) {
    for (std::int64_t p = 0; p < packs.size(); ++p) {
      count(layout, packs.pack(p), packs.n_seq, n);
      documents += static_cast<std::int64_t>(packs.pack(p).size());
    }
    sequences += packs.size();
  }
  state.SetLabel(layout.spec);
  set_rates(state, documents, sequences);
}

void BM_RingCounting(benchmark::State& state) {
  models::DocumentCounter counter;
  models::RingPairs pairs;
  count_packs(state, [&](const auto& layout, auto pack, std::int64_t n_seq, std::int64_t n) {
    counter.ring(layout, pack, n_seq, n, pairs);
    benchmark::DoNotOptimize(pairs.pairs.data());
  });
}
BENCHMARK(BM_RingCounting)->ArgsProduct({{0, 1, 2, 3, 4, 5}, {8, 64}})->Unit(benchmark::kMillisecond);

void BM_AllgatherCounting(benchmark::State& state) {
  models::DocumentCounter counter;
  models::RankWork work;
  count_packs(state, [&](const auto& layout, auto pack, std::int64_t n_seq, std::int64_t n) {
    counter.allgather(layout, pack, n_seq, n, work);
    benchmark::DoNotOptimize(work.pairs.data());
  });
}
BENCHMARK(BM_AllgatherCounting)->ArgsProduct({{0, 1, 2, 3, 4, 5}, {8, 64}})->Unit(benchmark::kMillisecond);

struct Config {
  const char* cp;
  const char* layout;
  const char* impl;
  std::int64_t sp;
  // Timed by the additive blockwise family instead of the implementation's own flash family:
  // the counting and prediction path without the kernel-time model.
  bool blockwise = false;
};
const std::vector<Config> kConfigs = {
    {"ring", "striped", "ringsim-tiles", 8},         {"ring", "striped", "ringsim-tiles", 64},
    {"ring", "ptrr", "ringsim-tiles", 64},           {"allgather", "doc-zigzag", "te-all-gather", 64, true},
    {"ulysses", "contiguous", "verl-ulysses", 8},  // flash: a call per document length
    // The flash family, each rank's pieces as one varlen launch.
    {"allgather", "doc-zigzag", "te-all-gather", 8}, {"allgather", "doc-zigzag", "te-all-gather", 64},
    {"allgather", "ptrr", "torch-cp", 64},
    // The flash family, block by block: a varlen step per position and round.
    {"usp:8x8", "doc-zigzag", "te-a2a-p2p", 64},     {"ring", "doc-zigzag", "ring-flash-attn", 8},
    {"ring", "doc-zigzag", "ring-flash-attn", 64},
};

void BM_PackedPredict(benchmark::State& state) {
  const auto& c = kConfigs[static_cast<std::size_t>(state.range(0))];
  models::ScenarioSpec spec;
  spec.hardware = "h100-sxm";
  spec.model = "llama3-8b";
  spec.sp = c.sp;
  spec.n_seq = n_seq_for(c.sp);
  spec.cp = models::Strategy::parse(c.cp);
  spec.layout = models::LayoutSpec::parse(c.layout);
  spec.impl = c.impl;
  spec.docs = ringsim::models::DocumentsSpec::given("packed");
  const models::Catalog catalog;
  auto parts = models::resolve_parts(spec, catalog);
  if (c.blockwise) parts.attention = models::make_attention_cost("blockwise");
  const models::PackedModel model(spec, parts);
  const auto& packs = packs_for(c.sp, model.document_quantum());
  models::PackedModel::Workspace ws;
  std::int64_t documents = 0, sequences = 0;
  for (auto _ : state) {
    for (std::int64_t p = 0; p < packs.size(); ++p) {
      benchmark::DoNotOptimize(model.predict(packs.pack(p), ws).step_s);
      documents += static_cast<std::int64_t>(packs.pack(p).size());
    }
    sequences += packs.size();
  }
  state.SetLabel(std::string(c.cp) + " " + c.layout + " (" + c.impl + (c.blockwise ? ", blockwise family" : "") +
                 ") on " + std::to_string(c.sp));
  set_rates(state, documents, sequences);
}
BENCHMARK(BM_PackedPredict)->DenseRange(0, static_cast<std::int64_t>(kConfigs.size()) - 1)->Unit(benchmark::kMillisecond);

// A whole plan on one thread: the documents of the sample through every candidate.
void BM_PlanDocs(benchmark::State& state) {
  planning::LengthPlanRequest r;
  r.sp = state.range(0);
  r.n_seq = n_seq_for(r.sp);
  r.threads = 1;
  const auto sample = planning::lognormal_lengths(4096, 1.5, 1, 20000);
  const models::Catalog catalog;
  std::int64_t documents = 0, sequences = 0, candidates = 0;
  for (auto _ : state) {
    const auto plan = planning::plan_from_lengths(r, sample, catalog);
    documents += plan.documents_counted;
    sequences += plan.predictions;
    candidates = 0;
    for (const auto& c : plan.candidates) candidates += c.skipped.empty();
  }
  state.counters["candidates"] = static_cast<double>(candidates);
  set_rates(state, documents, sequences);
}
BENCHMARK(BM_PlanDocs)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
BENCHMARK_MAIN();
