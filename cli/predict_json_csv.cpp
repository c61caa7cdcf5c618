#include "cli/predict_json_csv.hpp"

#include <algorithm>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/csv.hpp"
#include "models/analytic/analytic.hpp"
#include "planning/parts_io.hpp"

namespace ringsim::cli {

namespace {

nlohmann::json json_opt(bool available, double v) { return available ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json prediction_json(const LayoutResult& r) {
  const auto& p = r.prediction;
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& rt : p.rounds_fwd)
    rounds.push_back({{"round", rt.round}, {"compute_max_s", rt.compute_max_s}, {"compute_mean_s", rt.compute_mean_s},
                      {"transfer_s", rt.transfer_s}, {"round_s", rt.round_s}});
  const double tokens = p.tokens_per_s * p.step_s;
  nlohmann::json j = {{"layout", r.layout},
          {"cp", r.scenario.strategy.spec},
          {"impl", r.scenario.impl.name},
          {"why", models::why(p, r.train.parts)},
          {"step_s", p.step_s},
          {"step_s_lo", json_opt(r.step.available, r.step.lo)},
          {"step_s_hi", json_opt(r.step.available, r.step.hi)},
          {"tokens_per_s", p.tokens_per_s},
          {"tokens_per_s_lo", json_opt(r.step.available, tokens / r.step.hi)},
          {"tokens_per_s_hi", json_opt(r.step.available, tokens / r.step.lo)},
          {"speedup_vs_first_lo", json_opt(r.speedup.available, r.speedup.lo)},
          {"speedup_vs_first_hi", json_opt(r.speedup.available, r.speedup.hi)},
          {"mfu", p.mfu},
          {"attention_fwd_s", p.attention_fwd_s},
          {"attention_fwd_s_lo", json_opt(r.attention_fwd.available, r.attention_fwd.lo)},
          {"attention_fwd_s_hi", json_opt(r.attention_fwd.available, r.attention_fwd.hi)},
          {"attention_bwd_s", p.attention_bwd_s},
          {"attention_bwd_s_lo", json_opt(r.attention_bwd.available, r.attention_bwd.lo)},
          {"attention_bwd_s_hi", json_opt(r.attention_bwd.available, r.attention_bwd.hi)},
          {"other_compute_s", p.other_compute_s},
          {"collective_s", p.collective_s},
          {"exposed_transfer_s", p.exposed_transfer_s},
          {"exposed_allgather_s", p.exposed_allgather_s},
          {"exposed_reduce_scatter_s", p.exposed_reduce_scatter_s},
          {"exposed_all_to_all_s", p.exposed_all_to_all_s},
          {"imbalance", p.imbalance},
          {"model_flops", p.model_flops},
          {"memory_bytes", p.memory_bytes},
          {"fits_memory", p.fits_memory},
          {"hide_threshold_tokens", p.hide_threshold_tokens},
          {"rounds_fwd_one_layer", rounds}};
  planning::add_parts_json(j, r.train.parts);
  if (!r.memory_parts.empty()) {
    auto& parts = j["memory_breakdown"] = nlohmann::json::array();
    for (const auto& m : r.memory_parts)
      parts.push_back({{"term", m.term}, {"part", m.name}, {"bytes", m.bytes}, {"source", m.source}});
  }
  return j;
}

}  // namespace

std::string fmt_opt(bool available, double v, const char* spec) {
  return available ? fmt::format(fmt::runtime(spec), v) : std::string();
}

std::string results_json(const std::vector<LayoutResult>& results, double tms, Engine engine,
                         const std::vector<NotRunnable>& not_runnable) {
  const auto& s0 = results.front().scenario;
  nlohmann::json j;
  j["scenario"] = {{"hardware", s0.hardware.name}, {"model", s0.model.name}, {"mp", s0.spec.mp}, {"sp", s0.spec.sp},
                   {"n_seq", s0.spec.n_seq}, {"batch", s0.spec.batch}, {"mask", s0.mask->name()},
                   {"tile_q", s0.tile.q}, {"tile_k", s0.tile.k}, {"tile_clamped", s0.tile_clamped},
                   {"block_tokens", s0.layout->block()}, {"impl", s0.impl.name}, {"cp", s0.strategy.spec},
                   {"docs", models::docs_text(s0.spec)}};
  j["profile"] = s0.profile.to_json();
  j["pred_tms"] = tms;
  j["pred_engine"] = engine_name(engine);
  j["results"] = nlohmann::json::array();
  for (const auto& x : results) j["results"].push_back(prediction_json(x));
  j["not_runnable"] = nlohmann::json::array();
  for (const auto& x : not_runnable) j["not_runnable"].push_back({{"cp", x.cp}, {"layout", x.layout}, {"reason", x.reason}});
  return j.dump(2) + "\n";
}

std::string results_csv(const std::vector<LayoutResult>& results, double tms, Engine engine,
                        const std::vector<NotRunnable>& not_runnable) {
  std::string out;
  const std::vector<std::string> header = planning::with_part_columns({
      "layout", "hardware", "model", "mp", "sp", "n_seq", "batch", "mask", "tile_q", "tile_k", "profile",
      "step_s", "step_s_lo", "step_s_hi", "tokens_per_s", "tokens_per_s_lo", "tokens_per_s_hi", "mfu",
      "attention_fwd_s", "attention_bwd_s", "other_compute_s", "collective_s", "exposed_transfer_s",
      "imbalance", "memory_bytes", "fits_memory", "pred_tms", "speedup_vs_first", "speedup_vs_first_lo",
      "speedup_vs_first_hi", "pred_engine", "impl", "cp", "docs", "exposed_allgather_s",
      "exposed_reduce_scatter_s", "exposed_all_to_all_s", "profile_calibrated", "why", "attention_fwd_s_lo",
      "attention_fwd_s_hi", "attention_bwd_s_lo", "attention_bwd_s_hi", "not_runnable"});  // then the step's parts
  out += csv_line(header);
  for (const auto& x : results) {
    const auto& s = x.scenario;
    const auto& p = x.prediction;
    std::vector<std::string> cells = {x.layout, s.hardware.name, s.model.name, std::to_string(s.spec.mp), std::to_string(s.spec.sp),
                     std::to_string(s.spec.n_seq), std::to_string(s.spec.batch), s.mask->name(),
                     std::to_string(s.tile.q), std::to_string(s.tile.k), s.profile.name,
                     fmt::format("{:.6g}", p.step_s), fmt_opt(x.step.available, x.step.lo),
                     fmt_opt(x.step.available, x.step.hi), fmt::format("{:.6g}", p.tokens_per_s),
                     fmt_opt(x.step.available, p.tokens_per_s * p.step_s / x.step.hi),
                     fmt_opt(x.step.available, p.tokens_per_s * p.step_s / x.step.lo),
                     fmt::format("{:.4f}", p.mfu), fmt::format("{:.6g}", p.attention_fwd_s),
                     fmt::format("{:.6g}", p.attention_bwd_s), fmt::format("{:.6g}", p.other_compute_s),
                     fmt::format("{:.6g}", p.collective_s), fmt::format("{:.6g}", p.exposed_transfer_s),
                     fmt::format("{:.4f}", p.imbalance), fmt::format("{:.6g}", p.memory_bytes),
                     p.fits_memory ? "true" : "false", fmt::format("{:.4f}", tms),
                     fmt::format("{:.4f}", results.front().prediction.step_s / p.step_s),
                     fmt_opt(x.speedup.available, x.speedup.lo, "{:.4f}"),
                     fmt_opt(x.speedup.available, x.speedup.hi, "{:.4f}"), engine_name(engine), s.impl.name,
                     s.strategy.spec, models::docs_text(s.spec), fmt::format("{:.6g}", p.exposed_allgather_s),
                     fmt::format("{:.6g}", p.exposed_reduce_scatter_s), fmt::format("{:.6g}", p.exposed_all_to_all_s),
                     s.profile.provenance.calibrated ? "true" : "false", models::why(p, x.train.parts),
                     fmt_opt(x.attention_fwd.available, x.attention_fwd.lo), fmt_opt(x.attention_fwd.available, x.attention_fwd.hi),
                     fmt_opt(x.attention_bwd.available, x.attention_bwd.lo), fmt_opt(x.attention_bwd.available, x.attention_bwd.hi),
                     ""};
    planning::append_part_cells(cells, x.train.parts);
    out += csv_line(cells);
  }
  for (const auto& x : not_runnable) {
    std::vector<std::string> cells(header.size());
    cells[0] = x.layout;
    cells[static_cast<std::size_t>(std::find(header.begin(), header.end(), "cp") - header.begin())] = x.cp;
    cells[static_cast<std::size_t>(std::find(header.begin(), header.end(), "not_runnable") - header.begin())] = x.reason;
    out += csv_line(cells);
  }
  return out;
}

}  // namespace ringsim::cli
