// `ringsim check FILE.csv`: measurements held against bounds no real run can break (peak FLOP/s,
// link bandwidth, what the strategy and layout can run); one line per suspicious row. `ringsim
// check --trace`: a traced run beside its prediction (cli/trace_fit.cpp).
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/trace_fit.hpp"
#include "cli/csv.hpp"
#include "planning/check.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::cli {

int run_check(int argc, char** argv) {
  // A traced run against its prediction takes the scenario flags of predict (cli/trace_fit.cpp).
  if (has_flag(argc, argv, "--trace")) return check_trace(argc, argv);
  cxxopts::Options o("ringsim check",
                     "Plausibility of measurements: throughput implying more than the hardware's peak FLOP/s, traffic "
                     "above the link's bandwidth, configurations the strategy or layout cannot run. Prints FILE:LINE: "
                     "what, for each suspicious row (nothing when every row is plausible).");
  o.positional_help("FILE.csv");
  // --trace is its own mode (picked above, with the scenario flags of predict); listed here so
  // that `ringsim check --help` tells it exists.
  o.add_options()("file", "measurements (columns: docs/planning.md)", cxxopts::value<std::string>()->default_value(""))
                 ("trace", "TRACE[,TRACE...]: profiler traces of your run (PyTorch JSON/.json.gz or nsys SQLite, one per "
                  "rank) beside the prediction for the scenario it ran, per component; needs --hardware, --model, --mesh, "
                  "--seq, --impl, --layout (ringsim check --trace --help)", cxxopts::value<std::string>()->default_value(""))
                 ("hardware", "hardware for every row (files without a hardware column)", cxxopts::value<std::string>()->default_value(""))
                 ("fail-on-findings", "exit 1 when a row is suspicious")
                 ("h,help", "show help");
  o.parse_positional({"file"});
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto file = r["file"].as<std::string>();
  if (file.empty()) throw models::InputError({}, 0, "file", "give the CSV of measurements to check");
  planning::CheckOptions opt;
  opt.hardware = r["hardware"].as<std::string>();
  const auto findings = planning::check_measurements(read_csv(file), models::Catalog(), opt);
  for (const auto& f : findings) fmt::print("{}:{}: {}\n", file, f.line, f.what);
  return findings.empty() || !r.count("fail-on-findings") ? 0 : 1;
}

}  // namespace ringsim::cli
