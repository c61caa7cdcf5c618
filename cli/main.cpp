// `ringsim`: predict, workload, show (and the simulator, calibration and kernel commands as
// they land). Exit codes: 0 success, 2 bad input (one line on stderr), 1 any other failure.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli/commands.hpp"
#include "models/error.hpp"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* help;
};

constexpr Command kCommands[] = {
    {"predict", ringsim::cli::run_predict, "analytic step time, tokens/s, MFU and speedups for ring vs striped vs zigzag"},
    {"workload", ringsim::cli::run_workload, "per (round, device) tiles and allowed pairs of a scenario"},
    {"simulate", ringsim::cli::run_simulate, "discrete-event simulation of a training step (topology, overlap, trace)"},
    {"show", ringsim::cli::run_show, "terminal heatmaps of the (device x round) work and the attention matrix"},
    {"sweep", ringsim::cli::run_sweep, "every combination of scenario axes on every core, streamed to CSV (resumable, sharded)"},
    {"merge", ringsim::cli::run_merge, "join the shards of a sweep into the unsharded output"},
    {"plan", ringsim::cli::run_plan, "the best meshes, strategies, layouts, tiles and implementations for a goal, ranked"},
    {"plan-docs", ringsim::cli::run_plan_docs, "strategy and layout per bucket of packed sequences, from a dataset's document lengths"},
    {"check", ringsim::cli::run_check, "plausibility of measurements: peak FLOP/s, link bandwidth, what can run"},
    {"plot", ringsim::cli::run_plot, "charts of sweep CSVs as SVG and PNG (speedup, throughput, exposed communication, memory)"},
    {"agreement", ringsim::cli::run_agreement, "ranking agreement (Kendall's tau-b) of predictions with measurements"},
    {"calibrate", ringsim::cli::run_calibrate, "fit a profile to published speedups or kernel timings"},
    {"measure", ringsim::cli::run_measure, "time the CUDA kernel over tiles and masks into a timings CSV (GPU)"},
    {"validate", ringsim::cli::run_validate, "time an emulated ring on one GPU against the prediction (GPU)"},
};

void usage(std::FILE* to) {
  std::fprintf(to, "usage: ringsim <command> [options]   (ringsim <command> --help for its options)\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(to, "  %-10s %s\n", c.name, c.help);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const ringsim::models::InputError& e) {
      std::fprintf(stderr, "ringsim %s: error: %s\n", c.name, e.what());
      return 2;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ringsim %s: failure: %s\n", c.name, e.what());
      return 1;
    }
  }
  std::string names;
  for (const auto& c : kCommands) names += (names.empty() ? "" : ", ") + std::string(c.name);
  std::fprintf(stderr, "ringsim: error: unknown command '%s' (expected one of: %s; see ringsim --help)\n", argv[1],
               names.c_str());
  return 2;
}
