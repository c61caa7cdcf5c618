// `ringsim trace summarize`: where each profiled step of a user's own run went, per rank and GPU,
// from PyTorch profiler (Kineto) traces or Nsight Systems SQLite exports: attention forward and backward, point-to-point
// transfers, collectives, GEMMs, copies and the rest, the communication no compute hid, and idle
// time. Table, CSV or JSON; kernels no rule classes are listed by name, never dropped.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/trace/read_trace.hpp"
#include "calibration/trace/step_summary.hpp"
#include "calibration/trace/synthetic.hpp"
#include "models/analytic/analytic.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/progress.hpp"
#include "cli/scenario_options.hpp"
#include "cli/terminal_text.hpp"
#include "io/output_file.hpp"
#include "io/output_set.hpp"
#include "models/catalog/catalog.hpp"
#include "models/io/error.hpp"
#include "models/io/names.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

namespace {

using calibration::kOpClasses;
using calibration::kOpClassNames;
using calibration::StepSummary;
using calibration::TraceSummary;

constexpr double kMs = 1e-3;  // microseconds to milliseconds

std::string rank_text(const TraceSummary& t) {
  if (t.rank < 0) return "rank not recorded";
  return t.world_size > 0 ? fmt::format("rank {} of {}", t.rank, t.world_size) : fmt::format("rank {}", t.rank);
}

std::string step_text(std::int64_t step) { return step < 0 ? std::string("all") : std::to_string(step); }

// Every step's wall on every GPU of a trace, summed: what an unclassified kernel's share is of.
double steps_wall_us(const TraceSummary& t) {
  double w = 0;
  for (const auto& s : t.steps) w += s.wall_us;
  return w;
}

// A share as a percentage; "-" without steps to share (never a NaN).
double share_of(double part_us, double wall_us) { return wall_us > 0 ? part_us / wall_us : 0.0; }
std::string share_text(double part_us, double wall_us) {
  return wall_us > 0 ? fmt::format("{:.1f} %", 100 * share_of(part_us, wall_us)) : std::string("-");
}

std::string table(const std::vector<TraceSummary>& traces, std::size_t top) {
  std::string out;
  for (const auto& t : traces) {
    // Names from the trace are escaped one by one (a line break in one would break the table).
    out += fmt::format("{}: {}{}{}; {} GPU ops", terminal_text(t.file, false), rank_text(t),
                       t.device_name.empty() ? "" : ", " + terminal_text(t.device_name, false),
                       t.date.empty() ? "" : ", recorded " + t.date, t.ops);
    if (t.ops_outside_steps > 0)
      out += fmt::format(" ({} launched outside every ProfilerStep, {:.3f} ms, not counted)", t.ops_outside_steps,
                         t.outside_steps_us * kMs);
    out += "\n";
    if (t.steps.empty()) {
      out += "  no GPU operation in any step\n\n";
      continue;
    }
    out += fmt::format("  {:>6} {:>3} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n", "step", "gpu",
                       "wall ms", "attn fwd", "attn bwd", "attn dec", "p2p", "coll", "gemm", "memory", "other", "exposed", "idle");
    for (const StepSummary& s : t.steps) {
      out += fmt::format("  {:>6} {:>3} {:>9.3f}", step_text(s.step), s.device, s.wall_us * kMs);
      for (std::size_t c = 0; c < kOpClasses; ++c) out += fmt::format(" {:>9.3f}", s.class_us[c] * kMs);
      out += fmt::format(" {:>9.3f} {:>9.3f}\n", s.exposed_communication_us * kMs, s.idle_us * kMs);
    }
    double p2p = 0, coll = 0;
    std::int64_t unsized = 0;
    for (const auto& s : t.steps) p2p += s.p2p_bytes, coll += s.collective_bytes, unsized += s.unsized_communication_ops;
    out += fmt::format("  bytes recorded: p2p {:.4g} MB, collectives {:.4g} MB{}\n", p2p / 1e6, coll / 1e6,
                       unsized ? fmt::format(" ({} communication ops without a recorded size)", unsized) : std::string());
    if (!t.unclassified.empty()) {
      std::vector<std::pair<std::string, std::pair<std::int64_t, double>>> u(t.unclassified.begin(), t.unclassified.end());
      std::sort(u.begin(), u.end(), [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
      const double wall = steps_wall_us(t);
      double unclassified_us = 0;
      for (const auto& e : u) unclassified_us += e.second.second;
      out += fmt::format("  other: {} kernel names no rule classes, {} of the steps' GPU time; by time:\n", u.size(),
                         share_text(unclassified_us, wall));
      for (std::size_t i = 0; i < std::min(top, u.size()); ++i)
        out += fmt::format("    {:>9.3f} ms {:>6} {:>6}x  {}\n", u[i].second.second * kMs, share_text(u[i].second.second, wall),
                           u[i].second.first,
                           terminal_text(u[i].first.size() > 110 ? u[i].first.substr(0, 107) + "..." : u[i].first, false));
      if (u.size() > top) out += fmt::format("    ... {} more (--top N, or --format json for all)\n", u.size() - top);
      out += "  a kernel of yours among them (attention, communication, GEMM)? copy configs/trace/kernel_classes.json, add a "
             "rule with its name, pass --classes FILE (docs/traces.md: your own kernel names)\n";
    }
    out += "\n";
  }
  out +=
      "wall: the GPU's step (its ProfilerStep range, else first op to last); classes: summed op time "
      "(streams overlap, so they can exceed wall); exposed: communication time no compute op on another "
      "stream overlaps; idle: wall minus the time any op ran. Kernels belong to the step that launched them.\n";
  return out;
}

std::string csv(const std::vector<TraceSummary>& traces) {
  std::string out = "file,rank,world_size,step,device,wall_ms";
  for (const auto n : kOpClassNames) out += fmt::format(",{}_ms", n);
  for (const auto n : kOpClassNames) out += fmt::format(",{}_ops", n);
  out += ",communication_ms,exposed_communication_ms,busy_ms,idle_ms,p2p_bytes,collective_bytes,unsized_communication_ops\n";
  for (const auto& t : traces)
    for (const auto& s : t.steps) {
      out += fmt::format("{},{},{},{},{},{:.6f}", csv_escape(t.file), t.rank, t.world_size, s.step, s.device, s.wall_us * kMs);
      for (const double v : s.class_us) out += fmt::format(",{:.6f}", v * kMs);
      for (const auto n : s.class_ops) out += fmt::format(",{}", n);
      out += fmt::format(",{:.6f},{:.6f},{:.6f},{:.6f},{:.0f},{:.0f},{}\n", s.communication_us * kMs,
                         s.exposed_communication_us * kMs, s.busy_us * kMs, s.idle_us * kMs, s.p2p_bytes,
                         s.collective_bytes, s.unsized_communication_ops);
    }
  return out;
}

std::string json_text(const std::vector<TraceSummary>& traces) {
  nlohmann::json doc = nlohmann::json::array();
  for (const auto& t : traces) {
    nlohmann::json j{{"file", t.file},
                     {"rank", t.rank},
                     {"world_size", t.world_size},
                     {"device_name", t.device_name},
                     {"date", t.date},
                     {"ops", t.ops},
                     {"ops_outside_steps", t.ops_outside_steps},
                     {"outside_steps_ms", t.outside_steps_us * kMs}};
    j["steps"] = nlohmann::json::array();
    for (const auto& s : t.steps) {
      nlohmann::json js{{"step", s.step},
                        {"device", s.device},
                        {"wall_ms", s.wall_us * kMs},
                        {"busy_ms", s.busy_us * kMs},
                        {"idle_ms", s.idle_us * kMs},
                        {"communication_ms", s.communication_us * kMs},
                        {"exposed_communication_ms", s.exposed_communication_us * kMs},
                        {"p2p_bytes", s.p2p_bytes},
                        {"collective_bytes", s.collective_bytes},
                        {"unsized_communication_ops", s.unsized_communication_ops}};
      for (std::size_t c = 0; c < kOpClasses; ++c) {
        js["classes"][std::string(kOpClassNames[c])] = {{"ms", s.class_us[c] * kMs}, {"ops", s.class_ops[c]}};
      }
      j["steps"].push_back(std::move(js));
    }
    j["unclassified"] = nlohmann::json::array();
    const double wall = steps_wall_us(t);
    for (const auto& [name, v] : t.unclassified)
      j["unclassified"].push_back({{"name", name}, {"ops", v.first}, {"ms", v.second * kMs}, {"share_of_steps", share_of(v.second, wall)}});
    doc.push_back(std::move(j));
  }
  // Kernel names are C++ signatures that may hold any byte: invalid UTF-8 is replaced, never a
  // throw mid-output, and everything outside ASCII is written as \uXXXX, so no control character
  // or escape sequence of a name reaches a terminal that shows the JSON.
  return doc.dump(2, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
}

int trace_summarize(int argc, char** argv) {
  cxxopts::Options o("ringsim trace summarize",
                     "Per step and rank: attention, communication, GEMM, other, exposed communication and idle time "
                     "from PyTorch profiler traces (.json or .json.gz) or Nsight Systems reports exported as SQLite "
                     "(nsys export --type sqlite), one file per rank; the format is told by the file's first bytes");
  o.positional_help("TRACE...");
  o.add_options()("traces", "trace files", cxxopts::value<std::vector<std::string>>()->default_value({}))
                 ("classes", "kernel class rules (default: configs/trace/kernel_classes.json)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("format", "table|csv|json", cxxopts::value<std::string>()->default_value("table"))
                 ("output", "write here instead of standard output (complete or not at all)",
                  cxxopts::value<std::string>()->default_value("-"))
                 ("top", "unclassified kernel names listed per trace in the table", cxxopts::value<std::string>()->default_value("10"))
                 ("step-regex", "Nsight Systems exports: the NVTX range text that marks a step, its first group the step "
                  "number (searched anywhere in the text; PyTorch traces keep their ProfilerStep#N events)",
                  cxxopts::value<std::string>()->default_value(calibration::kDefaultStepRegex))
                 ("h,help", "show help");
  o.parse_positional({"traces"});
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto format = one_of(r, "format", {"table", "csv", "json"});
  const auto files = r["traces"].as<std::vector<std::string>>();
  if (files.empty())
    throw models::InputError({}, 0, "traces",
                             "give one or more trace files (PyTorch profiler JSON, .json.gz, or nsys export --type sqlite)");
  const auto step_regex = r["step-regex"].as<std::string>();
  calibration::check_step_regex(step_regex);
  const auto top_text = r["top"].as<std::string>();
  const std::int64_t top = models::parse_int_in(top_text, "top", 0, 100000);
  std::string classes_path = r["classes"].as<std::string>();
  if (classes_path.empty()) classes_path = calibration::KernelClasses::default_path(models::Catalog::default_root());
  const auto classes = calibration::KernelClasses::load(classes_path);
  std::vector<TraceSummary> out;
  for (const auto& f : files) {
    // A trace of a large job takes a while to read: the bytes read so far, on a terminal only.
    ProgressBar progress("MB", "ringsim trace: reading " + terminal_text(f, false));
    const auto trace = calibration::read_trace(
        f, [&](std::int64_t read, std::int64_t total) { progress.update_bytes(read, total); }, step_regex);
    progress.finish();
    out.push_back(calibration::summarize(trace, classes));
  }
  const std::string text = format == "json" ? json_text(out) : format == "csv" ? csv(out) : table(out, static_cast<std::size_t>(top));
  io::write_output(r["output"].as<std::string>(), text);
  return 0;
}

// Traces of a ring run written from the model with planted parameters: what the trace commands
// read, to try calibrate --from-trace and check --trace without a GPU (calibration/trace/synthetic.hpp).
int trace_synthesize(int argc, char** argv) {
  cxxopts::Options o("ringsim trace synthesize",
                     "Write the PyTorch-profiler traces (one per rank) of a ring run as the model times it, with planted "
                     "kernel efficiencies and link: the input calibrate --from-trace and check --trace expect");
  add_scenario_options(o, "contiguous");
  o.add_options()("out-dir", "folder for rank0.json ... (created; existing files are replaced)", cxxopts::value<std::string>()->default_value(""))
                 ("steps", "profiled steps", cxxopts::value<std::string>()->default_value("2"))
                 ("efficiency", "planted forward efficiency (default: the profile's)", cxxopts::value<std::string>()->default_value(""))
                 ("bwd-efficiency", "planted backward efficiency (default: the profile's)", cxxopts::value<std::string>()->default_value(""))
                 ("link-gbps", "planted link bandwidth, GB/s per direction", cxxopts::value<std::string>()->default_value("100"))
                 ("link-latency-us", "planted per-message latency, microseconds", cxxopts::value<std::string>()->default_value("20"))
                 ("h,help", "show help");
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto dir = r["out-dir"].as<std::string>();
  if (dir.empty()) throw models::InputError({}, 0, "out-dir", "give the folder to write the traces into");
  // A file at the folder's name is refused before the run is computed (and again when written).
  check_output_folder(dir, "out-dir");
  const models::Catalog catalog;
  auto args = parse_scenario_args(r);
  require_one_strategy(args, "trace synthesize");
  if (args.layouts.size() != 1) throw models::InputError({}, 0, "layout", "give exactly one --layout");
  auto s = models::resolve(expand_runs(args, catalog).front(), catalog);
  const auto fraction = [&](const char* name) -> std::optional<double> {
    const auto text = r[name].as<std::string>();
    if (text.empty()) return std::nullopt;
    const double v = models::parse_double(text, name);
    if (!(v > 0 && v <= 1)) throw models::InputError({}, 0, name, "expected an efficiency in (0, 1]");
    return v;
  };
  if (const auto e = fraction("efficiency")) s.profile.attention_efficiency = *e;
  if (const auto e = fraction("bwd-efficiency")) s.profile.attention_bwd_efficiency = *e;
  s.rebuild_cost();
  const double gbps = models::parse_double(r["link-gbps"].as<std::string>(), "link-gbps");
  const double lat = models::parse_double(r["link-latency-us"].as<std::string>(), "link-latency-us");
  if (!(gbps > 0 && gbps < 1e5)) throw models::InputError({}, 0, "link-gbps", "expected 0 < GB/s < 1e5");
  if (!(lat >= 0 && lat < 1e6)) throw models::InputError({}, 0, "link-latency-us", "expected 0 <= microseconds < 1e6");
  const int steps = static_cast<int>(models::parse_int_in(r["steps"].as<std::string>(), "steps", 1, 1000));
  // The rest of the step too (projections, MLP), so `check --trace` sees a whole step.
  const auto run = calibration::synthetic_ring_run(s, {lat * 1e-6, gbps * 1e9}, steps, models::step_rest(s).other_compute_s);
  // The rank files appear together or not at all: a rank file that cannot be written (a full
  // disk, a folder under its name) leaves every old one as it was, and no new folder behind.
  const auto created = make_output_folder(dir, "out-dir");
  try {
    io::OutputSet set;
    for (std::size_t k = 0; k < run.traces.size(); ++k)
      set.stage((std::filesystem::path(dir) / fmt::format("rank{}.json", k)).string(), run.traces[k]);
    set.commit();
  } catch (...) {
    remove_created_folders(dir, created);
    throw;
  }
  const double bwd = s.profile.attention_bwd_efficiency > 0 ? s.profile.attention_bwd_efficiency : s.profile.attention_efficiency;
  fmt::print("wrote {} traces to {}: {} steps of {} {} {} on {}, {}, mesh {}x{}, {} tokens\n", run.traces.size(), dir, steps,
             s.impl.name, s.strategy.spec, s.spec.layout.text(), s.hardware.name, s.model.name, s.spec.mp, s.spec.sp, s.spec.n_seq);
  fmt::print("planted: attention_efficiency {:.4g}, attention_bwd_efficiency {:.4g}, link {:.4g} GB/s and {:.4g} us per message\n",
             s.profile.attention_efficiency, bwd, gbps, lat);
  for (std::size_t k = 0; k < run.traces.size(); ++k)
    fmt::print("  rank {}: attention {:.3f} ms, exposed communication {:.3f} ms per step\n", k,
               run.attention_per_step[k] * 1e3, run.exposed_per_step[k] * 1e3);
  return 0;
}

}  // namespace

int run_trace(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "summarize") == 0) return trace_summarize(argc - 1, argv + 1);
  if (argc >= 2 && std::strcmp(argv[1], "synthesize") == 0) return trace_synthesize(argc - 1, argv + 1);
  if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    fmt::print("usage: ringsim trace summarize TRACE... [options]   where each step of a traced run went\n"
               "       ringsim trace synthesize --out-dir DIR [scenario options]   traces of a ring run from the model\n"
               "(each with --help; calibrate --from-trace and check --trace read the same traces)\n");
    return 0;
  }
  throw models::InputError({}, 0, "subcommand",
                           fmt::format("expected 'summarize' or 'synthesize', got '{}'", argc >= 2 ? argv[1] : ""));
}

}  // namespace ringsim::cli
