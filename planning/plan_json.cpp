// The planner's answer as JSON and CSV: one builder each for `ringsim plan --format json|csv`,
// ringsim.plan and the GUI's Plan tab.
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "models/io/csv_text.hpp"
#include "planning/evaluate.hpp"
#include "planning/plan.hpp"

namespace ringsim::planning {

nlohmann::json plan_json(const PlanRequest& r, const PlanSearch& found) {
  nlohmann::json j;
  j["goal"] = to_string(r.goal);
  j["hardware"] = r.hardware;
  j["model"] = r.model;
  j["searched"] = found.searched;
  j["excluded"] = found.excluded;
  j["same_step"] = found.same_step;
  j["evaluated"] = found.evaluated;
  j["fit_memory"] = found.fit_memory;
  j["feasible"] = found.feasible;
  // Only for inference: a training plan's JSON is as it was.
  if (r.phase != models::RunPhase::Train) {
    j["phase"] = models::to_string(r.phase);
    j["cached_tokens"] = r.cached_tokens;
    j["weights"] = std::string(models::to_string(r.formats.weights));
    j["kv_cache"] = std::string(models::to_string(r.formats.cache));
    if (r.target_latency_s > 0) j[r.phase == models::RunPhase::Prefill ? "ttft_s" : "tpot_s"] = r.target_latency_s;
    j["smaller"] = nlohmann::json::array();
    for (const auto& x : found.smaller) {
      nlohmann::json b = result_json(x);
      b["why"] = explain(x);
      b["shortfall"] = shortfall(x, r);
      j["smaller"].push_back(b);
    }
  }
  j["interval"] = "step_s_lo / step_s_hi and tokens_per_s_lo / tokens_per_s_hi: the 90 % prediction interval from the "
                  "profile's fitted uncertainty (a derived profile's: the error measured when one fitted GPU's parameters predict "
                  "another's); null for spec-default profiles and profiles derived from a fit that measured no such error";
  j["fold"] = "plans whose throughput the model cannot tell apart (the 90 % interval of the ratio to the fastest of them "
              "contains 1: paired where both run on one fitted profile) share a fold and rank by memory_spare_bytes; "
              "fold is null for a plan outside any";
  j["plans"] = nlohmann::json::array();
  for (std::size_t i = 0; i < found.plans.size(); ++i) {
    const auto& x = found.plans[i].plan;
    nlohmann::json p;
    p["rank"] = i + 1;
    p.update(result_json(x));
    p["why"] = explain(x);
    p["maturity"] = std::string(models::to_string(x.maturity));
    p["profile_origin"] = x.profile_origin;
    p["ties"] = nlohmann::json::array();
    for (const auto& t : found.plans[i].ties)
      p["ties"].push_back({{"index", t.point.index}, {"impl", t.impl}, {"layout", t.point.spec.layout.text()},
                           {"tile_q", t.tile_q}, {"tile_k", t.tile_k}, {"zero", models::to_string(t.point.zero)},
                           {"recompute", models::to_string(t.recompute)}, {"memory_bytes", t.memory.total_bytes}});
    p["memory_spare_bytes"] = x.memory.spare_bytes();
    if (const auto& f = found.plans[i].fold)
      p["fold"] = {{"first_rank", f->first_rank}, {"last_rank", f->last_rank}, {"ratio", f->ratio}, {"lo", f->lo},
                   {"hi", f->hi}, {"paired", f->paired}, {"fastest", f->fastest}};
    else
      p["fold"] = nullptr;
    j["plans"].push_back(p);
  }
  for (const auto& [key, rows] : {std::pair{"best_per_strategy", &found.best_per_strategy},
                                  std::pair{"best_per_implementation", &found.best_per_implementation}}) {
    j[key] = nlohmann::json::array();
    for (const auto& x : *rows) {
      nlohmann::json b = result_json(x);
      b["strategy"] = x.strategy_family();
      b["maturity"] = std::string(models::to_string(x.maturity));
      b["profile_origin"] = x.profile_origin;
      j[key].push_back(b);
    }
  }
  return j;
}

std::string plan_csv(const PlanRequest& r, const PlanSearch& found) {
  const bool inference = r.phase != models::RunPhase::Train;
  std::vector<std::string> header{"rank"};
  const auto cols = sweep_columns(inference);
  header.insert(header.end(), cols.begin(), cols.end());
  header.push_back("why");
  header.push_back("ties");
  header.push_back("fold");
  std::string out = models::csv_line(header);
  for (std::size_t i = 0; i < found.plans.size(); ++i) {
    out += std::to_string(i + 1) + ",";
    append_csv_row(found.plans[i].plan, out, inference);
    out.back() = ',';  // the row's newline
    out += models::csv_escape(explain(found.plans[i].plan)) + "," + models::csv_escape(ties_text(found.plans[i])) + "," +
           models::csv_escape(fold_text(found.plans[i])) + "\n";
  }
  return out;
}

}  // namespace ringsim::planning
