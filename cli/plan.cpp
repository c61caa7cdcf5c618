// `ringsim plan`: the best configurations for a goal (fewest devices for a throughput, most
// throughput for a budget, longest context on a budget), ranked, each with why.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <cstdio>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/memory_flags.hpp"
#include "cli/commands.hpp"
#include "cli/long_run.hpp"
#include "cli/progress.hpp"
#include "cli/scenario_options.hpp"
#include "cli/text_table.hpp"
#include "io/output_file.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"
#include "models/io/parse.hpp"
#include "planning/emit.hpp"
#include "planning/plan.hpp"
#include "planning/predict_runs.hpp"
#include "planning/prefilter.hpp"
#include "planning/sweep.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

// "dp x mp x sp" of a plan row, "ppP DPxMPxSP" when it runs pipeline stages (docs/pipeline.md).
std::string mesh_text(const planning::SweepResult& x) {
  const auto& s = x.point.spec;
  const std::string mesh = fmt::format("{}x{}x{}", x.point.dp, s.mp, s.sp);
  return x.point.pipeline.pipelined() ? fmt::format("pp{} {}", x.point.pipeline.stages, mesh) : mesh;
}

constexpr const char* kIntervals =
    "+-: half width of the 90 % prediction interval of the step (the profile's fitted uncertainty; a derived profile's is "
    "the error measured when one fitted GPU's parameters predict another's; - for spec-default profiles and profiles "
    "derived from a fit that measured no such error)";

// Flags over the plan file's fields (same names, '-' for '_').
nlohmann::json request_json(const std::string& file, const cxxopts::ParseResult& r) {
  nlohmann::json j = file.empty() ? nlohmann::json::object() : models::read_json_file(file);
  if (!j.is_object()) throw InputError(file, 1, "plan", "expected a JSON object");
  for (const char* k : {"hardware", "model", "goal", "mask", "engine", "phase"})
    if (r.count(k)) j[k] = r[k].as<std::string>();
  if (r.count("weights")) j["weights"] = r["weights"].as<std::string>();
  if (r.count("kv-cache")) j["kv_cache"] = r["kv-cache"].as<std::string>();
  const std::pair<const char*, const char*> counts[] = {
      {"devices", "devices"}, {"batch", "batch"}, {"top", "top"}, {"global-batch", "global_batch"}};
  for (const auto& [flag, field] : counts)
    if (r.count(flag)) j[field] = models::parse_positive_int(r[flag].as<std::string>(), flag);
  // Token counts as the outputs print them (128k, 1M).
  for (const auto& [flag, field] : {std::pair{"seq", "n_seq"}, std::pair{"max-context", "max_context"}})
    if (r.count(flag)) j[field] = models::parse_token_count(r[flag].as<std::string>(), flag);
  if (r.count("include-research")) j["include_research"] = true;
  if (r.count("per-impl")) j["per_implementation"] = true;
  if (r.count("no-fold")) j["fold"] = false;
  for (const char* k : {"mp", "pp"}) {
    if (!r.count(k)) continue;
    j[k] = nlohmann::json::array();
    for (const auto& v : models::split(r[k].as<std::string>(), ',')) j[k].push_back(models::parse_positive_int(models::trim(v), k));
  }
  if (r.count("cached-tokens"))
    j["cached_tokens"] = models::parse_token_count_or_zero(r["cached-tokens"].as<std::string>(), "cached-tokens", std::int64_t{1} << 40);
  // Durations read here, so a bad one names the flag; the file's field takes the seconds.
  for (const char* k : {"ttft", "tpot"})
    if (r.count(k)) j[k] = models::parse_duration_s(r[k].as<std::string>(), k);
  if (r.count("target-tokens-per-s"))
    j["target_tokens_per_s"] = models::parse_metric_rate(r["target-tokens-per-s"].as<std::string>(), "target-tokens-per-s");
  for (const auto& [flag, field] : {std::pair{"impl", "impl"}, std::pair{"cp", "cp"}, std::pair{"layout", "layout"},
                                    std::pair{"tile", "tile"}, std::pair{"topology", "topology"}, std::pair{"zero", "zero"},
                                    std::pair{"recompute", "recompute"}, std::pair{"pp-schedule", "pp_schedule"}}) {
    if (!r.count(flag)) continue;
    nlohmann::json values = nlohmann::json::array();
    for (const auto& v : models::split(r[flag].as<std::string>(), ',')) values.push_back(std::string(models::trim(v)));
    j[field] = values;
  }
  return j;
}

}  // namespace

