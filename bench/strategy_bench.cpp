// The 1024-device, 32-layer training step of every context-parallel strategy through the step
// simulator (llama2-7b, 1024 tokens per device, nodes of 8 H100 with a NIC per GPU, default
// options), and the contiguous ring without a barrier under each implementation's protocol
// (docs/simulator.md). Figures, never pass/fail: docs/strategies.md and docs/simulator.md keep
// them, with the run's CPU time beside the heap ring pass of engine_bench.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "models/program/program.hpp"
#include "models/catalog/resolve.hpp"
#include "sim/step.hpp"

namespace {

struct StrategyCase {
  const char* cp;
  const char* impl;
  const char* layout;
};

// Ulysses alone cannot split 32 heads over 1024 ranks; usp:32x32 is its widest split.
const StrategyCase kCases[] = {
    {"ring", "ringsim-tiles", "striped"},
    {"ring", "ringsim-tiles", "zigzag"},
    {"allgather", "te-all-gather", "zigzag"},
    {"usp:8x128", "te-a2a-p2p", "zigzag"},
    {"usp:32x32", "te-a2a-p2p", "zigzag"},
    {"double-ring:8", "internevo", "zigzag"},
};

ringsim::models::ResolvedScenario scenario(const std::string& cp, const std::string& impl, const std::string& layout,
                                           std::int64_t sp) {
  ringsim::models::ScenarioSpec spec;
  spec.hardware = "h100-sxm";
  spec.model = "llama2-7b";
  spec.sp = sp;
  spec.n_seq = sp * 1024;
  spec.layout = ringsim::models::LayoutSpec::parse(layout);
  spec.cp = ringsim::models::Strategy::parse(cp);
  spec.impl = impl;
  spec.tile = ringsim::models::TileShape{128, 128};
  return ringsim::models::resolve(spec, ringsim::models::Catalog());
}

void report(benchmark::State& state, const ringsim::sim::StepResult& r) {
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["sim_step_s"] = r.step_s;
  state.counters["passes_simulated"] = static_cast<double>(r.passes_simulated);
}

void BM_StrategyStep(benchmark::State& state) {
  const auto& c = kCases[state.range(0)];
  state.SetLabel(std::string(c.cp) + " " + c.layout);
  const auto s = scenario(c.cp, c.impl, c.layout, state.range(1));
  ringsim::sim::StepResult r;
  for (auto _ : state) r = ringsim::sim::simulate_step(s, {});
  report(state, r);
}
BENCHMARK(BM_StrategyStep)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {1024}})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

// The contiguous causal ring without a barrier (docs/simulator.md: 486 s against 55 s
// lock-step at 1024 devices with K/V and dK/dV sharing a hop): the same step under each
// implementation that offers a contiguous ring, with its own kernel timing and the backward
// messages its code sends (concurrent: ringsim-tiles, jax-blockwise; ordered: ring-flash-attn,
// torch-cp; TE's p2p ring, fused, offers only its zigzag layout), and under the synthetic
// protocols on one kernel timing.
const char* kContiguousImpls[] = {"ringsim-tiles", "jax-blockwise", "ring-flash-attn", "torch-cp"};

void contiguous_step(benchmark::State& state, ringsim::models::ResolvedScenario& s) {
  ringsim::sim::StepOptions barrier;
  barrier.sync = ringsim::sim::Sync::Barrier;
  const double lock_step = ringsim::sim::simulate_step(s, barrier).step_s;
  ringsim::sim::StepResult r;
  for (auto _ : state) r = ringsim::sim::simulate_step(s, {});
  report(state, r);
  state.counters["lock_step_s"] = lock_step;
}

void BM_ContiguousImplementation(benchmark::State& state) {
  const char* impl = kContiguousImpls[state.range(0)];
  auto s = scenario("ring", impl, "contiguous", state.range(1));
  state.SetLabel(std::string(impl) + " " + std::string(ringsim::models::Protocol::name(s.impl.protocol.backward)));
  contiguous_step(state, s);
}
BENCHMARK(BM_ContiguousImplementation)->ArgsProduct({{0, 1, 2, 3}, {64, 1024}})->Iterations(1)->Unit(benchmark::kSecond);

void BM_ContiguousProtocol(benchmark::State& state) {
  using ringsim::models::BackwardMessages;
  const BackwardMessages protocols[] = {BackwardMessages::Concurrent, BackwardMessages::Ordered, BackwardMessages::Fused};
  const auto protocol = protocols[state.range(0)];
  state.SetLabel(std::string(ringsim::models::Protocol::name(protocol)));
  auto s = scenario("ring", "ringsim-tiles", "contiguous", state.range(1));
  s.impl.protocol.backward = protocol;
  s.impl.protocol.dkv_home_hop = protocol != BackwardMessages::Fused;
  s.program = std::make_shared<const ringsim::models::Program>(ringsim::models::build_program(s));
  contiguous_step(state, s);
}
BENCHMARK(BM_ContiguousProtocol)->ArgsProduct({{0, 1, 2}, {64, 1024}})->Iterations(1)->Unit(benchmark::kSecond);

// Exact per-(device, round) work of a packed batch: 1M tokens of log-normal documents on a ring
// of 64 devices, every block of the ring (4096, memoised per pair), tiles of 128 x 128.
void BM_DocumentWorkload(benchmark::State& state) {
  const char* layouts[] = {"doc-zigzag", "contiguous", "ptrr"};
  const std::string layout = layouts[state.range(0)];
  state.SetLabel(layout);
  std::int64_t pairs = 0;
  for (auto _ : state) {
    ringsim::models::ScenarioSpec spec;
    spec.hardware = "h100-sxm";
    spec.model = "llama3-8b";
    spec.sp = 64;
    spec.n_seq = 1 << 20;
    spec.docs = ringsim::models::DocumentsSpec::parse("lognormal:4096:1.5:1:128");
    spec.layout = ringsim::models::LayoutSpec::parse(layout);
    spec.impl = "ringsim-tiles";
    spec.tile = ringsim::models::TileShape{128, 128};
    const auto s = ringsim::models::resolve(spec, ringsim::models::Catalog());
    for (std::int64_t r = 0; r < 64; ++r)
      for (std::int64_t d = 0; d < 64; ++d) pairs = s.workload->block(r, d).allowed_pairs;
  }
  benchmark::DoNotOptimize(pairs);
}
BENCHMARK(BM_DocumentWorkload)->DenseRange(0, 2)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
