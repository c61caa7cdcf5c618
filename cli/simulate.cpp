// `ringsim simulate`: the discrete-event simulation of one training step, per layout, beside
// the analytic prediction of the same scenario; with --phase prefill, of an inference prefill's
// two ring variants (cli/simulate_prefill.cpp).
#include <algorithm>

#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/long_run.hpp"
#include "cli/progress.hpp"
#include "cli/scenario_options.hpp"
#include "cli/simulate_prefill.hpp"
#include "planning/grid.hpp"
#include "io/output_file.hpp"
#include "models/catalog/resolve.hpp"
#include "models/analytic/analytic.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "sim/step.hpp"
#include "sim/trace.hpp"

namespace ringsim::cli {

using models::InputError;

int run_simulate(int argc, char** argv) {
  cxxopts::Options o("ringsim simulate", "Discrete-event simulation of a training step on a ring of devices, or of a prefill (--phase prefill)");
  add_scenario_options(o, "contiguous,striped");
  o.add_options()("topology", "node:G | nodes:NxG | torus:AxB[xC] (default: from the hardware)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("placement", "mp-inner | sp-inner: tensor-parallel groups (default) or rings on consecutive "
                  "devices", cxxopts::value<std::string>()->default_value("mp-inner"))
                 ("buffers", "K/V buffers per device: 1 (no overlap) or 2 (double buffering)",
                  cxxopts::value<std::string>()->default_value("2"))
                 ("sync", "async | barrier (lock-step rounds, the analytic model's assumption)",
                  cxxopts::value<std::string>()->default_value("async"))
                 ("granularity", "round | tile: one compute event per device-round or per tile",
                  cxxopts::value<std::string>()->default_value("round"))
                 ("layer-passes", "replay | per-layer | whole: replay layers that repeat, simulate each layer, or the "
                  "whole step as one pass (same result; speed only)", cxxopts::value<std::string>()->default_value("replay"))
                 ("trace", "write a Chrome trace (Perfetto) of the first layout here", cxxopts::value<std::string>()->default_value(""))
                 ("matrix", "write the first layout's per-(device, round) matrices as CSV here",
                  cxxopts::value<std::string>()->default_value(""))
                 ("format", "table|json", cxxopts::value<std::string>()->default_value("table"))
                 ("phase", "train (a training step) | prefill (a context-parallel prefill of --seq new tokens, pass-KV and "
                  "pass-Q, beside predict --phase prefill; docs/inference.md)", cxxopts::value<std::string>()->default_value("train"))
                 ("cached-tokens", "--phase prefill: tokens already in the KV cache that the new ones attend to (0, 131072, 128k or 1M)",
                  cxxopts::value<std::string>()->default_value("0"))
                 ("weights", "--phase prefill: bf16 | fp8-ffn, as predict --phase prefill takes it",
                  cxxopts::value<std::string>()->default_value("bf16"))
                 ("kv-cache", "--phase prefill: the K/V cache in bf16 | fp8, as predict --phase prefill takes it",
                  cxxopts::value<std::string>()->default_value("bf16"))
                 ("max-events", "refuse a step estimated to need more engine events than this",
                  cxxopts::value<std::string>()->default_value(fmt::format("{:g}", kDefaultMaxEvents)))
                 ("h,help", "show help");
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto format = one_of(r, "format", {"table", "json"});
  const auto phase = one_of(r, "phase", {"train", "prefill", "decode"});
  if (phase == "decode")
    throw InputError({}, 0, "phase",
                     "a decode step is not simulated (every device does the same work and waits only at its "
                     "collectives, so the closed form is what a simulation would give): ringsim predict --phase decode");
  if (phase == "prefill") {
    // What only a training step has: refused rather than ignored.
    for (const char* flag : {"buffers", "granularity", "layer-passes", "trace", "matrix", "max-events"})
      if (r.count(flag))
        throw InputError({}, 0, flag, std::string("--") + flag + " is for a training step, not --phase prefill");
    if (r.count("tile")) throw InputError({}, 0, "tile", "--phase prefill runs the kernel's own tiles: no --tile");
    sim::PrefillSimOptions popt;
    popt.sync = one_of(r, "sync", {"async", "barrier"}) == "barrier" ? sim::Sync::Barrier : sim::Sync::Async;
    popt.topology = r["topology"].as<std::string>();
    popt.placement = one_of(r, "placement", {"mp-inner", "sp-inner"}) == "sp-inner" ? sim::MeshOrder::SpInner
                                                                                     : sim::MeshOrder::MpInner;
    write_output("-", simulate_prefill_text(r, models::Catalog{}, popt, format));
    return 0;
  }
  for (const char* flag : {"cached-tokens", "weights", "kv-cache"})
    if (r.count(flag)) throw InputError({}, 0, flag, std::string("--") + flag + " is for --phase prefill");
  sim::StepOptions opt;
  opt.topology = r["topology"].as<std::string>();
  opt.buffers = models::parse_int(r["buffers"].as<std::string>(), "buffers");
  opt.placement = one_of(r, "placement", {"mp-inner", "sp-inner"}) == "sp-inner" ? sim::MeshOrder::SpInner
                                                                                  : sim::MeshOrder::MpInner;
  opt.sync = one_of(r, "sync", {"async", "barrier"}) == "barrier" ? sim::Sync::Barrier : sim::Sync::Async;
  opt.granularity = one_of(r, "granularity", {"round", "tile"}) == "tile" ? sim::Granularity::Tile : sim::Granularity::Round;
  const auto passes = one_of(r, "layer-passes", {"replay", "per-layer", "whole"});
  opt.layer_passes = passes == "replay" ? sim::LayerPasses::Replay
                     : passes == "per-layer" ? sim::LayerPasses::PerLayer
                                             : sim::LayerPasses::Whole;
  const double max_events = parse_limit(r["max-events"].as<std::string>(), "max-events");
  const auto trace_path = r["trace"].as<std::string>();
  const auto matrix_path = r["matrix"].as<std::string>();
  // Opened before the simulation: an unusable path fails at once, not after a long run.
  std::unique_ptr<io::Output> trace_out, matrix_out;
  if (!trace_path.empty()) trace_out = std::make_unique<io::Output>(trace_path);
  if (!matrix_path.empty()) matrix_out = std::make_unique<io::Output>(matrix_path);
  auto args = parse_scenario_args(r);
  const models::Catalog catalog;
  const auto runs = expand_runs(args, catalog);
  const bool with_cp = args.cps.size() > 1;

  std::string out;
  nlohmann::json results = nlohmann::json::array();
  double first_step = 0;
  // Row label: the layout, with the strategy first when several are compared; 12 wide or the
  // longest label (bucket-striped, perm:FILE).
  auto label = [&](const models::ScenarioSpec& spec) { return with_cp ? spec.cp.text() + " " + spec.layout.text() : spec.layout.text(); };
  std::size_t lw = 12;
  for (const auto& spec : runs) lw = std::max(lw, label(spec).size());
  for (std::size_t li = 0; li < runs.size(); ++li) {
    const auto& spec = runs[li];
    auto s = models::resolve(spec, catalog);
    // Placed in the nodes of --topology as predict, sweep and plan place it: the analytic column
    // and the transport's rates are those of the machine the simulation runs on.
    planning::apply_topology(s, opt.topology);
    opt.record_trace = li == 0 && !trace_path.empty();
    announce_simulation("ringsim simulate", s, opt, max_events);
    ProgressBar progress("passes", "ringsim simulate: " + spec.layout.text());
    opt.progress = [&](std::int64_t done, std::int64_t total) { progress.update(done, total); };
    const auto res = sim::simulate_step(s, opt);
    progress.finish();
    const auto analytic = models::predict(s);
    if (li == 0) {
      first_step = res.step_s;
      out += fmt::format("ringsim simulate: {} on {} x {} ({}), mesh {}x{}, n_seq {}, profile {}{}, buffers {}, {} rounds\n",
                         s.model.name, res.devices, s.hardware.name, res.topology, spec.mp, spec.sp, spec.n_seq,
                         s.profile.name, s.profile.provenance.calibrated ? " (calibrated)" : " (uncalibrated)",
                         opt.buffers, opt.sync == sim::Sync::Barrier ? "lock-step" : "asynchronous");
      out += "implementations:";
      std::string last;
      for (const auto& run : runs) {
        const auto item = run.cp.text() + " = " + run.impl;
        if (item != last) out += (last.empty() ? " " : "; ") + item;
        last = item;
      }
      out += "\n\n";
      out += fmt::format("{:<{}} {:>10} {:>12} {:>6} {:>10} {:>10} {:>9} {:>11} {:>10} {:>9} {:>9}\n",
                         with_cp ? "strategy layout" : "layout", lw, "step",
                         "tokens/s", "MFU", "busiest", "exposed", "imbalance", "analytic", "events", "passes", "speedup");
      // Written to the temporaries now, renamed over the targets only after every layout ran:
      // a later layout that fails leaves the existing files untouched.
      if (trace_out) trace_out->write(sim::chrome_trace_json(res));
      if (matrix_out) matrix_out->write(sim::matrices_csv(res));
    }
    double busiest = 0;
    for (double b : res.busy_s) busiest = std::max(busiest, b);
    out += fmt::format("{:<{}} {:>10} {:>12} {:>5.1f}% {:>10} {:>10} {:>9.2f} {:>11} {:>10} {:>9} {:>8.2f}x\n", label(spec), lw,
                       human_seconds(res.step_s), human_count(res.tokens_per_s), 100 * res.mfu, human_seconds(busiest),
                       human_seconds(res.exposed_communication_s), res.imbalance, human_seconds(analytic.step_s),
                       human_count(static_cast<double>(res.events)),
                       fmt::format("{}+{}", res.passes_simulated, res.passes_reused), first_step / res.step_s);
    nlohmann::json links = nlohmann::json::array();
    for (const auto& l : res.link_bytes)
      links.push_back({{"link", l.link}, {"from", l.from}, {"to", l.to}, {"bytes_sent", l.bytes_sent},
                       {"bytes_received", l.bytes_received}});
    results.push_back({{"layout", spec.layout.text()}, {"cp", s.strategy.spec}, {"impl", s.impl.name}, {"topology", res.topology},
                       {"step_s", res.step_s},
                       {"tokens_per_s", res.tokens_per_s}, {"mfu", res.mfu}, {"busiest_s", busiest},
                       {"exposed_communication_s", res.exposed_communication_s}, {"imbalance", res.imbalance},
                       {"analytic_step_s", analytic.step_s}, {"events", res.events},
                       {"passes_simulated", res.passes_simulated}, {"passes_replayed", res.passes_reused},
                       {"link_bytes", links}});
  }
  if (trace_out) trace_out->commit();
  if (matrix_out) matrix_out->commit();
  if (format == "json") {
    write_output("-", results.dump(2) + "\n");
    return 0;
  }
  out += "\nbusiest = the device with the most compute; exposed = step minus that (waiting for K/V, dK/dV or\n"
         "neighbours); analytic = the lock-step closed form (ringsim predict) of the same scenario;\n"
         "passes = engine passes simulated + layers replayed (a layer entered as the previous identical one was\n"
         "repeats it exactly; see docs/simulator.md).\n";
  // The trace and the matrices are of one row; with several, say which (name one with --cp and
  // --layout to record another).
  if ((trace_out || matrix_out) && runs.size() > 1)
    out += fmt::format("{} of the first row only ({}); --cp and --layout pick another.\n",
                       trace_out && matrix_out ? "--trace and --matrix hold the simulation"
                       : trace_out              ? "--trace holds the simulation"
                                                : "--matrix holds the simulation",
                       label(runs.front()));
  write_output("-", out);
  return 0;
}

}  // namespace ringsim::cli
