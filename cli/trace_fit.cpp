#include "cli/trace_fit.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/kernel_curves.hpp"
#include "calibration/trace/from_trace.hpp"
#include "calibration/trace/read_trace.hpp"
#include "calibration/trace/step_summary.hpp"
#include "calibration/trace/trace_check.hpp"
#include "calibration/trace/trace_ranks.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/predict_rows.hpp"
#include "cli/progress.hpp"
#include "cli/scenario_options.hpp"
#include "cli/terminal_text.hpp"
#include "io/output_set.hpp"
#include "models/inference/phase.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

bool has_flag(int argc, char** argv, const char* flag) {
  const std::size_t n = std::strlen(flag);
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], flag, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '=')) return true;
  return false;
}

namespace {

// The traces: FILE[,FILE...] after the flag, and any positional files (a shell glob expands
// `--from-trace rank*.json` into one value and the rest as positionals).
std::vector<std::string> trace_files(const cxxopts::ParseResult& r, const char* flag) {
  std::vector<std::string> files;
  for (const auto& f : models::split(r[flag].as<std::string>(), ','))
    if (!f.empty()) files.emplace_back(f);
  for (const auto& f : r["files"].as<std::vector<std::string>>())
    if (!f.empty()) files.push_back(f);
  for (const auto& f : files)
    if (f.starts_with("-"))
      throw InputError({}, 0, flag, "expected trace files after --" + std::string(flag) + ", got the flag '" + f + "'");
  if (files.empty()) throw InputError({}, 0, flag, "give the traces (PyTorch profiler JSON or .json.gz, one per rank)");
  return files;
}

std::vector<calibration::Trace> read_traces(const std::vector<std::string>& files, const std::string& step_regex) {
  std::vector<calibration::Trace> out;
  for (const auto& f : files) {
    ProgressBar progress("MB", "reading " + terminal_text(f, false));
    out.push_back(calibration::read_trace(
        f, [&](std::int64_t read, std::int64_t total) { progress.update_bytes(read, total); }, step_regex));
    progress.finish();
  }
  return out;
}

calibration::KernelClasses load_classes(const cxxopts::ParseResult& r) {
  std::string path = r["classes"].as<std::string>();
  if (path.empty()) path = calibration::KernelClasses::default_path(models::Catalog::default_root());
  return calibration::KernelClasses::load(path);
}

// The one scenario the traces ran: a single strategy and layout. A trace does not record it (no
// hardware, model, mesh or sequence length in a kernel's name), and predict's defaults would put
// a100-80gb / ringattn-1b / 1x8 / 131072 tokens beside any trace: the flags that say what ran
// are required, all missing ones named at once.
LayoutResult scenario_of(const cxxopts::ParseResult& r, const models::Catalog& catalog, const std::string& command) {
  std::vector<std::string> missing;
  std::string first;  // the field of the error: the first flag missing
  const auto need = [&](std::initializer_list<const char*> any_of, const char* shown) {
    for (const char* f : any_of)
      if (r.count(f)) return;
    if (missing.empty()) first = *any_of.begin();
    missing.emplace_back(shown);
  };
  need({"hardware", "hardware-file"}, "--hardware (or --hardware-file)");
  need({"model", "model-file"}, "--model (or --model-file)");
  need({"mesh"}, "--mesh");
  need({"seq"}, "--seq");
  need({"impl"}, "--impl");
  need({"layout"}, "--layout");
  if (!missing.empty())
    throw InputError({}, 0, first,
                     fmt::format("{} needs the scenario the traced run used, which a trace does not record: missing {} "
                                 "(the flags of ringsim predict; docs/calibrate-your-cluster.md)",
                                 command, models::join_list(missing)));
  auto args = parse_scenario_args(r);
  require_one_strategy(args, "a trace");
  if (args.layouts.size() != 1) throw InputError({}, 0, "layout", "a trace ran one layout: give exactly one --layout");
  const auto runs = expand_runs(args, catalog);
  return LayoutResult{runs.front().layout.text(), models::resolve(runs.front(), catalog)};
}

void add_trace_options(cxxopts::Options& o, const char* flag, const char* what) {
  add_scenario_options(o, "contiguous");
  o.add_options()(flag, what, cxxopts::value<std::string>()->default_value(""))
                 ("files", "more trace files", cxxopts::value<std::vector<std::string>>()->default_value({}))
                 ("classes", "kernel class rules (default: configs/trace/kernel_classes.json)", cxxopts::value<std::string>()->default_value(""))
                 ("step-regex", "Nsight Systems exports: the NVTX ranges that are steps, a capture group for the number",
                  cxxopts::value<std::string>()->default_value(calibration::kDefaultStepRegex))
                 ("h,help", "show help");
  o.parse_positional({"files"});
}

std::string scenario_line(const models::ResolvedScenario& s) {
  return fmt::format("{} {} {} on {}, {}, mesh {}x{}, {} tokens, batch {}", s.impl.name, s.strategy.spec, s.spec.layout.text(),
                     s.hardware.name, s.model.name, s.spec.mp, s.spec.sp, s.spec.n_seq, s.spec.batch);
}

}  // namespace

