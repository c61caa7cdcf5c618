#include "calibration/tables.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "models/catalog/resolve.hpp"
#include "models/analytic/analytic.hpp"
#include "models/cost/profile_params.hpp"
#include "models/io/error.hpp"
#include "sim/step.hpp"

namespace ringsim::calibration {

using models::InputError;

std::string SpeedupRow::mesh() const { return hardware + " " + std::to_string(mp) + "x" + std::to_string(sp); }

double ScenarioPredictor::operator()(const models::ScenarioSpec& spec_in, const models::Profile& profile) {
  auto& r = resolved(spec_in, profile);
  return engine_ == Engine::Des ? sim::simulate_step(r, {}).step_s : models::predict(r).step_s;
}

models::Prediction ScenarioPredictor::prediction(const models::ScenarioSpec& spec_in, const models::Profile& profile) {
  return models::predict(resolved(spec_in, profile));
}

models::RoundCost ScenarioPredictor::call(const models::ScenarioSpec& spec, const models::Profile& profile,
                                           const models::AttentionCall& c) {
  auto& r = resolved(spec, profile);
  return r.attention->call(r, c);
}

models::ResolvedScenario& ScenarioPredictor::resolved(const models::ScenarioSpec& spec_in, const models::Profile& profile) {
  models::ScenarioSpec spec = spec_in;
  // The profile being fitted belongs to one implementation: the scenario runs that one.
  if (spec.impl.empty()) spec.impl = profile.implementation;
  // The tile comes from the profile being fitted, not from the catalog's profile file.
  if (!spec.tile && spec.n_seq > 0 && spec.sp > 0) {
    const std::int64_t c = spec.n_seq / spec.sp;
    spec.tile = models::TileShape{std::min(profile.default_tile.q, c), std::min(profile.default_tile.k, c)};
  }
  const std::string key = spec.hardware + "|" + spec.hardware_file + "|" + spec.model + "|" + spec.model_file + "|" +
                          std::to_string(spec.mp) + "|" + std::to_string(spec.sp) + "|" + std::to_string(spec.n_seq) +
                          "|" + std::to_string(spec.batch) + "|" + spec.layout.text() + "|" + spec.mask.text() + "|" + spec.impl + "|" + spec.cp.text() + "|" +
                          std::to_string(spec.tile->q) + "x" + std::to_string(spec.tile->k) + "|" +
                          std::to_string(profile.kv_wire_bytes) + "|" + std::to_string(spec.seed);
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, models::resolve(spec, catalog_)).first;
  auto& r = it->second;
  r.profile = profile;
  r.rebuild_cost();
  return r;
}

const std::vector<FreeParameter>& known_parameters() {
  // The profile's own declaration (models/cost/profile_params.hpp): the fittable ones, in its order.
  static const std::vector<FreeParameter> params = [] {
    std::vector<FreeParameter> out;
    for (const auto& p : models::profile_parameters())
      if (p.fittable) out.push_back({std::string(p.name), p.lower, p.upper, std::string(p.meaning)});
    return out;
  }();
  return params;
}

const FreeParameter& find_parameter(const std::string& name) {
  for (const auto& p : known_parameters())
    if (p.name == name) return p;
  std::string known;
  for (const auto& p : known_parameters()) known += (known.empty() ? "" : ", ") + p.name;
  throw InputError({}, 0, "free", "unknown parameter '" + name + "' (known: " + known + ")");
}

namespace {

// A fit that frees a parameter the profile's kernel family never reads would fit nothing.
void check_read(const models::Profile& p, const std::string& name) {
  if (!p.reads(name))
    throw InputError({}, 0, "free",
                     "parameter '" + name + "' is not read by kernel family " + p.kernel_family + " (implementation " +
                         p.implementation + "), so no fit can tell it");
}

}  // namespace

double get_parameter(const models::Profile& p, const std::string& name) {
  (void)find_parameter(name);  // throws for names a fit may not free
  check_read(p, name);
  return *p.parameter(name);
}

void set_parameter(models::Profile& p, const std::string& name, double value) {
  (void)find_parameter(name);
  check_read(p, name);
  *p.parameter(name) = value;
}

std::vector<double> predict_speedups(const std::vector<SpeedupRow>& rows, const models::Profile& profile,
                                     const StepPredictor& predictor) {
  std::vector<double> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    models::ScenarioSpec spec;
    spec.hardware = row.hardware;
    spec.model = row.model;
    spec.mp = row.mp;
    spec.sp = row.sp;
    spec.n_seq = row.n_seq;
    spec.layout = models::LayoutSpec{};
    const double ring = predictor(spec, profile);
    spec.layout = models::LayoutSpec::parse("striped");
    const double striped = predictor(spec, profile);
    out.push_back(ring / striped);
  }
  return out;
}