int run_plan(int argc, char** argv) {
  cxxopts::Options o("ringsim plan",
                     "The best configurations for a goal: min-devices (fewest devices reaching --target-tokens-per-s), "
                     "max-throughput (most tokens/s on at most --devices), max-context (longest context on at most "
                     "--devices), searched over meshes, strategies, layouts, tiles, implementations, topologies, ZeRO "
                     "stages and recomputation");
  o.positional_help("[PLAN.json]");
  o.add_options()("file", "plan file (JSON) with the same fields; flags override it", cxxopts::value<std::string>()->default_value(""))
                 ("hardware", "hardware name or JSON file (default h100-sxm)", cxxopts::value<std::string>())
                 ("model", "model name or JSON file (default llama3-8b)", cxxopts::value<std::string>())
                 ("goal", "min-devices | max-throughput | max-context (default max-throughput)", cxxopts::value<std::string>())
                 ("seq", "target context n_seq in tokens, 131072, 128k or 1M (max-context: the shortest tried; default 128k)", cxxopts::value<std::string>())
                 ("max-context", "max-context: the longest context tried (default 16777216)", cxxopts::value<std::string>())
                 ("target-tokens-per-s", "min-devices: the throughput to reach (200000 or 200k)", cxxopts::value<std::string>())
                 ("phase", "train | prefill | decode (default train; docs/inference.md)", cxxopts::value<std::string>())
                 ("cached-tokens", "prefill: tokens already in the KV cache; decode: the tokens in each sequence's cache (0, 131072, 128k or 1M)",
                  cxxopts::value<std::string>())
                 ("weights", "prefill and decode: bf16 | fp8-ffn (the feed-forward matrices row-wise in FP8, as Llama 3's FP8 inference)",
                  cxxopts::value<std::string>())
                 ("kv-cache", "prefill and decode: the K/V cache in bf16 | fp8", cxxopts::value<std::string>())
                 ("ttft", "prefill: the time to first token to meet, e.g. 5s or 800ms (the min-devices goal)",
                  cxxopts::value<std::string>())
                 ("tpot", "decode: the time per output token to meet, e.g. 50ms (the min-devices goal)",
                  cxxopts::value<std::string>())
                 ("devices", "device budget (min-devices: the most considered; default 8)", cxxopts::value<std::string>())
                 ("batch", "sequences per step and replica (default 1)", cxxopts::value<std::string>())
                 ("per-impl", "also list the best plan of each implementation (JSON always has it)")
                 ("no-fold", "rank by the goal alone: do not fold plans whose throughput lies within the paired 90 % "
                             "interval of the fastest (docs/planning.md)")
                 ("mp", "tensor-parallel degrees to search (comma-separated; default: powers of two up to the node size "
                        "that split the heads)", cxxopts::value<std::string>())
                 ("global-batch", "sequences per step over all replicas: each plan runs global-batch / (dp x batch) "
                                  "micro-batches, and pipeline stages are searched (docs/pipeline.md)", cxxopts::value<std::string>())
                 ("pp", "pipeline stages to search (comma-separated; default with --global-batch: powers of two that "
                        "split the layers, else 1)", cxxopts::value<std::string>())
                 ("pp-schedule", "pipeline schedules to search (comma-separated: 1f1b, interleaved:V; default 1f1b)",
                  cxxopts::value<std::string>())
                 ("mask", "attention mask (default causal)", cxxopts::value<std::string>())
                 ("impl", "implementations to search (comma-separated, NAME@RELEASE for an earlier release; default: the production libraries that run on the hardware and have a profile for it)", cxxopts::value<std::string>())
                 ("include-research", "with no --impl, let research kernels (scfa, the Striped paper's JAX code) and ringsim's reference kernels compete too")
                 ("cp", "strategies to search (default: all)", cxxopts::value<std::string>())
                 ("layout", "layouts to search (default contiguous,striped,zigzag)", cxxopts::value<std::string>())
                 ("tile", "tiles to search (default: default,128x128,512x512,2048x4096)", cxxopts::value<std::string>())
                 ("topology", "topologies to search (default: the hardware's)", cxxopts::value<std::string>())
                 ("zero", "ZeRO stages to search (default 0,1,2,3)", cxxopts::value<std::string>())
                 ("recompute", "recomputation policies to search (default none,selective,full)", cxxopts::value<std::string>())
                 ("engine", "analytic | des", cxxopts::value<std::string>())
                 ("top", "plans to print (default 10)", cxxopts::value<std::string>())
                 ("threads", "worker threads (default: every core)", cxxopts::value<std::string>()->default_value("0"))
                 ("max-points", "refuse to search more configurations than this",
                  cxxopts::value<std::string>()->default_value(fmt::format("{:g}", kDefaultMaxPoints)))
                 ("emit-sweep", "also write the equivalent sweep file (JSON) here", cxxopts::value<std::string>()->default_value(""))
                 ("emit", "megatron | torchtitan | ring-flash-attn | deepspeed: print the first plan as Megatron-LM's "
                          "launch flags, torchtitan's configuration function, ring-flash-attention's call or DeepSpeed's "
                          "configuration instead of the table (docs/planning.md)",
                  cxxopts::value<std::string>())
                 ("format", "table|csv|json", cxxopts::value<std::string>()->default_value("table"))
                 ("o,output", "write to FILE (atomically) instead of stdout", cxxopts::value<std::string>()->default_value("-"))
                 ("h,help", "show help");
  add_memory_flags(o);
  o.parse_positional({"file"});
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto format = one_of(r, "format", {"table", "csv", "json"});
  // Parsed before the search: a bad stack name fails at once.
  std::optional<planning::Stack> stack;
  if (r.count("emit")) {
    stack = planning::parse_stack(r["emit"].as<std::string>());
    if (r.count("format")) throw InputError({}, 0, "emit", "--emit prints the stack's flags: give it or --format, not both");
  }
  // Opened before the search: an unusable -o fails at once, not after it.
  io::Output output(r["output"].as<std::string>());
  const auto emit_path = r["emit-sweep"].as<std::string>();
  std::unique_ptr<io::Output> emit;
  if (!emit_path.empty()) emit = std::make_unique<io::Output>(emit_path);
  const auto file = r["file"].as<std::string>();
  auto req = planning::plan_request_from_json(request_json(file, r), file.empty() ? "command line" : file);
  req.memory = memory_settings_from(r, req.memory);
  const models::Catalog catalog;
  const auto grid = planning::plan_grid(req, catalog);
  grid.validate(catalog, file.empty() ? "command line" : file);
  const double max_points = parse_limit(r["max-points"].as<std::string>(), "max-points");
  // The configurations the search would evaluate: the grid's product less what cannot run or
  // exceeds the budget (planning/prefilter.hpp), counted by blocks, not point by point. A
  // FlashAttention library's other tiles, which the search does not evaluate, still count: the
  // bound stands for the search's time whatever a point costs, and a point of a million devices
  // costs far more than one of a thousand (plan --devices 1048576 --seq 8192 has 2.2e5 own-tile
  // points and runs for minutes).
  const auto runnable = planning::runnable_points(grid, catalog, req.devices, planning::own_tile_once(req));
  const auto points = static_cast<double>(runnable.points + runnable.same_step);
  if (points > max_points)
    throw InputError({}, 0, "max-points",
                     fmt::format("the search has {:.4g} configurations, more than --max-points {:.4g}; narrow it (--impl, "
                                 "--cp, --layout, --tile, --zero, --recompute, fewer --devices) or raise --max-points",
                                 points, max_points));
  // Written with the plan, once the search finished: an interrupted or failed plan leaves no sweep
  // file behind (nor replaces an existing one).
  if (emit) emit->write(grid.to_json().dump(2) + "\n");

  planning::SweepOptions opt;
  opt.threads = parse_threads(r["threads"].as<std::string>());
  ProgressBar bar("configurations");
  opt.progress = [&](const planning::SweepProgress& p) { bar.update(p.done, p.total, p.done_this_run, p.elapsed_s); };
  const auto start = std::chrono::steady_clock::now();
  const auto found = planning::search_plans(grid, catalog, req, opt, 0, &runnable);
  bar.finish();
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto& best = found.plans;
  // Nothing could run at all: the request itself is what was refused (a token count no mesh can
  // shard, a strategy no model splits), said as the evaluator said it, not as a budget to raise.
  if (found.evaluated == 0 && found.refusal_count > 0) {
    std::string_view why = found.refusal;  // "field: message" as the evaluator writes its notes
    if (!found.refusal_field.empty() && why.starts_with(found.refusal_field + ": ")) why.remove_prefix(found.refusal_field.size() + 2);
    throw InputError({}, 0, found.refusal_field.empty() ? "plan" : found.refusal_field,
                     fmt::format("none of the {} configurations searched can run ({} of them: {})", found.searched,
                                 found.refusal_count, why));
  }
  const std::int64_t searched = found.searched, ok = found.evaluated, fits = found.fit_memory, feasible = found.feasible;
  // Timing goes to stderr (the output is the same bytes on every run), and only on a terminal, as
  // the progress bar: a script reading stderr sees one line exactly when something went wrong.
  if (isatty(fileno(stderr)) != 0)
    std::fprintf(stderr, "ringsim plan: %lld configurations evaluated in %.2f s\n", static_cast<long long>(searched),
                 took_s);

  std::string goal_text;
  switch (req.goal) {
    case planning::Goal::MinDevices:
      goal_text = req.target_latency_s > 0
                      ? fmt::format("fewest devices (at most {}) with {} at most {}", req.devices,
                                    planning::latency_name(req.phase), human_seconds(req.target_latency_s))
                      : fmt::format("fewest devices (at most {}) reaching {} tokens/s at n_seq {}", req.devices,
                                    human_count(req.target_tokens_per_s), req.n_seq);
      break;
    case planning::Goal::MaxThroughput:
      goal_text = fmt::format("most tokens/s at n_seq {} on at most {} devices", req.n_seq, req.devices);
      break;
    case planning::Goal::MaxContext:
      goal_text = fmt::format("longest context ({} to {}) on at most {} devices", req.n_seq, req.max_context, req.devices);
      break;
  }
  const bool inference = req.phase != models::RunPhase::Train;
  if (req.phase == models::RunPhase::Prefill)
    goal_text += fmt::format("; prefill of {} new tokens over {} cached, batch {}", req.n_seq, req.cached_tokens, req.batch);
  else if (req.phase == models::RunPhase::Decode)
    goal_text += fmt::format("; decode over caches of {} tokens, batch {}", req.cached_tokens, req.batch);
  // Why each smaller device count does not answer (min-devices).
  // The counts just below the answer tell most; the table lists the largest eight.
  std::string smaller;
  constexpr std::size_t kListed = 8;
  const std::size_t skip = found.smaller.size() > kListed ? found.smaller.size() - kListed : 0;
  if (skip > 0)
    smaller += fmt::format("  ({} smaller device counts fall shorter; --format json lists every one)\n", skip);
  for (const auto& x : std::span(found.smaller).subspan(skip))
    smaller += fmt::format("  {} device{} ({}dp {} x mp {} x sp {}, {}): {}\n", x.devices(), x.devices() == 1 ? "" : "s",
                           x.point.pipeline.pipelined() ? fmt::format("pp {} x ", x.point.pipeline.stages) : std::string(),
                           x.point.dp, x.point.spec.mp, x.point.spec.sp, x.impl,
                           planning::shortfall(x, req));
  if (!smaller.empty()) smaller = "\nfewer devices:\n" + smaller;
  std::string out;
  if (stack) {
    if (best.empty())
      throw InputError({}, 0, "emit", "no configuration answers the request, so there is no plan to emit (see ringsim plan's table)");
    const auto& spec = best.front().plan.point.spec;
    const auto model = spec.model_file.empty() ? catalog.model(spec.model) : models::ModelConfig::load_file(spec.model_file);
    out = planning::emit_launch(best.front().plan, req, model, *stack);
  } else if (format == "json") {
    const auto j = planning::plan_json(req, found);
    out = j.dump(2) + "\n";
  } else if (format == "csv") {
    out = planning::plan_csv(req, found);
  } else {
    out += fmt::format("ringsim plan: {} on {}: {}\n", req.model, req.hardware, goal_text);
    const std::string own_tiles =
        found.same_step > 0 ? fmt::format("; {} more at tiles their kernel does not run: a FlashAttention library picks its "
                                          "own, so they predict its own tile's step or are larger than the block",
                                          found.same_step)
                            : "";
    out += fmt::format("searched {} configurations ({} more skipped without evaluation: strategy splits, meshes and "
                       "implementations that do not go together, or over the device budget{}): {} evaluated ({} skipped as incompatible), {} fit in "
                       "memory, {} feasible\n{}\n\n",
                       searched, found.excluded, own_tiles, ok, searched - ok, fits, feasible, kIntervals);
    if (best.empty()) {
      out += "no configuration answers the request";
      if (fits == 0 && ok > 0) out += " (none fits in memory: try more devices, ZeRO-3 or full recomputation)";
      else if (req.goal == planning::Goal::MinDevices)
        out += fmt::format(" within the budget of {} devices: raise --devices", req.devices);
      out += "\n" + smaller;
    } else {
      // The strategies side by side first: the best of each family, whatever the top plans are;
      // with --per-impl the best of each implementation too.
      // "vs best" in the goal's figure: the context for max-context, tokens/s otherwise.
      const bool by_context = req.goal == planning::Goal::MaxContext;
      const auto figure = [&](const planning::SweepResult& x) {
        return by_context ? static_cast<double>(x.point.spec.n_seq) : x.tokens_per_s;
      };
      // The attention kernel each row's library calls on this hardware: strategies compared on
      // different kernels differ by kernel too, which the line under the table says.
      const auto hw = req.hardware.ends_with(".json") ? models::Hardware::load_file(req.hardware) : catalog.hardware(req.hardware);
      const auto kernel_of = [&](const planning::SweepResult& x) {
        return planning::kernel_on(catalog.implementation(x.impl), hw);
      };
      const auto best_of = [&](const char* key, const std::vector<planning::SweepResult>& rows, auto key_of) {
        TextTable b({{key}, {"devices", true}, {"dp x mp x sp", true}, {"impl"}, {"kernel"}, {"cp"}, {"layout"}, {"n_seq", true},
                     {planning::latency_name(req.phase), true}, {"+-", true}, {"tokens/s", true}, {"vs best", true},
                     {"memory", true}});
        const double top = figure(rows.front());
        for (const auto& x : rows) {
          const auto& s = x.point.spec;
          const auto& iv = x.step_interval;
          const auto label = x.deployability();
          b.add_row({key_of(x), std::to_string(x.devices()), mesh_text(x),
                     label.empty() ? x.impl : x.impl + " " + label, kernel_of(x),
                     // sp 1: no context parallelism, whatever strategy and layout the row names.
                     s.sp == 1 ? std::string("-") : s.cp.text(), s.sp == 1 ? std::string("-") : s.layout.text(),
                     std::to_string(s.n_seq), human_seconds(x.step_s),
                     iv.available ? fmt::format("{:.0f}%", 50 * (iv.hi - iv.lo) / x.step_s) : std::string("-"),
                     human_count(x.tokens_per_s),
                     &x == &rows.front() ? std::string() : fmt::format("{:+.1f}%", 100 * (figure(x) / top - 1)),
                     human_bytes(x.memory.total_bytes)});
        }
        std::vector<std::string> kernels;
        for (const auto& x : rows)
          if (const auto k = kernel_of(x); std::find(kernels.begin(), kernels.end(), k) == kernels.end()) kernels.push_back(k);
        return b.render() + (kernels.size() > 1 ? "(the rows call different attention kernels: part of each gap is the kernel's; "
                                                  "--impl compares strategies on one)\n"
                                                : std::string());
      };
      bool tables = false;
      if (found.best_per_strategy.size() > 1) {
        out += "best of each strategy:\n" +
               best_of("strategy", found.best_per_strategy, [](const planning::SweepResult& x) { return x.strategy_family(); });
        tables = true;
      }
      if (req.per_implementation && !found.best_per_implementation.empty()) {
        out += std::string(tables ? "\n" : "") + "best of each implementation:\n" +
               best_of("implementation", found.best_per_implementation,
                       [](const planning::SweepResult& x) { return x.impl; });
        tables = true;
      }
      if (tables) out += "\nranked:\n";
      // Every row names the kernel it runs (an inference row the one its phase calls).
      TextTable t({{"rank", true}, {"devices", true}, {"dp x mp x sp", true}, {"impl"}, {"kernel"}, {"cp"}, {"layout"}, {"tile", true},
                   {"topology"}, {"zero"}, {"recompute"}, {"n_seq", true}, {planning::latency_name(req.phase), true},
                   {"+-", true}, {"tokens/s", true},
                   {"MFU", true}, {"memory", true}});
      for (std::size_t i = 0; i < best.size(); ++i) {
        const auto& x = best[i].plan;
        const auto& s = x.point.spec;
        const auto& iv = x.step_interval;
        const std::string pm = iv.available ? fmt::format("{:.0f}%", 50 * (iv.hi - iv.lo) / x.step_s) : std::string("-");
        std::vector<std::string> notes = {"why: " + planning::explain(x)};
        if (!best[i].ties.empty()) notes.push_back("ties (the same step): " + planning::ties_text(best[i]));
        if (best[i].fold) notes.push_back(planning::fold_text(best[i]));
        const auto label = x.deployability();
        t.add_row({std::to_string(i + 1), std::to_string(x.devices()), mesh_text(x),
                   label.empty() ? x.impl : x.impl + " " + label,
                   x.inference && !x.inference->kernel.empty() ? x.inference->kernel : kernel_of(x),
                   s.cp.text(), s.layout.text(), fmt::format("{}x{}", x.tile_q, x.tile_k), x.topology,
                   std::string(models::to_string(x.point.zero)), std::string(models::to_string(x.recompute)),
                   std::to_string(s.n_seq), human_seconds(x.step_s), pm, human_count(x.tokens_per_s),
                   inference ? std::string("-") : fmt::format("{:.1f}%", 100 * x.prediction.mfu),
                   human_bytes(x.memory.total_bytes)},
                  notes);
      }
      out += t.render();
      out += planning::deployability_legend(best);
      out += smaller;
    }
  }
  output.write(out);
  if (emit) emit->commit();
  output.commit();
  return 0;
}

}  // namespace ringsim::cli
