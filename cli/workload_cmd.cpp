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
  require_one_strategy(args, "workload");
  const auto s = models::resolve(args.base, models::Catalog());
  const auto& prog = *s.program;
  // Rows: ring positions squared, or one per rank without a ring; refused or announced before
  // anything is counted.
  const std::int64_t ring_n = prog.has_ring() ? s.ring_scenario().workload->devices() : 0;
  const double rows = prog.has_ring() ? static_cast<double>(ring_n) * static_cast<double>(ring_n)
                                      : static_cast<double>(s.spec.sp);
  announce_rows("ringsim workload", rows, 64, max_rows);
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
  auto row = [&](std::int64_t round, std::int64_t device, std::int64_t kv_block, const models::BlockStats& b,
                 std::int64_t kv_bytes) {
    // tiles_computed counts tiles holding an allowed pair; under SCFA's range rule the kernel
    // runs tiles_visited (a superset), and the cost model charges visited and masked area.
    line.clear();
    if (csv)
      fmt::format_to(std::back_inserter(line), "{},{},{},{},{},{},{},{},{},{}\n", round, device, kv_block, b.tiles_total, b.tiles_computed,
                     b.allowed_pairs, kv_bytes, b.tiles_visited, b.visited_area, b.masked_area);
    else
      fmt::format_to(std::back_inserter(line), "{:>6} {:>7} {:>9} {:>12} {:>15} {:>16} {:>14} {:>14} {:>14} {:>14}\n",
                     round, device, kv_block, b.tiles_total, b.tiles_computed, b.allowed_pairs, kv_bytes,
                     b.tiles_visited, b.visited_area, b.masked_area);
    out.write(line);
  };
  ProgressBar progress("rows", "ringsim workload");
  if (prog.has_ring()) {
    const auto& w = *s.ring_scenario().workload;
    const std::int64_t n = w.devices();
    for (std::int64_t i = 0; i < n; ++i) {
      progress.update(i * n, n * n);
      for (std::int64_t j = 0; j < n; ++j) {
        const auto k = prog.kv_position(j, i);
        // The last round's block has no next holder in the forward pass: nothing is sent.
        row(i, j, k, w.block(((j - k) % n + n) % n, j), i + 1 < n ? w.kv_block_bytes() : 0);
      }
    }
  } else {
    // Every rank's kernel calls in one row (one head, one sequence), with the bytes it sends in
    // the forward pass's collectives.
    const auto& table = prog.compute.front();
    for (std::int64_t j = 0; j < s.spec.sp; ++j) {
      models::BlockStats total;
      for (const auto& call : table.lists[table.list_of[static_cast<std::size_t>(j)]]) {
        auto one = call;
        const std::int64_t times = one.batch / s.spec.batch;
        const auto b = models::call_tiles(one, s.tile);
        total.tiles_total += b.tiles_total * times;
        total.tiles_computed += b.tiles_computed * times;
        total.tiles_visited += b.tiles_visited * times;
        total.allowed_pairs += b.allowed_pairs * times;
        total.visited_area += b.visited_area * times;
        total.masked_area += b.masked_area * times;
      }
      row(0, j, -1, total, prog.sent_bytes_fwd);
    }
  }
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
