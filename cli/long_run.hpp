#pragma once
// Runs that can take long or write much: state up front what they will produce when that is
// large, and refuse beyond a limit the user can raise (--max-rows, --max-events). Progress on
// a terminal: cli/progress.hpp.
#include <cstdint>
#include <string>

#include "models/catalog/resolve.hpp"
#include "sim/step.hpp"
#include "sim/step_size.hpp"

namespace ringsim::cli {

// Defaults of the limits: about 1 GB of CSV, and a simulation of some tens of minutes.
inline constexpr double kDefaultMaxRows = 1e7;
inline constexpr double kDefaultMaxEvents = sim::kDefaultMaxEvents;
// Above these, the statement of what is coming is printed to stderr.
inline constexpr double kAnnounceRows = 1e6;
inline constexpr double kAnnounceEvents = 1e8;

// A plan's search, counted in configurations that can run within the budget (what it evaluates,
// at ~15-70 us each on one core): 5e5 is about half a minute on two cores.
inline constexpr double kDefaultMaxPoints = 5e5;
// Worker threads: 0 (every core) up to this many.
inline constexpr std::int64_t kMaxThreads = 1024;

// Parses --threads: 0 (every core) to kMaxThreads.
[[nodiscard]] std::int64_t parse_threads(const std::string& text);
// Parses a --max-rows / --max-events value: a positive number (1e9 allowed).
[[nodiscard]] double parse_limit(const std::string& text, const std::string& field);

// Refuses (InputError, field "max-rows") when `rows` exceeds `max_rows`; states the size on
// stderr when it is large. `what` names the command.
void announce_rows(const std::string& what, double rows, double bytes_per_row, double max_rows);
// The same for a simulated step: events estimated from the scenario (sim/step_size.hpp).
// `raise` says how to allow more (the command's own --max-events, or another command's).
void announce_simulation(const std::string& what, const models::ResolvedScenario& s, const sim::StepOptions& o,
                         double max_events, const std::string& raise = "raise --max-events to run it");

}  // namespace ringsim::cli
