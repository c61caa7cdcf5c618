#include "cli/long_run.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "cli/scenario_options.hpp"
#include "models/error.hpp"
#include "models/parse.hpp"
#include "sim/step_size.hpp"

namespace ringsim::cli {

double parse_limit(const std::string& text, const std::string& field) {
  const double v = models::parse_double(text, field);
  if (!(v >= 1)) throw models::InputError({}, 0, field, "expected a positive number, got '" + text + "'");
  return v;
}

void announce_rows(const std::string& what, double rows, double bytes_per_row, double max_rows) {
  if (rows > max_rows)
    throw models::InputError({}, 0, "max-rows",
                             fmt::format("{} would write {:.4g} rows (about {}), more than --max-rows {:.4g}; raise "
                                         "--max-rows to write them, or use fewer devices",
                                         what, rows, human_bytes(rows * bytes_per_row), max_rows));
  if (rows > kAnnounceRows)
    std::fprintf(stderr, "%s: writing %.4g rows (about %s)\n", what.c_str(), rows,
                 human_bytes(rows * bytes_per_row).c_str());
}

void announce_simulation(const std::string& what, const models::ResolvedScenario& s, const sim::StepOptions& o,
                         double max_events, const std::string& raise) {
  const auto z = sim::estimate_step_size(s, o);
  sim::check_step_memory(s, o);  // refused before anything is stated: one line on stderr
  if (z.events > max_events)
    throw models::InputError(
        {}, 0, "max-events",
        fmt::format("{} would simulate up to {:.3g} engine events ({:.0f} layer passes of about {:.3g}), more than "
                    "the limit of {:.3g}; {}, or use fewer devices or coarser granularity",
                    what, z.events, z.passes, z.events_per_pass, max_events, raise));
  if (z.events > kAnnounceEvents)
    std::fprintf(stderr,
                 "%s: up to %.3g engine events (%.0f layer passes of about %.3g; identical layers are replayed, so "
                 "usually far fewer) and about %s of memory\n",
                 what.c_str(), z.events, z.passes, z.events_per_pass, human_bytes(z.bytes).c_str());
}

}  // namespace ringsim::cli
