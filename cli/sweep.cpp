// `ringsim sweep`: a grid of scenarios from a sweep file and/or flags, on every core, streamed
// to CSV in the sweep's order (resumable, shardable); `ringsim merge`: shards -> one file.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/memory_flags.hpp"
#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/long_run.hpp"
#include "cli/progress.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"
#include "models/io/parse.hpp"
#include "planning/sweep.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

// Flag -> sweep-file field: a flag's comma-separated values replace that axis of the file.
struct AxisFlag {
  const char* flag;
  const char* field;
  const char* help;
};
constexpr AxisFlag kAxisFlags[] = {
    {"phase", "phase", "train | prefill (n_seq new tokens over --cached-tokens: TTFT, pass-KV and pass-Q) | decode "
                       "(one step over caches of --cached-tokens: TPOT); docs/inference.md"},
    {"hardware", "hardware", "hardware names or JSON files"},
    {"model", "model", "model names, attn:HQ:HKV:D or JSON files"},
    {"impl", "impl", "implementations (default: the catalog's choice per point)"},
    {"cp", "cp", "context-parallel strategies"},
    {"mesh", "mesh", "MPxSP meshes (tensor-parallel x ring size)"},
    {"mp", "mp", "tensor-parallel degrees (crossed with --sp; instead of --mesh)"},
    {"sp", "sp", "ring sizes (crossed with --mp)"},
    {"dp", "dp", "data-parallel replicas"},
    {"pp", "pp", "pipeline stages (docs/pipeline.md)"},
    {"pp-schedule", "pp_schedule", "1f1b | interleaved:V"},
    {"micro-batches", "micro_batches", "micro-batches per replica and step, each --batch sequences"},
    {"seq", "n_seq", "sequence lengths n_seq (prefill: the new tokens)"},
    {"cached-tokens", "cached_tokens", "tokens in the KV cache (prefill: attended by the new ones; decode: each cache's context)"},
    {"batch", "batch", "sequences per step"},
    {"layout", "layout", "layouts"},
    {"mask", "mask", "masks"},
    {"tile", "tile", "QxK tiles or default"},
    {"topology", "topology", "node:G | nodes:NxG | torus:AxB[xC] | default"},
    {"zero", "zero", "ZeRO stages 0-3 (3 = FSDP), sharded over dp x sp"},
    {"recompute", "recompute", "none | selective | full | attention | profile"},
};

}  // namespace

planning::SweepGrid sweep_grid_from(const std::string& file, const cxxopts::ParseResult& r) {
  nlohmann::json j = nlohmann::json::object();
  if (!file.empty()) j = models::read_json_file(file);
  if (!j.is_object()) throw InputError(file, 1, "sweep", "expected a JSON object of axes");
  for (const auto& a : kAxisFlags) {
    if (!r.count(a.flag)) continue;
    nlohmann::json values = nlohmann::json::array();
    // Counts become JSON integers here (the flag named in an error): the sweep file takes only
    // integers for them, so a file's "n_seq": ["8192"] is refused rather than read as a number.
    const std::string field = a.field;
    const bool count = field == "n_seq" || field == "batch" || field == "dp" || field == "mp" || field == "sp" ||
                       field == "pp" || field == "micro_batches";
    for (const auto& v : models::split(r[a.flag].as<std::string>(), ',')) {
      const std::string value(models::trim(v));
      if (field == "n_seq") values.push_back(models::parse_token_count(value, a.flag));
      else if (count) values.push_back(models::parse_positive_int(value, a.flag));
      else if (field == "cached_tokens") values.push_back(models::parse_int_in(value, a.flag, 0, std::int64_t{1} << 40));
      else values.push_back(value);
    }
    j[a.field] = values;
    // --mesh replaces mp/sp from the file and the other way round.
    if (field == "mesh") j.erase("mp"), j.erase("sp");
    if (field == "mp" || field == "sp") j.erase("mesh");
  }
  if (r.count("profile")) j["profile"] = r["profile"].as<std::string>();
  if (r.count("kv-buffers")) j["kv_buffers"] = models::parse_positive_int(r["kv-buffers"].as<std::string>(), "kv-buffers");
  if (r.count("global-batch")) {
    j["global_batch"] = models::parse_positive_int(r["global-batch"].as<std::string>(), "global-batch");
    if (r.count("micro-batches")) throw InputError({}, 0, "global-batch", "give --micro-batches or --global-batch, not both");
    j.erase("micro_batches");
  }
  if (r.count("engine")) j["engine"] = r["engine"].as<std::string>();
  if (r.count("no-intervals")) j["intervals"] = false;
  if (r.count("weights")) j["weights"] = r["weights"].as<std::string>();
  if (r.count("kv-cache")) j["kv_cache"] = r["kv-cache"].as<std::string>();
  auto grid = planning::SweepGrid::from_json(j, file.empty() ? "command line" : file);
  grid.memory = memory_settings_from(r, grid.memory);
  return grid;
}

