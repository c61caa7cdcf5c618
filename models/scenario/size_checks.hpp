#pragma once
// How large a scenario may be: every count must fit 64-bit integers (checked products of the
// input's sizes), and what it allocates and counts must fit the budgets of models/io/limits.hpp.
// Checked before the layout or mask is built, and again before any block is counted, so a
// front-end refuses an impossible size at once with one line naming the field.
#include "models/io/limits.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

// The spec's sizes and what the model makes of them (devices, batch, pair counts, memory of
// explicit permutations and per-head sparse masks): before the layout or mask is built.
void check_scenario_sizes(const ScenarioSpec& spec, const ModelConfig& model);
// Once layout, mask, tile and cost model are built, before any block is counted: tile, area
// and byte counts over the ring, the memo's memory and the counting time.
void check_workload_sizes(const ResolvedScenario& r);

}  // namespace ringsim::models