namespace {

FitResult fit_rows(const std::vector<SpeedupRow>& rows, const models::Profile& base, const std::vector<FreeParameter>& free,
                   const StepPredictor& predictor, const FitOptions& options) {
  Eigen::VectorXd y(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) y[static_cast<Eigen::Index>(i)] = rows[i].speedup;
  std::vector<Parameter> params;
  for (const auto& f : free) params.push_back({f.name, f.lower, f.upper, get_parameter(base, f.name)});
  const ModelFn model = [&](const Eigen::VectorXd& x) {
    models::Profile p = base;
    for (std::size_t k = 0; k < free.size(); ++k) set_parameter(p, free[k].name, x[static_cast<Eigen::Index>(k)]);
    const auto s = predict_speedups(rows, p, predictor);
    return Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(s.data(), static_cast<Eigen::Index>(s.size())));
  };
  return fit_least_squares(model, y, params, options);
}

models::Profile with_params(models::Profile p, const std::vector<FreeParameter>& free, const Eigen::VectorXd& x) {
  for (std::size_t k = 0; k < free.size(); ++k) set_parameter(p, free[k].name, x[static_cast<Eigen::Index>(k)]);
  return p;
}

std::vector<FreeParameter> lookup(const std::vector<std::string>& names) {
  std::vector<FreeParameter> free;
  for (const auto& n : names) free.push_back(find_parameter(n));
  return free;
}

}  // namespace

CrossValidation cross_validate(const std::vector<SpeedupRow>& rows, const models::Profile& base,
                               const std::vector<std::string>& free_names, const StepPredictor& predictor,
                               const FitOptions& options, const std::string& by,
                               const std::function<std::string(const SpeedupRow&)>& group_of) {
  const auto free = lookup(free_names);
  CrossValidation cv;
  cv.by = by;
  std::set<std::string> groups;
  for (const auto& r : rows) groups.insert(group_of(r));
  cv.held_out_predicted.assign(rows.size(), std::numeric_limits<double>::quiet_NaN());
  if (groups.size() < 2) return cv;
  double abs_sum = 0;
  std::size_t counted = 0;
  for (const auto& g : groups) {
    std::vector<SpeedupRow> train, test;
    std::vector<std::size_t> test_index;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (group_of(rows[i]) == g) {
        test.push_back(rows[i]);
        test_index.push_back(i);
      } else {
        train.push_back(rows[i]);
      }
    }
    // Too few rows left to determine every parameter: this group cannot be held out.
    if (train.size() < free.size()) continue;
    const FitResult f = fit_rows(train, base, free, predictor, options);
    const auto pred = predict_speedups(test, with_params(base, free, f.params), predictor);
    double g_sum = 0;
    for (std::size_t k = 0; k < test.size(); ++k) {
      cv.held_out_predicted[test_index[k]] = pred[k];
      g_sum += std::abs(pred[k] - test[k].speedup);
    }
    abs_sum += g_sum;
    counted += test.size();
    cv.groups.emplace_back(g, g_sum / static_cast<double>(test.size()));
  }
  cv.available = counted > 0;
  cv.mae = counted ? abs_sum / static_cast<double>(counted) : 0;
  return cv;
}

SpeedupCalibration calibrate_speedups(const std::vector<SpeedupRow>& rows, const models::Profile& base,
                                      const std::vector<std::string>& free_names, const StepPredictor& predictor,
                                      const FitOptions& options, bool cross_validate_too) {
  SpeedupCalibration c;
  c.free = lookup(free_names);
  if (rows.size() < c.free.size())
    throw InputError({}, 0, "rows",
                     "only " + std::to_string(rows.size()) + " speedup rows for " + std::to_string(c.free.size()) +
                         " free parameters");
  c.fit = fit_rows(rows, base, c.free, predictor, options);
  c.profile = with_params(base, c.free, c.fit.params);
  if (cross_validate_too) {
    c.by_mesh = cross_validate(rows, base, free_names, predictor, options, "mesh",
                               [](const SpeedupRow& r) { return r.mesh(); });
    c.by_length = cross_validate(rows, base, free_names, predictor, options, "n_seq",
                                 [](const SpeedupRow& r) { return std::to_string(r.n_seq); });
  }
  return c;
}

}  // namespace ringsim::calibration
