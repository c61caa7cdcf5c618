// `ringsim workload`: one row per (round, device) of the scenario's first layout: a ring's
// blocks (usp: the ring part's positions; double ring: its schedule), or one row per device with
// the total of its kernel calls for strategies without a ring (round 0, kv_block -1).
#include <iterator>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/long_run.hpp"
#include "cli/progress.hpp"
#include "cli/scenario_options.hpp"
#include "cli/work_summary.hpp"
#include "io/output_file.hpp"
#include "models/catalog/resolve.hpp"
#include "models/workload/documents.hpp"
#include "models/io/error.hpp"
#include "models/program/program.hpp"
#include "models/program/workload_rows.hpp"

namespace ringsim::cli {

using models::InputError;

int run_workload(int argc, char** argv) {
  cxxopts::Options o("ringsim workload", "Exact per-(round, device) tile and pair counts");
  add_scenario_options(o, planning::kDefaultLayout);
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
  require_one_strategy(args, "workload");
  const auto s = models::resolve(args.base, models::Catalog());
  // Rows: ring positions squared, or one per rank without a ring; refused or announced before
  // anything is counted.
  const std::int64_t total = models::workload_row_count(s);
  announce_rows("ringsim workload", static_cast<double>(total), 64, max_rows);
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
  std::string line;
  ProgressBar progress("rows", "ringsim workload");
  std::int64_t done = 0;
  models::for_each_workload_row(s, [&](const models::WorkloadRow& w) {
    // tiles_computed counts tiles holding an allowed pair; under SCFA's range rule the kernel
    // runs tiles_visited (a superset), and the cost model charges visited and masked area.
    const auto& b = w.stats;
    line.clear();
    if (csv)
      fmt::format_to(std::back_inserter(line), "{},{},{},{},{},{},{},{},{},{}\n", w.round, w.device, w.kv_block,
                     b.tiles_total, b.tiles_computed, b.allowed_pairs, w.kv_bytes, b.tiles_visited, b.visited_area,
                     b.masked_area);
    else
      fmt::format_to(std::back_inserter(line), "{:>6} {:>7} {:>9} {:>12} {:>15} {:>16} {:>14} {:>14} {:>14} {:>14}\n",
                     w.round, w.device, w.kv_block, b.tiles_total, b.tiles_computed, b.allowed_pairs, w.kv_bytes,
                     b.tiles_visited, b.visited_area, b.masked_area);
    out.write(line);
    if (++done % 4096 == 0) progress.update(done, total);
  });
  progress.finish();
  if (!csv) {
    out.write("\n");
    if (s.documents) out.write("packed batch: " + documents_line(*s.documents) + "\n");
    out.write(fmt::format("strategy {} ({}): {}\n", s.strategy.spec, s.impl.name,
                          imbalance_line(models::device_pairs(s), s.ring_part ? "ring position" : "device")));
  }
  out.commit();
  return 0;
}

}  // namespace ringsim::cli
