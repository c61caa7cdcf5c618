#pragma once
// `predict` over every combination of a grid's other axes: for each combination of hardware,
// model, mesh, n_seq, batch, mask, tile, topology, dp, ZeRO stage, recomputation and phase, the
// comparison `ringsim predict` makes of the strategies and layouts (planning/predict_runs.hpp:
// the same rows, run by the same implementations), each row evaluated as a sweep point
// (planning::Evaluator, which counts a training row as predict does: models::training_step).
// The Python module's predict() is this; its rows carry predict's comparison figures (speedup
// over the first row, the theoretical max speedup, predict's why) beside the sweep's columns.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/analytic/interval.hpp"
#include "planning/evaluate.hpp"
#include "planning/grid.hpp"

namespace ringsim::planning {

struct PredictRow {
  SweepResult result;           // point.index: the row's position in the answer
  std::int64_t comparison = 0;  // which combination of the other axes the row compares in
  // Training rows that run (else 0 and unavailable): the comparison's first runnable row's step
  // over this one's, its 90 % interval (planning::speedup_interval), and the comparison's
  // theoretical max speedup of striped over ring (models::theoretical_max_speedup).
  double speedup_vs_first = 0;
  models::Interval speedup;
  double tms = 0;
  // Predict's one line: a training row's limiting cause (models::why of the trained step), an
  // inference row's (planning::explain), a skipped row's reason.
  std::string why;
};

// A scenario request in a sweep file's vocabulary (SweepGrid::from_json, the same fields and
// checks), with the scenario commands' defaults (planning/predict_runs.hpp: the command line's)
// where it names nothing: hardware, model, mesh, n_seq, strategy, and `default_layouts`
// (comma-separated: predict's list, or one layout for workload and simulate), the layouts marked
// as given when the request names them.
struct ScenarioRequest {
  SweepGrid grid;
  bool layouts_given = false;
};
[[nodiscard]] ScenarioRequest scenario_request_from_json(const nlohmann::json& j, const std::string& file,
                                                         const std::string& default_layouts);

// One row as JSON: the sweep row's fields (result_json) and predict's (why, speedup_vs_first and
// its interval, pred_tms, pred_engine, docs, exposed_allgather_s, exposed_reduce_scatter_s,
// exposed_all_to_all_s, model_flops, hide_threshold_tokens), named as `ringsim predict` names them.
[[nodiscard]] nlohmann::json predict_row_json(const PredictRow& row);

// Rows past this are refused (field "request"): predict compares a few configurations; a sweep
// streams any number.
inline constexpr std::int64_t kMaxPredictRows = std::int64_t{1} << 20;

// `grid`: validated (SweepGrid::validate). layouts_given: its layout axis was named (else it
// holds predict's default list, each strategy keeping the layouts its library offers). Training
// points compare as `ringsim predict` does; a prefill or decode point gives one row per strategy,
// in the layout its phase runs (models::inference_spec). Rows that cannot run are skipped rows
// with their reason; when no row runs, the first row's error is thrown (one scenario that cannot
// run is an error, as on the command line). `threads`: 0 for every core.
[[nodiscard]] std::vector<PredictRow> predict_grid(const SweepGrid& grid, bool layouts_given,
                                                   const models::Catalog& catalog, std::int64_t threads);

}  // namespace ringsim::planning
