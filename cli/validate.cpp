// `ringsim validate` (CUDA builds): measured ring rounds on one GPU beside the prediction.
#include <cmath>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/gpu_common.hpp"
#include "cli/scenario_options.hpp"
#include "cli/validate_core.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

std::string pct(double e) { return std::isfinite(e) ? fmt::format("{:+.1f}%", e) : std::string("-"); }

}  // namespace

int run_validate(int argc, char** argv) {
  cxxopts::Options o("ringsim validate",
                     "Emulate an N-device ring on one GPU: time every (round, device) forward launch with CUPTI and "
                     "compare the ring's per-round and per-step compute with the analytic prediction");
  add_scenario_options(o, "contiguous,striped,zigzag");
  o.add_options()("dtype", "bf16|fp16", cxxopts::value<std::string>()->default_value("bf16"))
                 ("repeats", "timed launches per (round, device); the median counts", cxxopts::value<std::string>()->default_value("5"))
                 ("warmup", "untimed launches before them", cxxopts::value<std::string>()->default_value("1"))
                 ("device", "CUDA device index", cxxopts::value<std::string>()->default_value("0"))
                 ("o,output", "write the per-round CSV here (atomically)", cxxopts::value<std::string>()->default_value(""))
                 ("h,help", "show help");
  const auto a = parse_or_throw(o, argc, argv);
  if (help_requested(o, a)) return 0;
  auto args = parse_scenario_args(a);
  ValidateOptions opt;
  opt.dtype = one_of(a, "dtype", {"bf16", "fp16"}) == "bf16" ? kernels::cuda::DType::BF16 : kernels::cuda::DType::FP16;
  opt.repeats = static_cast<int>(models::parse_int_in(a["repeats"].as<std::string>(), "repeats", 1, 1000000));
  const auto warmup = models::parse_int_in(a["warmup"].as<std::string>(), "warmup", 0, 1000000);
  opt.warmup = static_cast<int>(warmup);
  opt.seed = args.base.seed;
  const auto device = models::parse_int_in(a["device"].as<std::string>(), "device", 0, 4096);
  const models::Catalog catalog;
  // What runs here is ringsim's own kernel: its predictions are ringsim-tiles' unless asked otherwise.
  if (args.base.impl.empty() && args.base.profile.empty()) args.base.impl = "ringsim-tiles";
  choose_implementation(args, catalog);
  // Resolve every layout first: bad input is exit code 2 even on a machine without a GPU.
  std::vector<models::ResolvedScenario> scenarios;
  for (const auto& layout : args.layouts) {
    auto spec = args.base;
    spec.layout = layout;
    scenarios.push_back(models::resolve(spec, catalog));
    check_kernel_scenario(scenarios.back());
  }
  gpu::require_device(static_cast<std::int32_t>(device));
  const auto info = calibration::query_device_info(static_cast<std::int32_t>(device));
  calibration::CuptiCollector collector;

  std::string out, csv = csv_line({"device", "layout", "mask", "model", "sp", "n_seq", "tile_q", "tile_k", "round",
                                   "measured_max_s", "measured_mean_s", "argmax_device", "predicted_max_s", "error_pct"});
  const auto& s0 = scenarios.front();
  out += fmt::format("ringsim validate: {} on {} (prediction for {}), ring of {} emulated on one GPU, n_seq {}, mask {}, "
                     "tile {}x{}; forward, one layer\n",
                     s0.model.name, info.name, s0.hardware.name, s0.spec.sp, s0.spec.n_seq, s0.mask->name(), s0.tile.q,
                     s0.tile.k);
  for (const auto& s : scenarios) {
    const auto v = run_validation(s, opt, collector);
    out += fmt::format("\n{} ({} q heads, {} kv heads, head_dim {} per device)\n", s.layout->name(), v.q_heads,
                       v.kv_heads, v.head_dim);
    out += fmt::format("{:>6} {:>12} {:>7} {:>12} {:>12} {:>8}\n", "round", "measured", "device", "mean", "predicted",
                       "error");
    const auto row = [&](const std::string& round, double meas, double mean, std::int64_t dev, double pred) {
      csv += csv_line({info.name, s.layout->name(), s.mask->name(), s.model.name, std::to_string(s.spec.sp),
                       std::to_string(s.spec.n_seq), std::to_string(s.tile.q), std::to_string(s.tile.k), round,
                       fmt::format("{:.6e}", meas), fmt::format("{:.6e}", mean), dev < 0 ? "" : std::to_string(dev),
                       fmt::format("{:.6e}", pred), fmt::format("{:.2f}", error_pct(pred, meas))});
    };
    for (const auto& r : v.rounds) {
      out += fmt::format("{:>6} {:>12} {:>7} {:>12} {:>12} {:>8}\n", r.round, human_seconds(r.measured_max_s),
                         r.argmax_device, human_seconds(r.measured_mean_s), human_seconds(r.predicted_max_s),
                         pct(error_pct(r.predicted_max_s, r.measured_max_s)));
      row(std::to_string(r.round), r.measured_max_s, r.measured_mean_s, r.argmax_device, r.predicted_max_s);
    }
    out += fmt::format("{:>6} {:>12} {:>7} {:>12} {:>12} {:>8}\n", "step", human_seconds(v.measured_step_s), "", "",
                       human_seconds(v.predicted_step_s), pct(error_pct(v.predicted_step_s, v.measured_step_s)));
    row("step", v.measured_step_s, 0, -1, v.predicted_step_s);
  }
  out += "\nmeasured = slowest device's median CUPTI kernel time per round (fully masked blocks are not launched); "
         "step = sum over rounds (lock-step ring, compute only); error = predicted / measured - 1\n";
  if (const auto path = a["output"].as<std::string>(); !path.empty()) write_output(path, csv);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
