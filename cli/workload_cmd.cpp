// `ringsim workload`: one row per (round, device) of the scenario's first layout.
#include <iterator>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/long_run.hpp"
#include "cli/scenario_options.hpp"
#include "io/output_file.hpp"
#include "models/error.hpp"

namespace ringsim::cli {

using models::InputError;

int run_workload(int argc, char** argv) {
  cxxopts::Options o("ringsim workload", "Exact per-(round, device) tile and pair counts");
  add_scenario_options(o, "contiguous");
  o.add_options()("format", "csv|table", cxxopts::value<std::string>()->default_value("csv"))
                 ("o,output", "write to FILE (atomically) instead of stdout", cxxopts::value<std::string>()->default_value("-"))
                 ("max-rows", "refuse to write more (round, device) rows than this (one per device per round: sp^2)",
                  cxxopts::value<std::string>()->default_value(fmt::format("{:g}", kDefaultMaxRows)))
                 ("h,help", "show help");
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto format = one_of(r, "format", {"csv", "table"});
  const double max_rows = parse_limit(r["max-rows"].as<std::string>(), "max-rows");
  const auto args = parse_scenario_args(r);
  if (args.layouts.size() != 1) throw InputError({}, 0, "layout", "workload takes exactly one layout");
  // Rows: sp^2, known before anything is counted; refused or announced before the work.
  const double rows = static_cast<double>(args.base.sp) * static_cast<double>(args.base.sp);
  announce_rows("ringsim workload", rows, 64, max_rows);
  const auto s = models::resolve(args.base, models::Catalog());
  const auto& w = *s.workload;
  // Streamed: a large table never sits in memory, and a failure leaves no partial file.
  io::Output out(r["output"].as<std::string>());
  const bool csv = format == "csv";
  if (csv)
    out.write("round,device,kv_block,tiles_total,tiles_computed,allowed_pairs,kv_bytes,tiles_visited,visited_area,"
              "masked_area\n");
  else
    out.write(fmt::format("{:>6} {:>7} {:>9} {:>12} {:>15} {:>16} {:>14} {:>14} {:>14} {:>14}\n", "round", "device",
                          "kv_block", "tiles_total", "tiles_computed", "allowed_pairs", "kv_bytes", "tiles_visited",
                          "visited_area", "masked_area"));
  Progress progress("ringsim workload");
  std::string line;
  for (std::int64_t i = 0; i < w.rounds(); ++i) {
    progress.update(i, w.rounds());
    for (std::int64_t j = 0; j < w.devices(); ++j) {
      const auto d = w.device_round(i, j);
      // tiles_computed counts tiles holding an allowed pair; under SCFA's range rule the kernel
      // runs tiles_visited (a superset), and the cost model charges visited and masked area.
      line.clear();
      if (csv)
        fmt::format_to(std::back_inserter(line), "{},{},{},{},{},{},{},{},{},{}\n", d.round, d.device, d.kv_block,
                       d.stats.tiles_total, d.stats.tiles_computed, d.stats.allowed_pairs, d.kv_bytes,
                       d.stats.tiles_visited, d.stats.visited_area, d.stats.masked_area);
      else
        fmt::format_to(std::back_inserter(line), "{:>6} {:>7} {:>9} {:>12} {:>15} {:>16} {:>14} {:>14} {:>14} {:>14}\n",
                       d.round, d.device, d.kv_block, d.stats.tiles_total, d.stats.tiles_computed,
                       d.stats.allowed_pairs, d.kv_bytes, d.stats.tiles_visited, d.stats.visited_area,
                       d.stats.masked_area);
      out.write(line);
    }
  }
  progress.finish();
  out.commit();
  return 0;
}

}  // namespace ringsim::cli
