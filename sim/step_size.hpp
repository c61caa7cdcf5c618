#pragma once
// How much a simulated step will take before it is run: engine events and memory, estimated
// from the scenario alone. simulate_step refuses a step whose memory would not fit this
// machine (models::InputError); front-ends state the event count up front when it is large
// and refuse beyond a limit the user can raise (ringsim's --max-events).
#include <cstdint>
#include <string>

#include "models/catalog/resolve.hpp"
#include "sim/step.hpp"

namespace ringsim::sim {

// The engine events a simulation may take unless its user raises the limit (ringsim simulate
// --max-events): some tens of minutes of simulation. Sweeps and plans refuse points beyond it.
inline constexpr double kDefaultMaxEvents = 2e10;

struct StepSize {
  double passes = 0;           // engine passes at most: one per layer and direction (+ the LM head)
  double events_per_pass = 0;  // events of one ring pass of one layer, roughly
  double events = 0;           // upper bound over the step (identical layers are often replayed instead)
  double bytes = 0;            // memory of the per-(device, round) matrices and the pass buffers
};

[[nodiscard]] StepSize estimate_step_size(const models::ResolvedScenario& s, const StepOptions& options);
// Throws models::InputError (field "sp") when estimate_step_size's bytes exceed this machine's memory.
void check_step_memory(const models::ResolvedScenario& s, const StepOptions& options);
// Throws models::InputError (field "max-events") when the step's memory does not fit or its
// estimated events exceed `max_events`; `what` names the run, `raise` says how to allow more.
void check_step_size(const models::ResolvedScenario& s, const StepOptions& options, double max_events,
                     const std::string& what, const std::string& raise);

}  // namespace ringsim::sim
