#include "planning/predict_grid.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/analytic/analytic.hpp"
#include "models/inference/phase.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "planning/plan.hpp"
#include "planning/predict_runs.hpp"

namespace ringsim::planning {

using models::InputError;

namespace {

// A row to evaluate: its point, or, for a strategy no implementation runs here, the reason.
struct Job {
  SweepPoint point;
  std::int64_t comparison = 0;
  std::optional<InputError> refused;
};

// The grid of one point: every axis holds the point's value, the settings stay the grid's.
SweepGrid one_point(const SweepGrid& grid, const SweepPoint& p) {
  SweepGrid g = grid;
  g.phase = {p.phase};
  g.hardware = {p.spec.hardware_file.empty() ? p.spec.hardware : p.spec.hardware_file};
  g.model = {p.spec.model_file.empty() ? p.spec.model : p.spec.model_file};
  g.impl = {p.spec.impl};
  g.cp = {p.spec.cp};
  g.mesh = {Mesh{p.spec.mp, p.spec.sp}};
  g.dp = {p.dp};
  g.n_seq = {p.spec.n_seq};
  g.cached_tokens = {p.cached_tokens};
  g.batch = {p.spec.batch};
  g.layout = {p.spec.layout};
  g.mask = {p.spec.mask};
  g.tile = {p.spec.tile};
  g.topology = {p.topology};
  g.zero = {p.zero};
  g.recompute = {p.recompute};
  return g;
}

SweepResult skipped(const SweepPoint& p, Engine engine, const InputError& e) {
  SweepResult r;
  r.point = p;
  r.engine = engine;
  r.hardware = p.spec.hardware_file.empty() ? p.spec.hardware : p.spec.hardware_file;
  r.model = p.spec.model_file.empty() ? p.spec.model : p.spec.model_file;
  r.impl = p.spec.impl;
  r.profile = p.spec.profile;
  r.topology = p.topology.empty() ? "default" : p.topology;
  r.note = e.field().empty() ? e.message() : e.field() + ": " + e.message();
  r.note_field = e.field();
  return r;
}

// The rows of every combination, in order: per combination, per strategy, per layout.
std::vector<Job> jobs_of(const SweepGrid& grid, bool layouts_given, const models::Catalog& catalog) {
  SweepGrid outer = grid;
  outer.cp = {grid.cp.front()};
  outer.layout = {grid.layout.front()};
  std::vector<Job> jobs;
  const auto add = [&](Job j) {
    if (static_cast<std::int64_t>(jobs.size()) >= kMaxPredictRows)
      throw InputError({}, 0, "request",
                       fmt::format("more than {} rows to predict: run a sweep for larger grids", kMaxPredictRows));
    jobs.push_back(std::move(j));
  };
  const std::int64_t combinations = outer.size();
  for (std::int64_t i = 0; i < combinations; ++i) {
    const auto p = outer.point(i);
    if (p.phase != models::RunPhase::Train) {
      for (const auto& cp : grid.cp) {
        auto q = p;
        q.spec.cp = cp;
        // The layout the phase runs (the row shows it); an error is the evaluation's to report.
        try {
          q.spec.layout = models::inference_spec(q.spec, q.phase, q.cached_tokens, catalog).layout;
        } catch (const InputError&) {
        }
        add({q, i, std::nullopt});
      }
      continue;
    }
    // The strategies compared together, as `ringsim predict --cp A,B` compares them (one kernel
    // for every row where one runs them all), then those that cannot run here.
    RunRequest request{p.spec, grid.layout, layouts_given, grid.cp, std::string(models::to_string(grid.memory.precision)), {}};
    std::vector<RefusedRun> refused;
    for (auto& spec : expand_runs(request, catalog, &refused)) {
      auto run = p;
      run.spec = std::move(spec);
      add({std::move(run), i, std::nullopt});
    }
    for (const auto& r : refused) {
      auto run = p;
      run.spec = r.spec;
      add({std::move(run), i, r.error});
    }
  }
  return jobs;
}

// Every job's row, on `threads` workers (0: every core); the first exception other than an
// InputError (which makes a skipped row) is rethrown.
std::vector<SweepResult> evaluate_jobs(const SweepGrid& grid, const std::vector<Job>& jobs,
                                       const models::Catalog& catalog, std::int64_t threads) {
  std::vector<SweepResult> rows(jobs.size());
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex mutex;
  const auto work = [&] {
    for (;;) {
      const std::size_t k = next++;
      if (k >= jobs.size()) return;
      try {
        const auto& job = jobs[k];
        if (job.refused) {
          rows[k] = skipped(job.point, grid.engine, *job.refused);
        } else {
          const auto g = one_point(grid, job.point);
          Evaluator ev(catalog, g);
          rows[k] = ev.evaluate(g.point(0));
        }
        rows[k].point.index = static_cast<std::int64_t>(k);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        next = jobs.size();
        return;
      }
    }
  };
  std::int64_t n = threads > 0 ? threads : static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  n = std::min<std::int64_t>(n, static_cast<std::int64_t>(jobs.size()));
  std::vector<std::thread> pool;
  for (std::int64_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return rows;
}

// Each comparison's figures against its first runnable training row.
void add_comparisons(std::vector<PredictRow>& rows, const models::Catalog& catalog) {
  for (std::size_t begin = 0; begin < rows.size();) {
    std::size_t end = begin;
    while (end < rows.size() && rows[end].comparison == rows[begin].comparison) ++end;
    const auto first = std::find_if(rows.begin() + static_cast<std::ptrdiff_t>(begin),
                                    rows.begin() + static_cast<std::ptrdiff_t>(end), [](const PredictRow& r) {
                                      return r.result.ok && r.result.point.phase == models::RunPhase::Train;
                                    });
    if (first != rows.begin() + static_cast<std::ptrdiff_t>(end)) {
      auto first_scenario = resolve_point(first->result.point, catalog);
      const double tms = models::theoretical_max_speedup(first_scenario);
      for (std::size_t k = begin; k < end; ++k) {
        auto& row = rows[k];
        const auto& r = row.result;
        if (!r.ok || r.point.phase != models::RunPhase::Train) continue;
        row.tms = tms;
        row.speedup_vs_first = first->result.step_s / r.step_s;
        if (&row == &*first) {
          row.speedup = speedup_interval(first_scenario, first_scenario, 1.0);
        } else if (r.profile == first->result.profile) {  // else no interval: another profile's uncertainty
          auto s = resolve_point(r.point, catalog);
          row.speedup = speedup_interval(first_scenario, s, row.speedup_vs_first);
        }
      }
    }
    begin = end;
  }
}

}  // namespace

ScenarioRequest scenario_request_from_json(const nlohmann::json& j, const std::string& file,
                                           const std::string& default_layouts) {
  if (!j.is_object()) throw InputError(file, 0, "request", "expected a JSON object of fields");
  nlohmann::json with = j;
  const auto fill = [&](const char* key, const nlohmann::json& value) {
    if (!with.contains(key)) with[key] = value;
  };
  fill("hardware", kDefaultHardware);
  fill("model", kDefaultModel);
  if (!j.contains("mp") && !j.contains("sp")) fill("mesh", fmt::format("{}x{}", kDefaultMp, kDefaultSp));
  fill("n_seq", kDefaultSeq);
  fill("cp", kDefaultStrategy);
  ScenarioRequest r;
  r.layouts_given = j.contains("layout");
  if (!r.layouts_given) with["layout"] = models::split(default_layouts, ',');
  r.grid = SweepGrid::from_json(with, file);
  return r;
}

nlohmann::json predict_row_json(const PredictRow& row) {
  const auto& r = row.result;
  auto j = result_json(r);
  j["why"] = row.why;
  j["pred_engine"] = to_string(r.engine);
  j["docs"] = models::docs_text(r.point.spec);
  if (!r.ok || r.inference) return j;
  const auto& q = r.prediction;
  const auto opt = [](bool available, double v) { return available ? nlohmann::json(v) : nlohmann::json(nullptr); };
  j.update({{"exposed_allgather_s", q.exposed_allgather_s}, {"exposed_reduce_scatter_s", q.exposed_reduce_scatter_s},
            {"exposed_all_to_all_s", q.exposed_all_to_all_s}, {"model_flops", q.model_flops},
            {"hide_threshold_tokens", q.hide_threshold_tokens}, {"pred_tms", row.tms},
            {"speedup_vs_first", row.speedup_vs_first},
            {"speedup_vs_first_lo", opt(row.speedup.available, row.speedup.lo)},
            {"speedup_vs_first_hi", opt(row.speedup.available, row.speedup.hi)}});
  return j;
}

std::vector<PredictRow> predict_grid(const SweepGrid& grid, bool layouts_given, const models::Catalog& catalog,
                                     std::int64_t threads) {
  const auto jobs = jobs_of(grid, layouts_given, catalog);
  auto results = evaluate_jobs(grid, jobs, catalog, threads);
  std::vector<PredictRow> rows(results.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    auto& row = rows[k];
    row.result = std::move(results[k]);
    row.comparison = jobs[k].comparison;
    const auto& r = row.result;
    row.why = !r.ok ? r.note : r.inference ? explain(r) : models::why(r.prediction, r.parts);
  }
  const auto ran = std::find_if(rows.begin(), rows.end(), [](const PredictRow& r) { return r.result.ok; });
  if (ran == rows.end() && !rows.empty()) {
    const auto& r = rows.front().result;
    const auto& note = r.note;
    const std::string message = !r.note_field.empty() && note.starts_with(r.note_field + ": ")
                                    ? note.substr(r.note_field.size() + 2)
                                    : note;
    throw InputError({}, 0, r.note_field, message);
  }
  add_comparisons(rows, catalog);
  return rows;
}

}  // namespace ringsim::planning
