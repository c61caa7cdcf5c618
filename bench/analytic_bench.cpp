// Analytic prediction throughput and workload-counting throughput (Google Benchmark).
// A "prediction" is what a sweep does per point: build the layout, mask, workload and cost
// model for one (layout, sp, n_seq, tile) and run the analytic predictor; hardware, model and
// profile files are loaded once, as a sweep would.
#include <benchmark/benchmark.h>

#include "models/catalog/resolve.hpp"
#include "models/analytic/analytic.hpp"
#include "models/families/attention_cost.hpp"
#include "models/families/kernel_time.hpp"

using namespace ringsim::models;

namespace {

struct Fixture {
  Catalog cat;
  Hardware hw = cat.hardware("a100-80gb");
  ModelConfig model = cat.model("ringattn-1b");
  // The paper's code (the sweep the speed bar is about); the flash libraries have their own benchmark below.
  Profile profile = cat.profile("", hw, "jax-blockwise");
  Implementation impl = cat.implementation(profile.implementation);
  std::shared_ptr<const AttentionCost> attention = make_attention_cost(impl.kernel);
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

double predict_point(const std::string& layout_spec, std::int64_t sp, std::int64_t n_seq, TileShape tile) {
  auto& f = fixture();
  ResolvedScenario r;
  r.spec.sp = sp;
  r.spec.n_seq = n_seq;
  r.spec.layout = LayoutSpec::parse(layout_spec);
  r.hardware = f.hw;
  r.model = f.model;
  r.profile = f.profile;
  r.impl = f.impl;
  r.attention = f.attention;
  r.layout = std::make_unique<Layout>(Layout::make(r.spec.layout, n_seq, sp));
  r.mask = make_causal();
  r.tile = tile;
  r.cost = std::make_unique<CostModel>(r.hardware, r.profile, r.model, 1, 1, 1);
  r.workload = std::make_unique<Workload>(*r.layout, *r.mask, tile,
                                          kv_block_bytes(r.layout->block(), r.model.kv_heads, r.model.head_dim, 2));
  return predict(r).step_s;
}

// The paper's sweep: layouts x ring sizes x sequence lengths, tile 2048 x 4096.
void BM_AnalyticPredictionSweep(benchmark::State& state) {
  const char* layouts[] = {"contiguous", "striped", "zigzag"};
  std::int64_t points = 0;
  for (auto _ : state) {
    for (const char* l : layouts)
      for (std::int64_t sp : {2, 4, 8})
        for (std::int64_t c : {4096, 8192, 16384, 32768}) {
          benchmark::DoNotOptimize(predict_point(l, sp, sp * c, {2048, 4096}));
          ++points;
        }
  }
  state.counters["predictions_per_s"] = benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AnalyticPredictionSweep);

// Large rings: the class-memoised workload keeps a 1024-device prediction cheap.
void BM_AnalyticPredictionLargeRing(benchmark::State& state) {
  const auto sp = state.range(0);
  for (auto _ : state) benchmark::DoNotOptimize(predict_point("striped", sp, sp * 8192, {128, 128}));
  state.counters["predictions_per_s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_AnalyticPredictionLargeRing)->Arg(64)->Arg(1024)->Arg(65536);

// Raw tile counting of one block with the closed forms: tiles per second.
void BM_CountBlockTiles(benchmark::State& state) {
  const std::int64_t c = state.range(0);
  const auto mask = make_window(c / 3);
  const auto l = Layout::striped(8 * c, 8);
  const TileShape tile{128, 128};
  std::int64_t tiles = 0;
  for (auto _ : state) {
    const auto s = Workload::count_block(l, *mask, 5, 2, tile);
    benchmark::DoNotOptimize(s);
    tiles += s.tiles_total;
  }
  state.counters["tiles_per_s"] = benchmark::Counter(static_cast<double>(tiles), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_CountBlockTiles)->Arg(8192)->Arg(65536);

// A whole ring with a mask that defeats memoisation (documents): every block counted.
void BM_WorkloadDocumentsRing(benchmark::State& state) {
  const std::int64_t n = 16, c = 16384;
  std::vector<std::int64_t> starts;
  for (std::int64_t p = 0; p < n * c; p += 8192 + 1000) starts.push_back(p);
  const auto mask = make_documents(starts, n * c);
  const auto l = Layout::zigzag(n * c, n);
  std::int64_t tiles = 0;
  for (auto _ : state) {
    const Workload w(l, *mask, {512, 512}, 0);
    const auto t = w.totals();
    benchmark::DoNotOptimize(t);
    tiles += t.tiles_total;
  }
  state.counters["tiles_per_s"] = benchmark::Counter(static_cast<double>(tiles), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_WorkloadDocumentsRing)->Unit(benchmark::kMillisecond);

}  // namespace

// A flash-attention library (ring-flash-attn on H100): every round's kernel calls are timed by the
// kernel-time model (CTA list schedules), memoised per call shape within a scenario. One point =
// resolve + predict, as a sweep over (layout, sp, n_seq) would do.
void BM_FlashPredictionSweep(benchmark::State& state) {
  const Catalog cat;
  const char* layouts[] = {"contiguous", "striped", "zigzag"};
  std::int64_t points = 0;
  for (auto _ : state) {
    for (const char* l : layouts)
      for (std::int64_t sp : {4, 8})
        for (std::int64_t c : {4096, 16384}) {
          ScenarioSpec s;
          s.hardware = "h100-sxm";
          s.model = "llama3-8b";
          s.impl = "ring-flash-attn";
          s.sp = sp;
          s.n_seq = sp * c;
          s.layout = ringsim::models::LayoutSpec::parse(l);
          const auto r = resolve(s, cat);
          benchmark::DoNotOptimize(predict(r).step_s);
          ++points;
        }
  }
  state.counters["predictions_per_s"] = benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FlashPredictionSweep)->Unit(benchmark::kMillisecond);

// One call's CTA schedule on H100's 132 SMs of 2 slots: the list schedule alone against the list
// schedule with the last wave's drain (what the flash family times a call with). Arg: CTAs per
// head of a causal forward (its query blocks; the pattern repeats over 32 heads), 0 for a
// non-causal call of 4096 equal CTAs.
void schedule_bench(benchmark::State& state, bool drained) {
  std::vector<double> pattern;
  const auto rows = state.range(0);
  for (std::int64_t i = 1; i <= std::max<std::int64_t>(1, rows); ++i) pattern.push_back(rows > 0 ? 1e-6 * static_cast<double>(i) : 1e-4);
  const std::int64_t repeats = rows > 0 ? 32 : 4096;
  for (auto _ : state)
    benchmark::DoNotOptimize(drained ? drained_makespan(pattern, repeats, 132, 2, 0.66)
                                     : list_schedule_makespan(pattern, repeats, 264));
}
void BM_ListSchedule(benchmark::State& state) { schedule_bench(state, false); }
void BM_DrainedSchedule(benchmark::State& state) { schedule_bench(state, true); }
BENCHMARK(BM_ListSchedule)->Arg(0)->Arg(64)->Arg(512);
BENCHMARK(BM_DrainedSchedule)->Arg(0)->Arg(64)->Arg(512);

BENCHMARK_MAIN();
