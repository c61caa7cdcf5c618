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
  // Ascending, disjoint, each whole blocks of the inner axes (with own_tile_once, one tile's block
  // of them).
  std::vector<PointRange> ranges;
  std::int64_t points = 0;    // in the ranges
  std::int64_t excluded = 0;  // points the evaluator refuses or over the device budget
  // With own_tile_once: points left out because they predict the step of a kept point (the same
  // point at the implementation's own tile). points + excluded + same_step = the grid's size.
  std::int64_t same_step = 0;
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
// `own_tile_once`, where the tile axis holds the own-tile entry (no tile asked): a named
// implementation whose kernel picks its own tiles for the point's strategy, mask and layout
// (AttentionCost::kernel_picks_tiles) keeps that entry's points only. Its other tiles predict the
// same step with no less workspace (the asked tile bounds the score tile's memory; every
// FlashAttention profile's own tile is 128 x 128, the smallest plan searches: a test holds the
// catalog to it), or are refused (a tile larger than the block), so a search loses no plan; they
// are counted in `same_step`, not `excluded`.
[[nodiscard]] RunnablePoints runnable_points(const SweepGrid& grid, const models::Catalog& catalog,
                                             std::int64_t max_devices = 0, bool own_tile_once = false);

}  // namespace ringsim::planning
