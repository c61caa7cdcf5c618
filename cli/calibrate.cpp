// `ringsim calibrate`: its flags, and the one mode they pick. Each mode fits or derives a Profile
// (or links) and writes it as versioned JSON, in a file of its own: --from-speedups
// (calibrate_speedups), --from-timings (calibrate_timings), --from-scfa (calibrate_scfa),
// --from-times (calibrate_times), --from-probes (calibrate_probes), --from-nccl-tests (calibrate_nccl_tests),
// --from-kernels (calibrate_kernels), --from-host-steps (calibrate_host), --derive-from (calibrate_derive), --from-trace (trace_fit, with the scenario
// flags of predict); what they share is in calibrate_common.
#include <string>

#include "cli/calibrate_derive.hpp"
#include "cli/calibrate_host.hpp"
#include "cli/calibrate_kernels.hpp"
#include "cli/calibrate_machines.hpp"
#include "cli/calibrate_nccl_tests.hpp"
#include "cli/calibrate_probes.hpp"
#include "cli/calibrate_scfa.hpp"
#include "cli/calibrate_speedups.hpp"
#include "cli/calibrate_times.hpp"
#include "cli/calibrate_timings.hpp"
#include "cli/trace_fit.hpp"
#include "cli/commands.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"

namespace ringsim::cli {

using models::InputError;

int run_calibrate(int argc, char** argv) {
  // A traced ring run takes the scenario flags of predict, which calibrate's own would shadow.
  if (has_flag(argc, argv, "--from-trace")) return calibrate_from_trace(argc, argv);
  cxxopts::Options o("ringsim calibrate", "Fit a profile to published speedups, kernel timings, probes or your own traces");
  // --from-trace is its own mode (picked above, with the scenario flags of predict); listed here
  // so that `ringsim calibrate --help` tells it exists.
  o.add_options()("from-trace", "TRACE[,TRACE...]: profiler traces of your ring run (PyTorch JSON/.json.gz or nsys SQLite, one "
                                "per rank): fit your GPU's attention efficiencies and ring hop; needs --hardware, --model, "
                                "--mesh, --seq, --impl, --layout (ringsim calibrate --from-trace --help)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("from-scfa", "CSV of published SCFA/FlashAttention times: method,param,n_seq,ms (data/scfa_calibration.csv)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("name", "name of the fitted profile (default: the base profile's)", cxxopts::value<std::string>()->default_value(""))
                 ("from-speedups", "CSV with hardware,model,mp,sp,n_seq,speedup[,tms]", cxxopts::value<std::string>()->default_value(""))
                 ("mesh-spread-from", "--from-speedups on one mesh: a profile (IMPL/HARDWARE) whose fit held meshes out; its leave-one-mesh-out spread widens the interval",
                  cxxopts::value<std::string>()->default_value(""))
                 ("from-timings", "kernel timings CSV (docs/timings-format.md)", cxxopts::value<std::string>()->default_value(""))
                 ("from-times", "published attention times of a ring library (data/cp_attention_times.csv): joint fit over its GPUs",
                  cxxopts::value<std::string>()->default_value(""))
                 ("shared", "--from-times: parameters shared by all GPUs (host costs)", cxxopts::value<std::string>()->default_value(""))
                 ("shared-cycles", "--from-times: parameters shared by all GPUs, counted in SM cycles", cxxopts::value<std::string>()->default_value(""))
                 ("profiles-dir", "--from-times, --from-kernels: write one fitted profile per implementation and GPU here (DIR/IMPL/HARDWARE.json)", cxxopts::value<std::string>()->default_value(""))
                 ("holdout", "--from-times: the groupings held out one group at a time (hardware, table, heads, sp, mask, pass)",
                  cxxopts::value<std::string>()->default_value("hardware,table,heads"))
                 ("no-logo", "--from-times: skip the leave-one-group-out refits; --from-machine-probes: the leave-one-row-out refits")
                 ("base-profiles", "--from-times: start each GPU from DIR/IMPL/HARDWARE.json (e.g. kernel curves) instead of spec defaults",
                  cxxopts::value<std::string>()->default_value(""))
                 ("from-probes", "NCCL point-to-point probes (data/components/links/): fit each hop type's latency and bandwidth",
                  cxxopts::value<std::string>()->default_value(""))
                 ("as", "--from-probes, --from-kernels: NAME=HARDWARE,...: the catalog GPU of each measured one (by the prefix of its name)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("from-nccl-tests", "nccl-tests output (FILE[,FILE...]: sendrecv_perf, all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf): fit one hop of --hardware",
                  cxxopts::value<std::string>()->default_value(""))
                 ("hop", "--from-nccl-tests: intra-node | inter-node, the hop the files measured", cxxopts::value<std::string>()->default_value(""))
                 ("collective", "--from-nccl-tests: the test that ran, where a file does not name it (all_reduce, all_gather, reduce_scatter, alltoall, sendrecv)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("links-dir", "--from-probes: write HARDWARE.json per GPU here (configs/links); --from-nccl-tests: write or update HARDWARE.json here",
                  cxxopts::value<std::string>()->default_value(""))
                 ("from-machine-probes", "probes of PCIe and multi-NIC machines (data/components/links/pcie_probes.csv): fit each machine's free resource capacities (data/components/machines/NAME.json)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("machines", "--from-machine-probes: the folder of machine descriptions (default: data/components/machines of the catalog's root: the source tree, or $RINGSIM_DATA_DIR)", cxxopts::value<std::string>()->default_value(""))
                 ("machine", "--from-machine-probes: only these machines (NAME,...)", cxxopts::value<std::string>()->default_value(""))
                 ("machines-out", "--from-machine-probes: write the fitted descriptions here (DIR/NAME.json)", cxxopts::value<std::string>()->default_value(""))
                 ("from-kernels", "single-kernel timings (data/components/kernels/): fit the flash kernel family's efficiencies and per-CTA cost per GPU",
                  cxxopts::value<std::string>()->default_value(""))
                 ("from-host-steps", "wall times of a ring library's step loop where the GPU's work is negligible (data/components/host/): fit the host's seconds per step and per call",
                  cxxopts::value<std::string>()->default_value(""))
                 ("min-seconds", "--from-kernels: leave out rows shorter than this (seconds): a call timed alone pays the host's dispatch", cxxopts::value<double>()->default_value("0"))
                 ("method", "--from-kernels on a benchmark chart: the method whose rows to fit", cxxopts::value<std::string>()->default_value("FlashAttention-2"))
                 ("kernel", "--from-kernels: the kernel to fit (configs/kernels/NAME.json), where it is not the one --impl calls on the GPU (flash-attn-3, say)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("derive-from", "a profile (IMPL/HARDWARE) to derive an uncalibrated profile for --hardware from", cxxopts::value<std::string>()->default_value(""))
                 ("keep", "--derive-from: parameters copied as they are; --from-times: what a derived profile copies (scores its interval)", cxxopts::value<std::string>()->default_value(""))
                 ("keep-cycles", "--derive-from: parameters copied as SM cycles (rescaled by the clocks)", cxxopts::value<std::string>()->default_value(""))
                 ("note", "--derive-from, --from-host-steps: a sentence for the provenance notes", cxxopts::value<std::string>()->default_value(""))
                 ("hardware", "hardware name: rows to use / peak FLOP/s", cxxopts::value<std::string>()->default_value(""))
                 ("impl", "implementation the profile is for (default: the profile's, else the hardware's default for ring vs striped; scfa with --from-scfa)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("profile", "base profile (name, IMPL/NAME or path); default: the (hardware, implementation) profile", cxxopts::value<std::string>()->default_value(""))
                 ("free", "parameters to fit (speedups; --from-kernels: instead of its defaults; --from-times, --from-kernels: none scores the profiles as they are)", cxxopts::value<std::string>()->default_value("masked_tile_penalty,skipped_tile_cost"))
                 ("engine", "analytic | des: what predicts each step during the fit", cxxopts::value<std::string>()->default_value("analytic"))
                 ("date", "provenance date (default: today)", cxxopts::value<std::string>()->default_value(""))
                 ("o,output", "write the fitted profile JSON here (atomically)", cxxopts::value<std::string>()->default_value(""))
                 ("report", "write per-row predicted vs published CSV here", cxxopts::value<std::string>()->default_value(""))
                 ("plot", "write an SVG of speedup vs n_seq per mesh here", cxxopts::value<std::string>()->default_value(""))
                 ("h,help", "show help");
  const auto a = parse_or_throw(o, argc, argv);
  if (help_requested(o, a)) return 0;
  const bool s = !a["from-speedups"].as<std::string>().empty(), t = !a["from-timings"].as<std::string>().empty();
  const bool f = !a["from-scfa"].as<std::string>().empty();
  const bool m = !a["from-times"].as<std::string>().empty();
  const bool d = !a["derive-from"].as<std::string>().empty();
  const bool p = !a["from-probes"].as<std::string>().empty();
  const bool k = !a["from-kernels"].as<std::string>().empty();
  const bool n = !a["from-nccl-tests"].as<std::string>().empty();
  const bool h = !a["from-host-steps"].as<std::string>().empty();
  const bool mp = !a["from-machine-probes"].as<std::string>().empty();
  if (int(s) + int(t) + int(f) + int(m) + int(d) + int(p) + int(k) + int(n) + int(h) + int(mp) != 1)
    throw InputError({}, 0, "from-speedups",
                     "give exactly one of --from-speedups, --from-timings, --from-scfa, --from-times, --from-probes, "
                     "--from-nccl-tests, --from-machine-probes, --from-kernels, --from-host-steps and --derive-from");
  if (mp) return calibrate_from_machine_probes(a);
  if (p) return calibrate_from_probes(a);
  if (n) return calibrate_from_nccl_tests(a);
  const models::Catalog catalog;
  if (k) return calibrate_from_kernels(a, catalog);
  if (h) return calibrate_from_host_steps(a, catalog);
  if (d) return calibrate_derive(a, catalog);
  if (f) return calibrate_from_scfa(a, catalog);
  if (m) return calibrate_from_times(a, catalog);
  return s ? calibrate_from_speedups(a, catalog) : calibrate_from_timings(a, catalog);
}

}  // namespace ringsim::cli
