#include "sim/step_size.hpp"

#include <cmath>
#include <string>

#include "models/limits.hpp"

namespace ringsim::sim {

StepSize estimate_step_size(const models::ResolvedScenario& s, const StepOptions& o) {
  StepSize z;
  const double n = static_cast<double>(s.spec.sp);
  const double d = static_cast<double>(s.spec.mp) * n;
  const double cells = d * n;  // (device, round) pairs of one ring pass
  // Per round and device: the compute start and end, the block's send and arrival, and the
  // network's rate updates when hops share links (a few per transfer).
  z.events_per_pass = 6 * cells;
  if (o.granularity == Granularity::Tile) {
    // One event per tile: at most every tile of every block of every head (a closed form, so
    // that refusing does not first count the workload).
    const double c = static_cast<double>(s.layout->block());
    const double tiles = std::ceil(c / static_cast<double>(s.tile.q)) * std::ceil(c / static_cast<double>(s.tile.k));
    z.events_per_pass += cells * tiles * static_cast<double>(s.mask->heads());
  }
  if (s.spec.mp > 1) z.events_per_pass += 4 * d * static_cast<double>(s.spec.mp);  // tensor-parallel all-reduce steps
  z.passes = 2 * static_cast<double>(s.model.layers) + 1;
  z.events = z.passes * z.events_per_pass;
  // The step's three (device x round) matrices of doubles, the pass outcome's two tick matrices
  // for each remembered layer (a handful), the (round x device) cost table, per-device state.
  z.bytes = cells * (3 * 8 + 4 * 2 * 8) + n * n * 32 + d * 512;
  return z;
}

void check_step_memory(const models::ResolvedScenario& s, const StepOptions& options) {
  const auto z = estimate_step_size(s, options);
  models::check_memory(z.bytes, "sp",
                       "simulating " + std::to_string(s.spec.mp * s.spec.sp) + " devices over " +
                           std::to_string(s.spec.sp) + " rounds");
}

}  // namespace ringsim::sim
