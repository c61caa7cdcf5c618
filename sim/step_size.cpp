#include "sim/step_size.hpp"

#include <cmath>
#include <string>

#include "models/io/error.hpp"
#include "models/io/limits.hpp"
#include "models/io/parse.hpp"
#include "models/program/program.hpp"

namespace ringsim::sim {

StepSize estimate_step_size(const models::ResolvedScenario& s, const StepOptions& o) {
  StepSize z;
  const auto& prog = *s.program;
  const auto& ring = s.ring_scenario();
  // Ring positions = rounds of the program's ring (usp: the ring part's R; none: 1 round).
  const double n = prog.has_ring() ? static_cast<double>(prog.rings.size) : 1;
  const double d = static_cast<double>(s.spec.mp) * static_cast<double>(s.spec.sp);
  const double cells = d * n;  // (device, round) pairs of one ring pass
  // Per round and device: the compute start and end, the block's send and arrival, and the
  // network's rate updates when hops share links (a few per transfer).
  z.events_per_pass = 6 * cells;
  if (o.granularity == Granularity::Tile && prog.has_ring()) {
    // One event per tile: at most every tile of every block of every head (a closed form, so
    // that refusing does not first count the workload).
    const double c = static_cast<double>(ring.layout->block());
    const double tiles = std::ceil(c / static_cast<double>(ring.tile.q)) * std::ceil(c / static_cast<double>(ring.tile.k));
    z.events_per_pass += cells * tiles * static_cast<double>(ring.mask->heads());
  }
  // Collectives (all-gather, reduce-scatter, all-to-all) among groups of g ranks: each member
  // sends g - 1 messages, each a start, an arrival and rate updates.
  for (const auto* stages : {&prog.fwd, &prog.bwd})
    for (const auto& st : *stages)
      if (st.kind == models::StageKind::Collective) z.events_per_pass += 4 * d * static_cast<double>(st.groups.size);
  if (s.spec.mp > 1) z.events_per_pass += 4 * d * static_cast<double>(s.spec.mp);  // tensor-parallel all-reduce steps
  z.passes = 2 * static_cast<double>(s.model.layers) + 1;
  z.events = z.passes * z.events_per_pass;
  // The step's three (device x round) matrices of doubles, the pass outcome's two tick matrices
  // for each remembered layer (a handful), the (round x device) cost table, per-device state,
  // and the routes of the collectives' groups (a member's route to each other member).
  z.bytes = cells * (3 * 8 + 4 * 2 * 8) + n * n * 32 + d * 512;
  for (const auto* stages : {&prog.fwd, &prog.bwd})
    for (const auto& st : *stages)
      if (st.kind == models::StageKind::Collective) z.bytes += d * static_cast<double>(st.groups.size) * 64;
  return z;
}

void check_step_memory(const models::ResolvedScenario& s, const StepOptions& options) {
  const auto z = estimate_step_size(s, options);
  models::check_memory(z.bytes, "sp",
                       "simulating " + std::to_string(s.spec.mp * s.spec.sp) + " devices over " +
                           std::to_string(s.program->has_ring() ? s.program->rings.size : 1) + " rounds");
}

void check_step_size(const models::ResolvedScenario& s, const StepOptions& options, double max_events,
                     const std::string& what, const std::string& raise) {
  check_step_memory(s, options);
  const auto z = estimate_step_size(s, options);
  if (z.events > max_events)
    throw models::InputError(
        {}, 0, "max-events",
        what + " would simulate up to " + models::short_number(z.events, 3) + " engine events (" +
            models::short_number(z.passes, 3) + " layer passes of about " + models::short_number(z.events_per_pass, 3) +
            "), more than the limit of " + models::short_number(max_events, 3) + "; " + raise +
            ", or use fewer devices or coarser granularity");
}

}  // namespace ringsim::sim
