#pragma once
// Which points of a sweep can run at all, told from names and arithmetic before any scenario is
// resolved. The planner's grid crosses every strategy split (usp:UxR, double-ring:W of every
// group size) with every mesh and every implementation, so most of its (strategy, mesh,
// implementation) combinations cannot run; evaluating them one by one only to skip them was
// most of a plan's time.
#include <cstdint>
#include <vector>

#include "planning/grid.hpp"
#include "planning/sweep.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::planning {

struct RunnablePoints {
  std::vector<PointRange> ranges;  // ascending, disjoint, each whole blocks of the inner axes
  std::int64_t points = 0;         // in the ranges
  std::int64_t excluded = 0;       // the grid's other points
};

// The points whose outer axes (hardware, model, implementation, strategy, mesh) go together:
// the model's heads split over mp; the implementation, when one is named, runs on the hardware
// and offers the strategy; the strategy splits the mesh's sp (models::Strategy::check: U x R =
// sp, W divides sp, the Ulysses degree divides the query heads and, unless the named
// implementation replicates KV heads, the KV heads; with the catalog's choice of implementation
// replication is assumed possible); then, of the middle axes, n_seq splits over sp and a named
// implementation offers the layout and the mask. Each is a check resolve() makes, so every point
// left out is one it refuses; the rest (a layout's own divisibility, tiles, topologies, ZeRO,
// recomputation) is left to the evaluator. `max_devices` (0: none): points needing more devices
// (pp x dp x mp x sp) are left out too, as a plan's budget would refuse them.
[[nodiscard]] RunnablePoints runnable_points(const SweepGrid& grid, const models::Catalog& catalog,
                                             std::int64_t max_devices = 0);

}  // namespace ringsim::planning
