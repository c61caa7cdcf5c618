#pragma once
// The exact work of a resolved scenario, one row per (round, device): what `ringsim workload`
// prints and `ringsim.workload` returns as arrays. A ring (usp: its ring part; a double ring:
// its schedule) gives one row per position and round, the K/V block the position holds then and
// the bytes it sends on; a strategy without a ring gives one row per device (round 0, kv_block
// -1) with the total of its kernel calls (one head, one sequence) and the bytes its forward
// collectives send.
#include <cstdint>
#include <functional>

#include "models/scenario/scenario.hpp"
#include "models/workload/mask.hpp"

namespace ringsim::models {

struct WorkloadRow {
  std::int64_t round = 0, device = 0, kv_block = 0;
  BlockStats stats;
  std::int64_t kv_bytes = 0;
};

// Rows the scenario has (ring positions squared, or its devices): known before anything is counted.
[[nodiscard]] std::int64_t workload_row_count(const ResolvedScenario& s);
// Every row, rounds outer and devices inner.
void for_each_workload_row(const ResolvedScenario& s, const std::function<void(const WorkloadRow&)>& row);

}  // namespace ringsim::models
