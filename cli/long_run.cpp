#include "cli/long_run.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "cli/scenario_options.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "sim/step_size.hpp"

namespace ringsim::cli {

std::int64_t parse_threads(const std::string& text) {
  const std::int64_t n = models::parse_int(text, "threads");
  if (n < 0 || n > kMaxThreads)
    throw models::InputError({}, 0, "threads",
                             fmt::format("expected 0 (every core) or 1 to {} threads, got '{}'", kMaxThreads, text));
  return n;
}

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
  sim::check_step_size(s, o, max_events, what, raise);  // refused before anything is stated: one line on stderr
  const auto z = sim::estimate_step_size(s, o);
  if (z.events > kAnnounceEvents)
    std::fprintf(stderr,
                 "%s: up to %.3g engine events (%.0f layer passes of about %.3g; identical layers are replayed, so "
                 "usually far fewer) and about %s of memory\n",
                 what.c_str(), z.events, z.passes, z.events_per_pass, human_bytes(z.bytes).c_str());
}

}  // namespace ringsim::cli
