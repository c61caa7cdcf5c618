#pragma once
// How large a scenario may be, checked before anything is allocated, read or looped over:
// every count must fit 64-bit integers (checked products of the input's sizes), what is
// allocated must fit this machine's memory, and counting the workload must finish in a
// reasonable time (an estimate of its loop iterations). Each refusal is an InputError naming
// the field and the size, so front-ends answer at once with one line and exit code 2 instead
// of wrapping, running out of memory or running for hours. docs/robustness.md lists the bounds.
#include <cstdint>
#include <string_view>

namespace ringsim::models {

struct ScenarioSpec;
struct ResolvedScenario;
struct ModelConfig;

// mp x sp devices (the simulator's topologies stop there too).
inline constexpr std::int64_t kMaxDevices = std::int64_t{1} << 20;
// Sequences per step: far beyond any real batch, small enough that batch x any per-sequence
// count stays exact in a double.
inline constexpr std::int64_t kMaxBatch = std::int64_t{1} << 32;
// Estimated loop iterations of counting a scenario's workload above which it is refused: a
// step costs 1 to 10 ns (Release), so anything accepted is counted within about 30 s.
inline constexpr double kMaxCountSteps = 3e9;

// This machine's physical memory (sysconf), the ceiling for one run's allocations.
[[nodiscard]] double memory_budget_bytes() noexcept;
// Throws InputError(field) when `bytes` would not fit memory_budget_bytes().
void check_memory(double bytes, std::string_view field, std::string_view what);
// Throws InputError(field) when `steps` exceeds kMaxCountSteps; `hint` (if any) says what
// would make it smaller.
void check_count_steps(double steps, std::string_view field, std::string_view what, std::string_view hint = {});

// The spec's sizes and what the model makes of them (devices, batch, pair counts, memory of
// explicit permutations and per-head sparse masks): before the layout or mask is built.
void check_scenario_sizes(const ScenarioSpec& spec, const ModelConfig& model);
// Once layout, mask, tile and cost model are built, before any block is counted: tile, area
// and byte counts over the ring, the memo's memory and the counting time.
void check_workload_sizes(const ResolvedScenario& r);

}  // namespace ringsim::models
