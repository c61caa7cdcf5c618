#pragma once
// The budgets every input is checked against before anything is allocated, read or looped
// over: what is allocated must fit this machine's memory, and counting must finish in a
// reasonable time (an estimate of its loop iterations). Each refusal is an InputError naming
// the field and the size, so front-ends answer at once with one line and exit code 2 instead
// of running out of memory or running for hours. A scenario's own sizes are checked against
// them in models/scenario/size_checks.hpp; docs/robustness.md lists the bounds.
#include <cstdint>
#include <string_view>

namespace ringsim::models {

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

}  // namespace ringsim::models
