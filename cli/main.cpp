// `ringsim`: predict, workload, show (and the simulator, calibration and kernel commands as
// they land). Exit codes: 0 success, 2 bad input (one line on stderr), 1 any other failure.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli/commands.hpp"
#include "cli/terminal_text.hpp"
#include "io/build_info.hpp"
#include "io/interrupt.hpp"
#include "io/output_file.hpp"
#include "models/io/error.hpp"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* help;
};

constexpr Command kCommands[] = {
    {"predict", ringsim::cli::run_predict, "analytic step time, tokens/s, MFU and speedups for ring vs striped vs zigzag"},
    {"workload", ringsim::cli::run_workload, "per (round, device) tiles and allowed pairs of a scenario"},
    {"simulate", ringsim::cli::run_simulate, "discrete-event simulation of a training step or an inference prefill (topology, overlap, trace)"},
    {"show", ringsim::cli::run_show, "terminal heatmaps of the (device x round) work and the attention matrix"},
    {"sweep", ringsim::cli::run_sweep, "every combination of scenario axes on every core, streamed to CSV (resumable, sharded)"},
    {"merge", ringsim::cli::run_merge, "join the shards of a sweep into the unsharded output"},
    {"plan", ringsim::cli::run_plan, "the best meshes, strategies, layouts, tiles and implementations for a goal, ranked"},
    {"plan-docs", ringsim::cli::run_plan_docs, "strategy and layout per bucket of packed sequences, from a dataset's document lengths"},
    {"check", ringsim::cli::run_check, "plausibility of measurements: peak FLOP/s, link bandwidth, what can run"},
    {"plot", ringsim::cli::run_plot, "charts of sweep CSVs as SVG and PNG (speedup, throughput, exposed communication, memory)"},
    {"agreement", ringsim::cli::run_agreement, "ranking agreement (Kendall's tau-b) of predictions with measurements"},
    {"trace", ringsim::cli::run_trace, "summarize your own run's PyTorch profiler traces: attention, communication, exposed, idle"},
    {"calibrate", ringsim::cli::run_calibrate, "fit a profile to published speedups or kernel timings"},
    {"measure", ringsim::cli::run_measure, "time the CUDA kernel over tiles and masks into a timings CSV (GPU)"},
    {"validate", ringsim::cli::run_validate, "time an emulated ring on one GPU against the prediction (GPU)"},
};

// Messages quote input (a JSON string, a CSV cell) that may hold line breaks or terminal
// escapes: the contract is one line on stderr, so control characters are shown escaped
// (cli/terminal_text.hpp).
std::string one_line(const char* text) {
  // A message quoting a hostile value (a 1 MB name) stays a readable line: its middle goes.
  constexpr std::size_t kMaxBytes = 2000;
  const std::size_t n = std::strlen(text);
  std::string cut;
  if (n > kMaxBytes) {
    cut.assign(text, kMaxBytes / 2);
    cut += "[... " + std::to_string(n - kMaxBytes) + " bytes ...]";
    cut.append(text + n - kMaxBytes / 2);
    text = cut.c_str();
  }
  return ringsim::cli::terminal_text(text, false);
}

void usage(std::FILE* to) {
  std::fprintf(to, "usage: ringsim <command> [options]   (ringsim <command> --help for its options)\n"
                   "       ringsim --version            (version, commit and build type)\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(to, "  %-10s %s\n", c.name, c.help);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    const auto b = ringsim::io::build_info();
    std::printf("ringsim %s (commit %s, %s build)\n", b.version, b.commit, b.build_type);
    return 0;
  }
  // Ctrl-C or a scheduler's SIGTERM leaves no hidden temporary beside an output (a sweep's
  // journal is not one: its complete rows stay for --resume).
  ringsim::io::install_interrupt_cleanup();
  for (const auto& c : kCommands) {
    if (std::strcmp(argv[1], c.name) != 0) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const ringsim::models::InputError& e) {
      std::fprintf(stderr, "ringsim %s: error: %s\n", c.name, one_line(e.what()).c_str());
      return 2;
    } catch (const ringsim::io::OutputError& e) {
      // An unusable output path is bad input; a full disk is not.
      std::fprintf(stderr, "ringsim %s: %s: %s\n", c.name, e.target_problem() ? "error" : "failure",
                   one_line(e.what()).c_str());
      return e.target_problem() ? 2 : 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ringsim %s: failure: %s\n", c.name, one_line(e.what()).c_str());
      return 1;
    }
  }
  std::string names;
  for (const auto& c : kCommands) names += (names.empty() ? "" : ", ") + std::string(c.name);
  std::fprintf(stderr, "ringsim: error: unknown command '%s' (expected one of: %s; see ringsim --help)\n",
               one_line(argv[1]).substr(0, 80).c_str(), names.c_str());
  return 2;
}
