// `ringsim workload`: one row per (round, device) of the scenario's first layout.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/scenario_options.hpp"
#include "models/error.hpp"

namespace ringsim::cli {

using models::InputError;

int run_workload(int argc, char** argv) {
  cxxopts::Options o("ringsim workload", "Exact per-(round, device) tile and pair counts");
  add_scenario_options(o, "contiguous");
  o.add_options()("format", "csv|table", cxxopts::value<std::string>()->default_value("csv"))
                 ("o,output", "write to FILE (atomically) instead of stdout", cxxopts::value<std::string>()->default_value("-"))
                 ("h,help", "show help");
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto format = one_of(r, "format", {"csv", "table"});
  const auto args = parse_scenario_args(r);
  if (args.layouts.size() != 1) throw InputError({}, 0, "layout", "workload takes exactly one layout");
  const auto s = models::resolve(args.base, models::Catalog());
  const auto& w = *s.workload;
  std::string out;
  const bool csv = format == "csv";
  if (csv)
    out += "round,device,kv_block,tiles_total,tiles_computed,allowed_pairs,kv_bytes,tiles_visited,visited_area,"
           "masked_area\n";
  else
    out += fmt::format("{:>6} {:>7} {:>9} {:>12} {:>15} {:>16} {:>14} {:>14} {:>14} {:>14}\n", "round", "device",
                       "kv_block", "tiles_total", "tiles_computed", "allowed_pairs", "kv_bytes", "tiles_visited",
                       "visited_area", "masked_area");
  for (std::int64_t i = 0; i < w.rounds(); ++i) {
    for (std::int64_t j = 0; j < w.devices(); ++j) {
      const auto d = w.device_round(i, j);
      // tiles_computed counts tiles holding an allowed pair; under SCFA's range rule the kernel
      // runs tiles_visited (a superset), and the cost model charges visited and masked area.
      if (csv)
        out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", d.round, d.device, d.kv_block, d.stats.tiles_total,
                           d.stats.tiles_computed, d.stats.allowed_pairs, d.kv_bytes, d.stats.tiles_visited,
                           d.stats.visited_area, d.stats.masked_area);
      else
        out += fmt::format("{:>6} {:>7} {:>9} {:>12} {:>15} {:>16} {:>14} {:>14} {:>14} {:>14}\n", d.round, d.device,
                           d.kv_block, d.stats.tiles_total, d.stats.tiles_computed, d.stats.allowed_pairs, d.kv_bytes,
                           d.stats.tiles_visited, d.stats.visited_area, d.stats.masked_area);
    }
  }
  write_output(r["output"].as<std::string>(), out);
  return 0;
}

}  // namespace ringsim::cli