int calibrate_from_trace(int argc, char** argv) {
  cxxopts::Options o("ringsim calibrate --from-trace",
                     "Fit the attention kernels' efficiencies of your GPU and its ring hop from traces of a ring run "
                     "(one per rank) and the scenario it ran (the flags of ringsim predict)");
  o.positional_help("[TRACE...]");
  add_trace_options(o, "from-trace", "traces of the run: FILE[,FILE...] (PyTorch profiler JSON or .json.gz, one per rank)");
  o.add_options()("free", "profile parameters to fit (default attention_efficiency,attention_bwd_efficiency; cta_overhead_s "
                          "and the others of calibrate --from-kernels where the run's shapes tell them)",
                  cxxopts::value<std::string>()->default_value("attention_efficiency,attention_bwd_efficiency"))
                 ("o,output", "write the fitted profile JSON here", cxxopts::value<std::string>()->default_value(""))
                 ("links-dir", "write the fitted hop into DIR/HARDWARE.json (configs/links format; the other hop type kept)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("report", "write per-call measured vs fitted CSV here", cxxopts::value<std::string>()->default_value(""))
                 ("date", "provenance date (default: the traces' recording date, else today)", cxxopts::value<std::string>()->default_value(""));
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const models::Catalog catalog;
  const auto files = trace_files(r, "from-trace");
  const auto row = scenario_of(r, catalog, "calibrate --from-trace");
  const auto& s = row.scenario;
  const auto classes = load_classes(r);
  const auto traces = read_traces(files, r["step-regex"].as<std::string>());
  const auto rows = calibration::attention_rows(traces, classes, s);
  std::vector<std::string> free;
  for (const auto& n : models::split(r["free"].as<std::string>(), ','))
    if (!n.empty()) free.emplace_back(n);
  const auto shapes = calibration::median_by_shape(rows);
  calibration::check_fit_coverage(traces, shapes, free, s);
  const auto fit = [&] {
    try {
      return calibration::fit_kernel_curves(shapes, *s.impl.kernel_model, s.hardware, s.profile, free);
    } catch (const InputError& e) {
      // The fit's rows are the traces' calls: say whose.
      if (!e.file().empty()) throw;
      throw InputError(traces.size() == 1 ? traces.front().file : std::string(), 0, e.field(),
                       "fitting the attention calls of " + calibration::files_text(traces) + ": " + e.message());
    }
  }();
  std::string date = r["date"].as<std::string>();
  if (date.empty()) date = traces.front().date.empty() ? today() : traces.front().date;

  std::string out = fmt::format("ringsim calibrate --from-trace: {} traces; scenario {}\n", traces.size(), scenario_line(s));
  out += fmt::format("kernel efficiencies ({} kernel model; base profile {}): {} calls in {} shape groups, fitted on each "
                     "shape's median time\n", s.impl.kernel_model->name, s.profile.name, rows.size(), fit.groups);
  for (const auto& p : fit.parameters) {
    const bool seconds = p.name.ends_with("_s");
    const double k = seconds ? 1e6 : 1.0;
    out += fmt::format("  {:<26} {:>9.4g} +- {:<9.2g}{}{}  (base {:.4g})\n", p.name, p.value * k, p.std_error * k,
                       seconds ? " us" : "", p.at_bound ? "  (at its bound)" : "", (s.profile.parameter(p.name) ? *s.profile.parameter(p.name) : 0.0) * k);
  }
  for (const auto& sc : fit.scores)
    out += fmt::format("  {:<8} {:>3} shapes   in-sample {:.1f} %   held-out (leave one shape group out) {:.1f} %\n",
                       calibration::to_string(sc.pass), sc.rows, 100 * sc.in_sample_mape, 100 * sc.held_out_mape);

  // The outputs (-o, --report, --links-dir) are one set: staged here, renamed together at the end,
  // so a later one that cannot be written leaves the earlier ones as they were.
  io::OutputSet outputs;
  const auto links_dir = r["links-dir"].as<std::string>();
  std::optional<HopRecord> hop;

  // The hop: what the ring's transfers crossed (the scenario's ring within a node or across).
  const bool inter = s.ring_crosses_nodes();
  std::optional<calibration::TraceLinkFit> link;
  try {
    link = calibration::fit_trace_link(traces, classes);
  } catch (const InputError& e) {
    out += fmt::format("link: not fitted ({})\n", e.message());
  }
  if (link) {
    out += fmt::format("link ({} hop; point-to-point kernels, 10th percentile per message size):\n", inter ? "inter-node" : "intra-node");
    for (const auto& z : link->sizes)
      out += fmt::format("  {:>10.4g} MB  {:>6} messages  p10 {:.4g} ms  median {:.4g} ms\n", z.bytes / 1e6, z.messages,
                         z.p10_s * 1e3, z.median_s * 1e3);
    out += fmt::format("  bandwidth {:.4g} GB/s, latency {}; synchronisation excess (median - p10) {:.4g} ms per message\n",
                       link->hop.bandwidth_bytes_per_s / 1e9,
                       link->latency_identified ? fmt::format("{:.4g} us", link->hop.latency_s * 1e6)
                                                : std::string("not identified (one message size: bandwidth alone)"),
                       link->sync_excess_s * 1e3);
    if (link->sizes.size() >= 3) out += fmt::format("  held-out (leave one size out) {:.1f} %\n", 100 * link->hop.held_out_mape);
    if (!links_dir.empty()) {
      HopRecord rec;
      rec.hardware = s.hardware.name;
      rec.inter_node = inter;
      rec.hop = link->hop;
      rec.fitted_from = "traces " + models::join_list(files);
      rec.date = date;
      rec.notes = fmt::format("{}. Fitted by ringsim calibrate --from-trace: time = latency + bytes / bandwidth over the "
                              "10th percentile of each message size's point-to-point kernels; synchronisation excess "
                              "{:.4g} ms per message.", link->hop.pattern, link->sync_excess_s * 1e3);
      hop = rec;
    }
  }
  if (const auto path = r["output"].as<std::string>(); !path.empty()) {
    auto p = fit.profile;
    p.hardware = s.hardware.name;
    p.implementation = s.impl.name;
    p.version = s.profile.version + 1;
    p.provenance.calibrated = true;
    p.provenance.method = "trace: kernel curves fitted to the attention calls of a traced ring run (bounded "
                          "Levenberg-Marquardt on relative time, flash kernel-time model)";
    p.provenance.fitted_from = models::join_list(files);
    p.provenance.date = date;
    std::string fitted;
    for (const auto& q : fit.parameters) fitted += fmt::format("{}{} = {:.4g} +- {:.2g}", fitted.empty() ? "" : "; ", q.name, q.value, q.std_error);
    p.provenance.notes = fmt::format("From {} traces of {}: {} attention calls in {} shape groups; {}. Base: {}.", traces.size(),
                                     scenario_line(s), rows.size(), fit.groups, fitted, s.profile.name);
    p.validate(path);
    outputs.stage(path, p.to_json().dump(2) + "\n");
    out += "wrote " + path + "\n";
  }
  if (const auto path = r["report"].as<std::string>(); !path.empty()) {
    std::string rep = csv_line({"pass", "q_len", "k_len", "causal", "group", "calls", "median_measured_s", "fitted_s", "held_out_s"});
    for (std::size_t i = 0; i < shapes.size(); ++i)
      rep += csv_line({calibration::to_string(shapes[i].pass), std::to_string(shapes[i].q_len), std::to_string(shapes[i].k_len),
                       shapes[i].causal ? "true" : "false", shapes[i].group, std::to_string(shapes[i].line),
                       fmt::format("{:.6g}", shapes[i].seconds), fmt::format("{:.6g}", fit.fitted_s[i]),
                       fmt::format("{:.6g}", fit.held_out_s[i])});
    outputs.stage(path, rep);
  }
  // The links file last: its folder stays locked from reading the file to renaming the new one.
  if (hop) out += stage_hop(outputs, links_dir, *hop);
  outputs.commit();
  std::fputs(terminal_text(out, true).c_str(), stdout);
  return 0;
}

int check_trace(int argc, char** argv) {
  cxxopts::Options o("ringsim check --trace",
                     "A measured step beside the prediction for the same scenario, per component, with the largest gap named");
  o.positional_help("[TRACE...]");
  add_trace_options(o, "trace", "traces of the run: FILE[,FILE...] (PyTorch profiler JSON or .json.gz, one per rank)");
  o.add_options()("format", "table|json", cxxopts::value<std::string>()->default_value("table"))
                 ("cached-tokens", "a forward-only trace (a prefill): tokens already in the KV cache (default 0); a "
                  "decode trace: each sequence's context (required there)",
                  cxxopts::value<std::string>()->default_value("0"));
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto format = one_of(r, "format", {"table", "json"});
  const auto cached = models::parse_int_in(r["cached-tokens"].as<std::string>(), "cached-tokens", 0, std::int64_t{1} << 40);
  const models::Catalog catalog;
  const auto files = trace_files(r, "trace");
  auto row = scenario_of(r, catalog, "check --trace");
  const auto classes = load_classes(r);
  std::vector<calibration::TraceSummary> summaries;
  for (const auto& t : read_traces(files, r["step-regex"].as<std::string>())) summaries.push_back(calibration::summarize(t, classes));
  std::vector<calibration::TraceRank> ranks;
  for (const auto& t : summaries) ranks.push_back({t.file, t.rank});
  const auto positions = calibration::ring_positions(ranks, row.scenario.spec.sp);
  // The phase the traces ran (backward kernels: training; forward alone: a prefill; decode alone:
  // decode), predicted as `ringsim predict` does with its defaults (training: dp 1, ZeRO-3, the
  // profile's recomputation; prefill and decode: --phase, with --cached-tokens).
  const auto phase = calibration::trace_phase(summaries);
  calibration::PredictedStep predicted;
  std::string scenario = scenario_line(row.scenario);
  if (phase == models::RunPhase::Train) {
    if (r.count("cached-tokens")) throw InputError({}, 0, "cached-tokens", "the traces hold backward kernels (a training step): --cached-tokens is for a forward-only or decode trace");
    Training training;
    prepare_training(row, training);
    predict_row(row, Engine::Analytic);
    apply_training(row, training);
    predicted = calibration::PredictedStep::of(row.prediction);
  } else {
    const auto spec = models::inference_spec(row.scenario.spec, phase, cached, catalog);
    const auto s = models::resolve(spec, catalog);
    predicted = calibration::PredictedStep::of(models::predict_inference(s, phase, cached));
    scenario = fmt::format("{} ({} as `ringsim predict --phase {}` runs it, {} cached tokens)", scenario_line(s),
                           models::to_string(phase), models::to_string(phase), cached);
  }
  const auto c = calibration::check_trace(summaries, predicted);
  const auto crit_rank = positions[static_cast<std::size_t>(c.critical_rank)];
  const std::string phase_text = phase == models::RunPhase::Train    ? "training step (backward attention kernels in the traces)"
                                 : phase == models::RunPhase::Prefill ? "forward only (no backward attention kernel in the traces): a prefill"
                                                                      : "decode (decode attention kernels only)";
  if (format == "json") {
    nlohmann::json j{{"scenario", scenario}, {"phase", models::to_string(phase)}, {"ranks", c.ranks}, {"steps", c.steps},
                     {"critical_rank", crit_rank}, {"critical_trace", summaries[static_cast<std::size_t>(c.critical_rank)].file},
                     {"diagnosis", c.diagnosis}};
    j["components"] = nlohmann::json::array();
    for (const auto& x : c.rows)
      j["components"].push_back({{"component", x.component},
                                 {"measured_s", x.measured_s},
                                 {"predicted_s", x.predicted_s ? nlohmann::json(*x.predicted_s) : nlohmann::json(nullptr)},
                                 {"measured_as", x.how}});
    // \uXXXX for everything outside ASCII: a name's escape sequence never reaches the terminal.
    std::fputs((j.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) + "\n").c_str(), stdout);
    return 0;
  }
  std::string out = fmt::format("ringsim check --trace: {} ranks, {} steps each (medians); {}; scenario {}\n", c.ranks, c.steps,
                                phase_text, scenario);
  out += fmt::format("  {:<24} {:>12} {:>12} {:>8}  {}\n", "component", "measured ms", "predicted ms", "ratio", "measured as");
  for (const auto& x : c.rows) {
    const auto pred = x.predicted_s ? fmt::format("{:>12.3f}", *x.predicted_s * 1e3) : fmt::format("{:>12}", "-");
    const auto ratio = x.predicted_s && *x.predicted_s > 0 ? fmt::format("{:>7.2f}x", x.measured_s / *x.predicted_s) : fmt::format("{:>8}", "-");
    out += fmt::format("  {:<24} {:>12.3f} {} {}  {}\n", x.component, x.measured_s * 1e3, pred, ratio, x.how);
  }
  out += "  " + c.diagnosis + "\n";
  out += fmt::format("critical rank: {} ({}, the most attention time); predicted: the busiest device of the lock-step model\n",
                     crit_rank, summaries[static_cast<std::size_t>(c.critical_rank)].file);
  std::fputs(terminal_text(out, true).c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