void add_sweep_axis_options(cxxopts::Options& o) {
  for (const auto& a : kAxisFlags)
    o.add_options("axes")(a.flag, std::string(a.help) + " (comma-separated)", cxxopts::value<std::string>());
  o.add_options("axes")("profile", "one profile for every point (default: each (hardware, implementation)'s own)",
                        cxxopts::value<std::string>())
                       ("global-batch", "sequences per step over all replicas: each point runs global-batch / (dp x batch) "
                                        "micro-batches (instead of --micro-batches)",
                        cxxopts::value<std::string>())
                       ("kv-buffers", "K/V blocks held at once (memory; the simulator's buffers)", cxxopts::value<std::string>())
                       ("engine", "analytic | des (discrete-event simulation per point)", cxxopts::value<std::string>())
                       ("weights", "prefill and decode points: bf16 | fp8-ffn (the feed-forward matrices row-wise in FP8)",
                        cxxopts::value<std::string>())
                       ("kv-cache", "prefill and decode points: the K/V cache in bf16 | fp8", cxxopts::value<std::string>())
                       ("no-intervals", "leave step_s_lo/hi empty: skips the 2 predictions per fitted parameter of "
                                        "each point whose profile is fitted");
  add_memory_flags(o);
}

int run_sweep(int argc, char** argv) {
  cxxopts::Options o("ringsim sweep",
                     "Every combination of the axes of a sweep file (JSON) and/or flags, on every core, streamed to CSV in "
                     "the sweep's order. The output file is written in place (resumable), not atomically.");
  o.positional_help("[SWEEP.json]");
  add_sweep_axis_options(o);
  o.add_options()("file", "sweep file (JSON): axes as values or lists", cxxopts::value<std::string>()->default_value(""))
                 ("o,output", "CSV file (default: stdout)", cxxopts::value<std::string>()->default_value("-"))
                 ("resume", "continue an interrupted sweep's file: keep its complete rows, compute the rest")
                 ("shard", "K/N: only the points i with i % N == K-1 (join with ringsim merge)",
                  cxxopts::value<std::string>()->default_value("1/1"))
                 ("threads", "worker threads (default: every core)", cxxopts::value<std::string>()->default_value("0"))
                 ("print-grid", "print the sweep's grid as a sweep file (JSON) and its size, then stop")
                 ("max-rows", "refuse to write more rows than this (one per point of the shard)",
                  cxxopts::value<std::string>()->default_value(fmt::format("{:g}", kDefaultMaxRows)))
                 ("h,help", "show help");
  o.parse_positional({"file"});
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  const auto file = r["file"].as<std::string>();
  const auto grid = sweep_grid_from(file, r);
  const models::Catalog catalog;
  grid.validate(catalog, file.empty() ? "command line" : file);
  if (r.count("print-grid")) {
    std::printf("%s\n", grid.to_json().dump(2).c_str());
    std::fprintf(stderr, "%lld points\n", static_cast<long long>(grid.size()));
    return 0;
  }
  planning::SweepOptions opt;
  opt.shard = planning::Shard::parse(r["shard"].as<std::string>());
  opt.threads = parse_threads(r["threads"].as<std::string>());
  const double max_rows = parse_limit(r["max-rows"].as<std::string>(), "max-rows");
  // Rows: one per point of the shard (those resumed included), refused or announced up front.
  announce_rows("ringsim sweep", static_cast<double>(opt.shard.points(grid.size())), 400, max_rows);
  ProgressBar bar("rows");
  opt.progress = [&](const planning::SweepProgress& p) { bar.update(p.done, p.total, p.done_this_run, p.elapsed_s); };
  const auto sum = planning::run_sweep_to_file(grid, catalog, r["output"].as<std::string>(), r.count("resume") > 0, opt);
  bar.finish();
  if (bar.active())
    std::fprintf(stderr, "%lld rows (%lld resumed, %lld written, %lld skipped as incompatible) of %lld points\n",
                 static_cast<long long>(sum.resumed + sum.written), static_cast<long long>(sum.resumed),
                 static_cast<long long>(sum.written), static_cast<long long>(sum.skipped),
                 static_cast<long long>(sum.points));
  return 0;
}

int run_merge(int argc, char** argv) {
  cxxopts::Options o("ringsim merge", "Join the shards of a sweep (ringsim sweep --shard K/N) into the unsharded output");
  o.positional_help("SHARD.csv...");
  o.add_options()("shards", "shard files, any order", cxxopts::value<std::vector<std::string>>())
                 ("o,output", "write to FILE (atomically) instead of stdout", cxxopts::value<std::string>()->default_value("-"))
                 ("h,help", "show help");
  o.parse_positional({"shards"});
  const auto r = parse_or_throw(o, argc, argv);
  if (help_requested(o, r)) return 0;
  if (!r.count("shards")) throw InputError({}, 0, "shards", "give the shard files to join");
  write_output(r["output"].as<std::string>(), planning::merge_shards(r["shards"].as<std::vector<std::string>>()));
  return 0;
}

}  // namespace ringsim::cli
