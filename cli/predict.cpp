// `ringsim predict`: its flags, and one scenario (several layouts side by side: table, json or
// csv) or a batch from a CSV. Rows and their intervals: predict_rows, predict_intervals; the
// views: predict_table, predict_json_csv; the batch: predict_batch.
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "cli/predict_batch.hpp"
#include "cli/predict_prefill.hpp"
#include "cli/predict_intervals.hpp"
#include "cli/predict_json_csv.hpp"
#include "cli/memory_flags.hpp"
#include "cli/pipeline_flags.hpp"
#include "cli/predict_rows.hpp"
#include "cli/predict_table.hpp"
#include "cli/scenario_options.hpp"
#include "io/output_file.hpp"
#include "models/analytic/analytic.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "planning/grid.hpp"
#include "planning/predict_runs.hpp"

namespace ringsim::cli {

using models::InputError;

int run_predict(int argc, char** argv) {
  cxxopts::Options o("ringsim predict", "Prediction of a training step for ring, striped and other layouts");
  add_scenario_options(o, planning::kDefaultPredictLayouts);
  add_memory_flags(o);
  add_pipeline_flags(o);
  o.add_options()("scenarios", "CSV of scenarios (columns hardware,model,mp,sp,n_seq; optional tile_q,tile_k,layout,mask,profile,batch,impl,cp,docs)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("engine", "analytic (lock-step closed form) | des (discrete-event simulation, ringsim simulate)",
                  cxxopts::value<std::string>()->default_value("analytic"))
                 ("topology", "node:G | nodes:NxG | torus:AxB[xC] (default: the hardware's nodes), as plan and sweep take it",
                  cxxopts::value<std::string>()->default_value(""))
                 ("dp", "data-parallel replicas of the mesh (default 1): memory, gradient synchronisation and tokens/s as plan counts them",
                  cxxopts::value<std::string>()->default_value("1"))
                 ("zero", "ZeRO stage of the model states, sharded over dp x sp: 0, 1, 2 or 3 (default 3)",
                  cxxopts::value<std::string>()->default_value("3"))
                 ("recompute", "none | selective | full | attention (default: the profile's full recomputation where its runs used it, else selective)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("compare-mask", "also predict each layout with this mask (e.g. causal) and print attention forward, forward+backward and the speedup over it",
                  cxxopts::value<std::string>()->default_value(""))
                 ("phase", "train (a training step) | prefill (a context-parallel prefill of --seq new tokens: pass-KV and pass-Q) | "
                           "decode (one token per sequence over caches sharded on the ring); docs/inference.md",
                  cxxopts::value<std::string>()->default_value("train"))
                 ("cached-tokens", "--phase prefill: tokens already in the KV cache that the new ones attend to; --phase decode: "
                                   "tokens in each sequence's cache (0, 131072, 128k or 1M)",
                  cxxopts::value<std::string>()->default_value("0"))
                 ("weights", "--phase prefill|decode: bf16 | fp8-ffn (the feed-forward matrices row-wise in FP8 as Llama 3's FP8 "
                             "inference: half their bytes, FP8 GEMMs; docs/inference.md)",
                  cxxopts::value<std::string>()->default_value("bf16"))
                 ("kv-cache", "--phase prefill|decode: the K/V cache in bf16 | fp8 (one byte per element)",
                  cxxopts::value<std::string>()->default_value("bf16"))
                 ("memory-breakdown", "every part of the memory per device with where its formula comes from: the "
                                      "first row's under the table, every row's in JSON (docs/memory.md)")
                 ("format", "table|csv|json", cxxopts::value<std::string>()->default_value("table"))
                 ("o,output", "write to FILE (atomically) instead of stdout", cxxopts::value<std::string>()->default_value("-"))
                 ("h,help", "show help");
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto format = one_of(r, "format", {"table", "csv", "json"});
  const Engine engine = one_of(r, "engine", {"analytic", "des"}) == "des" ? Engine::Des : Engine::Analytic;
  const models::Catalog catalog;
  // Opened before the work (a simulated batch may take long): an unusable -o fails at once.
  io::Output output(r["output"].as<std::string>());
  const auto finish = [&](const std::string& text) {
    output.write(text);
    output.commit();
    return 0;
  };
  if (const auto batch = r["scenarios"].as<std::string>(); !batch.empty())
    return finish(run_batch(batch, format, catalog, r, engine));
  if (const auto phase = one_of(r, "phase", {"train", "prefill", "decode"}); phase != "train") {
    if (format == "csv") throw InputError({}, 0, "format", "--phase " + phase + " prints a table or JSON");
    // What only a training step has, or what inference decides itself: refused rather than ignored.
    for (const char* flag : {"pp", "pp-schedule", "micro-batches", "global-batch", "zero", "recompute", "precision",
                             "no-sequence-parallel", "offload-optimizer", "compare-mask", "engine", "memory-breakdown"})
      if (r.count(flag))
        throw InputError({}, 0, flag,
                         std::string("--") + flag + " is for a training step, not --phase " + phase +
                             (std::string_view(flag) == "precision" ? " (inference: --weights and --kv-cache)" : "") +
                             (std::string_view(flag) == "engine" ? " (a prefill's simulation: ringsim simulate --phase prefill)" : ""));
    if (r.count("dp"))
      throw InputError({}, 0, "dp",
                       "--dp: replicas serve other requests, so the time to first token or per output token is one "
                       "replica's; sweep and plan count the replicas' tokens/s (dp x one's)");
    if (r.count("tile")) throw InputError({}, 0, "tile", "--phase " + phase + " runs the kernel's own tiles: no --tile");
    return finish(phase == "prefill" ? predict_prefill_text(r, catalog, format) : predict_decode_text(r, catalog, format));
  }
  if (r.count("cached-tokens")) throw InputError({}, 0, "cached-tokens", "--cached-tokens is for --phase prefill or decode");
  if (r.count("weights")) throw InputError({}, 0, "weights", "--weights is for --phase prefill or decode (training: --precision)");
  if (r.count("kv-cache")) throw InputError({}, 0, "kv-cache", "--kv-cache is for --phase prefill or decode");
  auto args = parse_scenario_args(r);
  Training training;
  training.dp = models::parse_positive_int(r["dp"].as<std::string>(), "dp");
  training.zero = models::parse_sharding(r["zero"].as<std::string>());
  if (const auto rc = r["recompute"].as<std::string>(); !rc.empty()) training.recompute = models::parse_recompute(rc);
  training.memory = memory_settings_from(r);
  training.pipeline = pipeline_from(r, training.dp, args.base.batch);
  std::optional<models::MaskSpec> compare;
  if (const auto m = r["compare-mask"].as<std::string>(); !m.empty()) {
    try {
      compare = models::MaskSpec::parse(m);
    } catch (const InputError& e) {
      throw e.with_field("compare-mask");
    }
  }
  std::vector<LayoutResult> results;
  // Every row resolves before any is predicted. A comparison (several strategies or layouts)
  // shows a row that cannot run here (a Ulysses degree the KV heads do not divide, zigzag with an
  // odd block) as not runnable, with its reason, and predicts the others; one row, or a
  // comparison none of whose rows runs, is the (first) error, exit 2.
  std::vector<RefusedRun> refused;
  args.precision = std::string(models::to_string(training.memory.precision));  // a library that trains in it
  const auto runs = expand_runs(args, catalog, &refused);
  const bool comparison = runs.size() + refused.size() > 1;
  if (!comparison && !refused.empty()) throw refused.front().error;
  for (const auto& spec : runs) {
    try {
      results.push_back(LayoutResult{spec.layout.text(), models::resolve(spec, catalog)});
    } catch (const InputError& e) {
      if (!comparison) throw;
      refused.push_back({spec, e});
    }
  }
  if (results.empty()) throw refused.front().error;
  std::vector<NotRunnable> not_runnable;
  for (const auto& x : refused) not_runnable.push_back(not_runnable_row(x));
  const auto topology = r["topology"].as<std::string>();
  const bool breakdown = r.count("memory-breakdown") > 0;
  if (breakdown && format == "csv")
    throw InputError({}, 0, "memory-breakdown", "the memory breakdown prints under a table or in JSON (--format table|json)");
  for (auto& row : results) {
    planning::apply_topology(row.scenario, topology);
    prepare_training(row, training);
    predict_row(row, engine, topology);
    apply_training(row, training);
    if (breakdown)
      row.memory_parts = models::memory_breakdown(row.scenario, training.memory_options(row.scenario.profile)).parts;
  }
  with_speedups(results);
  // TMS compares ring with striped whatever layouts were asked for.
  const double tms = models::theoretical_max_speedup(results.front().scenario);
  std::string out;
  if (compare) {
    require_one_strategy(args, "--compare-mask");
    if (format != "table") throw InputError({}, 0, "compare-mask", "--compare-mask prints a table only (use --format table)");
    print_table(results, tms, engine, out, training);
    print_not_runnable(not_runnable, out);
    out += "\n";
    print_comparison(results, results.front().scenario.spec, *compare, catalog, engine, out);
    return finish(out);
  }
  if (format == "table") {
    print_table(results, tms, engine, out, training, !args.impls.empty());
    print_not_runnable(not_runnable, out);
    if (breakdown) print_memory_breakdown(results, out);
  } else if (format == "json") {
    out = results_json(results, tms, engine, not_runnable);
  } else {
    out = results_csv(results, tms, engine, not_runnable);
  }
  return finish(out);
}

}  // namespace ringsim::cli
