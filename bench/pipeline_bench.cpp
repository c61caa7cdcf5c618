// The pipeline step both ways (docs/pipeline.md): the analytic longest path over the passes
// (models::pipeline_step) and the discrete-event run (sim::simulate_pipeline), for pipelines
// from a node's 8 stages to 64 stages of 1024 micro-batches. Figures in docs/performance.md.
#include <benchmark/benchmark.h>

#include "models/pipeline/step.hpp"
#include "sim/pipeline_sim.hpp"

namespace {

ringsim::models::PipelineSchedule schedule(const benchmark::State& state) {
  ringsim::models::PipelineSchedule s;
  s.stages = state.range(0);
  s.micro_batches = state.range(1);
  s.virtual_stages = state.range(2);
  s.kind = s.virtual_stages > 1 ? ringsim::models::PipelineKind::Interleaved : ringsim::models::PipelineKind::OneFOneB;
  return s;
}

ringsim::models::PipelineDurations durations(const ringsim::models::PipelineSchedule& s) {
  auto d = ringsim::models::PipelineDurations::lockstep(s, 1e-3, 2e-3, 5e-5);
  d.fwd_s.back() *= 1.2;  // the LM head on the last stage
  return d;
}

// One engine timed on the schedule the arguments name: both read the same passes.
template <class Step>
void time_pipeline(benchmark::State& state, Step step) {
  const auto s = schedule(state);
  const auto d = durations(s);
  for (auto _ : state) benchmark::DoNotOptimize(step(s, d).step_s);
  state.counters["passes"] = static_cast<double>(2 * s.stages * s.virtual_stages * s.micro_batches);
}

void BM_PipelineLongestPath(benchmark::State& state) { time_pipeline(state, ringsim::models::pipeline_step); }
BENCHMARK(BM_PipelineLongestPath)->ArgNames({"pp", "m", "v"})->Args({8, 64, 1})->Args({16, 256, 4})->Args({64, 1024, 1})->Unit(benchmark::kMillisecond);

void BM_PipelineSimulation(benchmark::State& state) {
  time_pipeline(state, [](const auto& s, const auto& d) { return ringsim::sim::simulate_pipeline(s, d); });
}
BENCHMARK(BM_PipelineSimulation)->ArgNames({"pp", "m", "v"})->Args({8, 64, 1})->Args({16, 256, 4})->Args({64, 1024, 1})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
