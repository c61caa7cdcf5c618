#pragma once
// One sweep point -> one row: the analytic prediction (or the discrete-event simulation), the
// memory estimate, the data-parallel gradient synchronisation and a one-word bound. A point
// whose axes do not go together (an implementation without the layout, n_seq not divisible by
// the ring, a topology too small for the mesh) gives a row with status "skipped" and the reason.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <array>
#include <deque>
#include <initializer_list>
#include <unordered_map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/analytic/analytic.hpp"
#include "models/analytic/breakdown.hpp"
#include "models/analytic/interval.hpp"
#include "models/inference/phase.hpp"
#include "models/memory/memory.hpp"
#include "planning/grid.hpp"

namespace ringsim::planning {

struct SweepResult {
  SweepPoint point;
  Engine engine = Engine::Analytic;
  bool ok = false;
  std::string note;            // why the point was skipped ("field: message"); empty when ok
  std::string note_field;      // the field of that reason, for front-ends that raise it (Python)
  // Resolved identity (the requested values where the point was skipped).
  std::string hardware, model, impl, profile;
  bool profile_calibrated = false;
  // What a user could deploy as predicted: the implementation's maturity, and where the profile's
  // numbers come from ("fitted" on this GPU, "derived" from another GPU's fit, "spec defaults").
  models::Maturity maturity = models::Maturity::Production;
  std::string profile_origin;
  // deployability_label of the two: the label every plan row carries.
  // The strategy family a planner groups the row under: the cp family, or "none" where the row
  // has no context parallelism (sp 1: every strategy is the same run).
  [[nodiscard]] std::string strategy_family() const {
    return point.spec.sp == 1 ? std::string("none") : point.spec.cp.family_name();
  }
  [[nodiscard]] std::string deployability() const;
  std::int64_t tile_q = 0, tile_k = 0;
  std::string topology;        // as run ("default" when the hardware's)
  models::Recompute recompute = models::Recompute::None;
  models::Prediction prediction;  // step_s, tokens/s and MFU from the engine that ran
  // The 90 % interval of step_s (models/analytic/interval.hpp: the profile's fitted uncertainty; the
  // simulator's step keeps the analytic interval's relative width); unavailable for profiles
  // without one (spec defaults, or derived from a fit that measured no derived spread).
  models::Interval step_interval;
  // The 90 % intervals of prediction.attention_fwd_s / attention_bwd_s (the cost model's, whatever
  // the engine); unavailable as step_interval is.
  models::Interval attention_fwd_interval, attention_bwd_interval;
  double pipeline_bubble = 0;     // the largest share of the step a pipeline rank idles (0 without stages)
  double grad_sync_s = 0;         // data-parallel gradient synchronisation of one step
  double grad_sync_exposed_s = 0; // the part the backward does not hide
  double step_s = 0;              // prediction.step_s + grad_sync_exposed_s
  // step_s in parts (models/analytic/breakdown.hpp; training rows: every micro-batch, the busiest
  // pipeline rank, the exposed synchronisation); zeros for inference rows.
  models::StepBreakdown parts;
  double tokens_per_s = 0;        // all dp replicas
  models::MemoryEstimate memory;
  // Prefill and decode points: their own figures (step_s is then the latency, TTFT or TPOT;
  // memory's strategy term the KV cache shard, its workspace the ring's message buffers).
  std::optional<models::InferencePrediction> inference;
  [[nodiscard]] std::int64_t devices() const noexcept {
    return point.pipeline.stages * point.dp * point.spec.mp * point.spec.sp;
  }
  // "compute" or "transfer": whether exposed communication (the parts' ring transfers,
  // collectives and gradient synchronisation) is at least 5% of the step.
  [[nodiscard]] const char* bound() const noexcept;
};

// Where a profile's numbers come from: "fitted" on its GPU, "derived" from another GPU's fit, or
// "spec defaults".
[[nodiscard]] std::string profile_origin(const models::Profile& p);
// "" for a production library on a fitted profile; else "[research]", "[derived]",
// "[reference; spec defaults]", ...
[[nodiscard]] std::string deployability_label(models::Maturity maturity, const std::string& origin);
// A result's identity columns from the scenario it ran: implementation, profile and where its
// numbers come from, maturity, tile.
void describe_scenario(SweepResult& r, const models::ResolvedScenario& s);

// Turns points into results. Caches what files give (hardware, model, implementation, profile)
// per distinct name, so one evaluator is cheap per point; not thread-safe: one per thread.
class Evaluator {
 public:
  Evaluator(const models::Catalog& catalog, const SweepGrid& grid);
  // p: a point of `grid` (SweepGrid::point), whose axis positions key the memo.
  [[nodiscard]] SweepResult evaluate(const SweepPoint& p);
  // The log-space standard deviation of the ratio of two training points' analytic steps where both
  // run on one fitted profile (models::paired_step_log_sd); empty where they do not, or where
  // either point cannot run.
  [[nodiscard]] std::optional<double> paired_step_log_sd(const SweepPoint& a, const SweepPoint& b);

