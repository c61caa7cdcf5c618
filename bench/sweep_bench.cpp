// Sweep throughput (Google Benchmark): analytic sweeps of more than 100,000 points through the
// whole sweep path (grid decode, per-thread evaluators, memory estimate, CSV formatting, ordered
// hand-over) on every core, rows discarded; the same on one thread, for the ratio; and on every
// core without the step intervals (`intervals: false`, `sweep --no-intervals`). Two
// grids: a planning grid (hardware, models, meshes, dp, lengths, layouts, tiles, ZeRO stages,
// recomputation: points that differ in memory options share one timing) and a grid where every
// point needs its own workload.
#include <benchmark/benchmark.h>

#include "planning/plan.hpp"
#include "planning/sweep.hpp"
#include "models/catalog/resolve.hpp"

using namespace ringsim;
using namespace ringsim::planning;

namespace {

SweepGrid big_grid() {
  SweepGrid g;
  g.hardware = {"a100-80gb", "h100-sxm"};
  g.model = {"ringattn-1b", "llama3-8b", "llama2-7b"};
  g.mesh = {{1, 2}, {1, 4}, {1, 8}, {2, 4}, {2, 8}, {4, 4}, {1, 16}, {8, 8}};
  g.dp = {1, 2, 4, 8};
  g.n_seq = {16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152};
  g.layout = ringsim::models::parse_layouts({"contiguous", "striped", "zigzag"});
  g.tile = {std::nullopt, models::TileShape{128, 128}};
  g.zero = {models::Sharding::None, models::Sharding::Zero1, models::Sharding::Zero2, models::Sharding::Zero3};
  g.recompute = {models::Recompute::None, models::Recompute::Selective, models::Recompute::Full};
  return g;
}

void BM_AnalyticSweep(benchmark::State& state) {
  auto grid = big_grid();
  grid.intervals = state.range(1) != 0;
  const models::Catalog catalog;
  SweepOptions o;
  o.threads = state.range(0);
  std::int64_t points = 0, bytes = 0;
  for (auto _ : state) {
    const auto sum = run_points(grid, catalog, o, 0, [&](const std::string& s) { bytes += static_cast<std::int64_t>(s.size()); });
    points += sum.written;
  }
  state.counters["scenarios"] = static_cast<double>(grid.size());
  state.counters["scenarios_per_s"] = benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
  state.counters["csv_bytes_per_s"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsRate);
}
// Args: threads (0: every core), intervals (1: rows carry the step's interval, the default).
// Real time: the work is on the worker threads.
BENCHMARK(BM_AnalyticSweep)->Args({0, 1})->Args({1, 1})->Args({0, 0})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

// The worst case for the sweep's memo: 102,000 points that each need their own workload
// (every point a different n_seq, mesh, layout or tile; the Striped paper's hardware, model and
// 2048 x 4096 tiles, and 1024 x 1024).
SweepGrid distinct_grid() {
  SweepGrid g;
  g.hardware = {"a100-80gb"};
  g.model = {"ringattn-1b"};
  g.mesh = {{1, 2}, {1, 4}, {1, 8}, {2, 4}, {1, 16}};
  g.n_seq.clear();
  for (std::int64_t k = 0; k < 3400; ++k) g.n_seq.push_back(32768 + 256 * k);
  g.layout = ringsim::models::parse_layouts({"contiguous", "striped", "zigzag"});
  g.tile = {models::TileShape{2048, 4096}, models::TileShape{1024, 1024}};
  return g;
}

void BM_AnalyticSweepDistinct(benchmark::State& state) {
  auto grid = distinct_grid();
  grid.intervals = state.range(1) != 0;
  const models::Catalog catalog;
  SweepOptions o;
  o.threads = state.range(0);
  std::int64_t points = 0, skipped = 0;
  for (auto _ : state) {
    const auto sum = run_points(grid, catalog, o, 0, [](const std::string&) {});
    points += sum.written;
    skipped = sum.skipped;
  }
  state.counters["scenarios"] = static_cast<double>(grid.size());
  state.counters["skipped"] = static_cast<double>(skipped);
  state.counters["scenarios_per_s"] = benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AnalyticSweepDistinct)->Args({0, 1})->Args({1, 1})->Args({0, 0})->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace
// The planner's search for the two questions (docs/performance.md): llama3-8b at 1M tokens
// on up to 64 H100 (arg 64), llama3-70b at 128k on up to 1024 H100 (arg 1024); one thread and
// every core; the third argument a global batch (0: none), with which pipeline stages are searched.
void BM_Plan(benchmark::State& state) {
  const models::Catalog catalog;
  PlanRequest r;
  r.hardware = "h100-sxm";
  const bool big = state.range(0) == 1024;
  r.model = big ? "llama3-70b" : "llama3-8b";
  r.n_seq = big ? 131072 : 1048576;
  r.devices = state.range(0);
  r.global_batch = state.range(2);
  SweepOptions options;
  options.threads = state.range(1);
  std::int64_t evaluated = 0;
  for (auto _ : state) {
    const auto grid = plan_grid(r, catalog);
    const auto found = search_plans(grid, catalog, r, options);
    evaluated = found.evaluated;
    benchmark::DoNotOptimize(found.plans.size());
  }
  state.counters["evaluated"] = static_cast<double>(evaluated);
}
BENCHMARK(BM_Plan)
    ->Args({64, 1, 0})
    ->Args({64, 0, 0})
    ->Args({1024, 1, 0})
    ->Args({1024, 0, 0})
    ->Args({1024, 1, 64})
    ->Args({1024, 0, 64})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

BENCHMARK_MAIN();
