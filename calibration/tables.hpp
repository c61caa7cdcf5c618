#pragma once
// Fitting a Profile's implementation parameters (overlap, overheads, efficiencies) so that
// predicted end-to-end speedups of striped over ring reproduce published ones. The step-time
// predictor is injected, so the discrete-event simulator can replace the analytic model.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "calibration/fit.hpp"
#include "models/analytic/analytic.hpp"
#include "models/families/attention_cost.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::calibration {

// One published measurement: speedup of striped over ring for a configuration.
struct SpeedupRow {
  std::string hardware;
  std::string model;
  std::int64_t mp = 1;
  std::int64_t sp = 1;
  std::int64_t n_seq = 0;
  double speedup = 0;
  double tms = std::numeric_limits<double>::quiet_NaN();  // published TMS, when given
  std::string impl;                                        // the implementation measured, when given
  std::int64_t line = 0;                                   // source line, for messages
  [[nodiscard]] std::string mesh() const;                  // "hardware mp x sp"
};

// Seconds of one training step for a scenario under a profile.
using StepPredictor = std::function<double(const models::ScenarioSpec&, const models::Profile&)>;

enum class Engine { Analytic, Des };

// Step time of a scenario under a candidate profile, from the analytic model or the
// discrete-event simulator. Each scenario's layout, mask and workload are resolved once and only
// the cost model is rebuilt per profile (a fit changes only the profile). Not thread-safe.
class ScenarioPredictor {
 public:
  explicit ScenarioPredictor(models::Catalog catalog, Engine engine = Engine::Analytic)
      : catalog_(std::move(catalog)), engine_(engine) {}
  [[nodiscard]] double operator()(const models::ScenarioSpec& spec, const models::Profile& profile);
  // The whole analytic prediction (attention forward/backward apart), same memoisation.
  [[nodiscard]] models::Prediction prediction(const models::ScenarioSpec& spec, const models::Profile& profile);
  // One attention kernel call on a device of the scenario (models::AttentionCost::call).
  [[nodiscard]] models::RoundCost call(const models::ScenarioSpec& spec, const models::Profile& profile,
                                       const models::AttentionCall& c);

 private:
  // The cached scenario of `spec`, with its cost model rebuilt for `profile`.
  [[nodiscard]] models::ResolvedScenario& resolved(const models::ScenarioSpec& spec, const models::Profile& profile);
  models::Catalog catalog_;
  Engine engine_;
  std::map<std::string, models::ResolvedScenario> cache_;
};

// A Profile field that can be fitted, with the bounds its physical meaning allows.
struct FreeParameter {
  std::string name;
  double lower = 0;
  double upper = 1;
  std::string meaning;
};
[[nodiscard]] const std::vector<FreeParameter>& known_parameters();
// Throws InputError (field "free") for an unknown name.
[[nodiscard]] const FreeParameter& find_parameter(const std::string& name);
[[nodiscard]] double get_parameter(const models::Profile& p, const std::string& name);
void set_parameter(models::Profile& p, const std::string& name, double value);

// Ring step / striped step for each row.
[[nodiscard]] std::vector<double> predict_speedups(const std::vector<SpeedupRow>& rows, const models::Profile& profile,
                                                   const StepPredictor& predictor);

struct CrossValidation {
  std::string by;             // "mesh" or "n_seq"
  bool available = false;     // false with fewer than two groups
  double mae = 0;             // over all held-out rows
  std::vector<double> held_out_predicted;             // per row, predicted by the fit without its group
  std::vector<std::pair<std::string, double>> groups;  // per held-out group: its MAE
};

struct SpeedupCalibration {
  models::Profile profile;            // base with the fitted values
  std::vector<FreeParameter> free;
  FitResult fit;                      // params in `free` order; residuals = predicted - published
  CrossValidation by_mesh;
  CrossValidation by_length;
};

// Throws InputError when there are fewer rows than free parameters.
[[nodiscard]] SpeedupCalibration calibrate_speedups(const std::vector<SpeedupRow>& rows, const models::Profile& base,
                                                    const std::vector<std::string>& free, const StepPredictor& predictor,
                                                    const FitOptions& options = {}, bool cross_validate = true);

// Leave-one-group-out: refit without each group, predict it.
[[nodiscard]] CrossValidation cross_validate(const std::vector<SpeedupRow>& rows, const models::Profile& base,
                                             const std::vector<std::string>& free, const StepPredictor& predictor,
                                             const FitOptions& options, const std::string& by,
                                             const std::function<std::string(const SpeedupRow&)>& group_of);

}  // namespace ringsim::calibration