 private:
  using PartsMap = std::map<std::string, models::ScenarioParts>;
  // The resolved scenario and its timing, shared by points that differ in memory options only.
  struct Timed {
    models::ResolvedScenario scenario;
    models::Prediction prediction;
    models::Interval step_interval;  // relative to prediction.step_s (lo / step, hi / step)
    models::Interval attention_fwd_interval, attention_bwd_interval;  // absolute
    // A point the scenario cannot run (a strategy the implementation does not offer, a split that
    // is not the point's sp): remembered, so the points that share its timing fail at once.
    std::optional<models::InputError> error;
  };
  // The point's scenario and analytic prediction (what compute_timed starts from).
  void resolve_point(const SweepPoint& p, Timed& t);
  void compute_timed(const SweepPoint& p, Timed& t);
  // The seam of the phases: a prefill or decode point (planning/evaluate_inference.cpp).
  void evaluate_inference(const SweepPoint& p, SweepResult& r);
  [[nodiscard]] PartsMap::const_iterator parts(const models::ScenarioSpec& spec,
                                               const std::optional<models::Recompute>& recompute);
  [[nodiscard]] const Timed& timed(const SweepPoint& p);
  [[nodiscard]] std::uint64_t axes_key(const SweepPoint& p, std::initializer_list<Axis> axes) const;
  const models::Catalog& catalog_;
  const SweepGrid& grid_;
  std::array<std::int64_t, kAxes> sizes_;
  std::unordered_map<std::uint64_t, const models::ScenarioParts*> parts_by_axes_;
  std::map<std::string, models::Hardware> hardware_;
  std::map<std::string, std::string> impl_choice_;
  PartsMap parts_;
  static constexpr std::size_t kTimedEntries = 1024;
  std::unordered_map<std::uint64_t, std::unique_ptr<Timed>> timed_;
  std::deque<std::uint64_t> timed_order_;
};

// One point as the evaluator resolves it, outside a sweep: its implementation (the catalog's
// choice where none is named), the point's recomputation applied to the profile, its topology's
// node size (the front-ends' workload and simulation of one scenario), and the grid's training
// precision (models::apply_precision).
[[nodiscard]] models::ResolvedScenario resolve_point(const SweepPoint& p, const models::Catalog& catalog,
                                                     models::TrainingPrecision precision = models::TrainingPrecision::Bf16);

// The sweep CSV's columns and one result as a CSV line (with its newline). Numbers use %.6g,
// so a row is the same bytes whichever thread computed it. With `inference` (a grid with a
// prefill or decode phase: SweepGrid::has_inference) the inference columns follow the others;
// without, a training sweep's rows are as they always were.
[[nodiscard]] const std::vector<std::string>& sweep_columns();
[[nodiscard]] const std::vector<std::string>& inference_columns();
[[nodiscard]] std::vector<std::string> sweep_columns(bool inference);
void append_csv_row(const SweepResult& r, std::string& out, bool inference = false);
// The same row as a JSON object (numbers as numbers; no numeric fields for a skipped row).
[[nodiscard]] nlohmann::json result_json(const SweepResult& r);

}  // namespace ringsim::planning
