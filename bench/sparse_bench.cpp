// Sparse workload counting: every (Q block, K/V block) pair of one head of a ring, through
// Mask::visit_block as the workload calls it. Design target (shared/design.md): 1M tokens x 64
// devices (64 x 64 blocks of 16k x 16k tokens, 128 x 128 tiles) in < 1 s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>

#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"
#include "models/workload/sparse_io.hpp"

namespace {

using namespace ringsim::models;

constexpr std::int64_t kTokens = 1 << 20;
constexpr std::int64_t kDevices = 64;
constexpr TileShape kTile{128, 128};

// Counts the whole ring for one head. Generating the mask is not timed; every iteration starts
// from a fresh mask, so the per-device row building (memoised inside the mask) is timed too.
void count_ring(benchmark::State& state, const std::string& mask_spec, const std::string& layout_spec) {
  const auto layout = Layout::make(LayoutSpec::parse(layout_spec), kTokens, kDevices);
  std::int64_t allowed = 0;
  std::int64_t visited = 0;
  std::int64_t tiles = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const auto mask = make_sparse_mask(MaskSpec::parse(mask_spec), kTokens, 1, 2024);
    state.ResumeTiming();
    allowed = visited = tiles = 0;
    for (std::int64_t qd = 0; qd < kDevices; ++qd) {
      for (std::int64_t kd = 0; kd < kDevices; ++kd) {
        mask->visit_block(layout, qd, kd, kTile, 0, [&](const TileCount& t) {
          allowed += t.allowed;
          visited += t.visited;
          ++tiles;
        });
      }
    }
    benchmark::DoNotOptimize(allowed);
    benchmark::DoNotOptimize(visited);
  }
  state.counters["blocks"] = static_cast<double>(kDevices * kDevices);
  state.counters["tiles"] = static_cast<double>(tiles);
  state.counters["visited"] = static_cast<double>(visited);
  state.counters["allowed_pairs"] = static_cast<double>(allowed);
  state.SetItemsProcessed(state.iterations() * kTokens);
}

}  // namespace

BENCHMARK_CAPTURE(count_ring, hash64_contiguous, "hash:64", "contiguous")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(count_ring, hash64_striped, "hash:64", "striped")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(count_ring, hash64_zigzag, "hash:64", "zigzag")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(count_ring, hash8_zipf_contiguous, "hash:8:zipf:1", "contiguous")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(count_ring, hash1024_contiguous, "hash:1024", "contiguous")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(count_ring, qkdrop50_contiguous, "qkdrop:0.5", "contiguous")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(count_ring, qkdrop50_striped, "qkdrop:0.5", "striped")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
