#include "calibration/scfa.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "models/catalog/resolve.hpp"
#include "models/analytic/analytic.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::calibration {

using models::InputError;

namespace {

std::string trimmed(const std::string& s) { return std::string(models::trim(s)); }

std::string after_prefix(const std::string& param, const std::string& prefix) {
  if (param.rfind(prefix, 0) != 0) return {};
  return trimmed(param.substr(prefix.size()));
}

}  // namespace

std::string scfa_mask(const std::string& method, const std::string& param) {
  if (method == "flash") return "causal";
  if (method == "hash") {
    const auto nb = after_prefix(param, "nb=");
    if (nb.empty()) throw InputError({}, 0, "param", "hash rows need param nb=K, got '" + param + "'");
    return "hash:" + nb;
  }
  if (method == "qk") {
    const auto p = after_prefix(param, "drop=");
    if (p.empty()) throw InputError({}, 0, "param", "qk rows need param drop=P, got '" + param + "'");
    return "qkdrop:" + p;
  }
  throw InputError({}, 0, "method", "unknown method '" + method + "' (known: flash, hash, qk)");
}

std::vector<ScfaRow> scfa_rows(const std::string& file, const std::vector<std::string>& header,
                               const std::vector<std::vector<std::string>>& cells,
                               const std::vector<std::int64_t>& lines) {
  auto col = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw InputError(file, 1, name, std::string("missing column '") + name + "'");
    return static_cast<std::size_t>(it - header.begin());
  };
  const auto c_method = col("method"), c_param = col("param"), c_n = col("n_seq"), c_ms = col("ms");
  std::vector<ScfaRow> rows;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto line = i < lines.size() ? lines[i] : 0;
    const auto& r = cells[i];
    auto cell = [&](std::size_t c, const char* name) {
      if (c >= r.size()) throw InputError(file, line, name, "missing value");
      return trimmed(r[c]);
    };
    ScfaRow row;
    row.method = cell(c_method, "method");
    row.param = cell(c_param, "param");
    row.line = line;
    try {
      // The mask is parsed here (a bad nb or drop rate fails with its row, not inside the fit).
      const auto mask = scfa_mask(row.method, row.param);
      if (row.method != "flash") (void)models::parse_double(models::split(mask, ':').back(), "param");
      try {
        row.mask = models::MaskSpec::parse(mask);
      } catch (const InputError& e) {
        throw e.with_field("param");
      }
      const double n = models::parse_double(cell(c_n, "n_seq"), "n_seq");
      if (!(n >= 1) || n != std::floor(n)) throw InputError({}, 0, "n_seq", "expected a positive integer");
      row.n_seq = static_cast<std::int64_t>(n);
      row.ms = models::parse_double(cell(c_ms, "ms"), "ms");
      if (!(row.ms > 0) || !std::isfinite(row.ms)) throw InputError({}, 0, "ms", "expected a positive time");
    } catch (const InputError& e) {
      throw InputError(file, line, e.field(), e.message());
    }
    rows.push_back(row);
  }
  if (rows.empty()) throw InputError(file, 0, "rows", "no rows");
  return rows;
}

models::ScenarioSpec scfa_spec(const ScfaSetting& setting, const models::MaskSpec& mask, std::int64_t n_seq) {
  models::ScenarioSpec spec;
  spec.hardware = setting.hardware;
  spec.model = setting.model;
  spec.mp = 1;
  spec.sp = 1;
  spec.n_seq = n_seq;
  spec.batch = setting.batch;
  spec.mask = mask;
  spec.tile = setting.tile;
  spec.seed = setting.seed;
  return spec;
}

ScfaPredictor analytic_scfa_predictor(const models::Catalog& catalog, const ScfaSetting& setting) {
  // Shared so the memoised scenarios survive copies of the std::function.
  auto analytic = std::make_shared<ScenarioPredictor>(models::Catalog(catalog));
  return [analytic, setting](const ScfaRow& row, const models::Profile& profile) {
    const auto p = analytic->prediction(scfa_spec(setting, row.mask, row.n_seq), profile);
    return p.attention_fwd_s + p.attention_bwd_s;
  };
}

std::vector<std::string> scfa_default_free() {
  return {"attention_efficiency", "sparse_kernel_efficiency", "masked_tile_penalty"};
}

ScfaCalibration calibrate_scfa(const std::vector<ScfaRow>& rows, const models::Profile& base,
                               const std::vector<std::string>& free, const ScfaPredictor& predictor,
                               const FitOptions& options) {
  if (rows.size() < free.size())
    throw InputError({}, 0, "rows", std::to_string(rows.size()) + " rows for " + std::to_string(free.size()) +
                                        " free parameters");
  ScfaCalibration c;
  std::vector<Parameter> params;
  for (const auto& name : free) {
    const auto& fp = find_parameter(name);
    c.free.push_back(fp);
    const double start = std::clamp(get_parameter(base, name), fp.lower, fp.upper);
    params.push_back({fp.name, fp.lower, fp.upper, start});
  }
  // Times span 50x over the lengths: fit log(seconds) so every row weighs by its relative error.
  Eigen::VectorXd observed(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) observed[static_cast<Eigen::Index>(i)] = std::log(rows[i].ms * 1e-3);
  auto with = [&](const Eigen::VectorXd& x) {
    models::Profile p = base;
    for (std::size_t k = 0; k < free.size(); ++k) set_parameter(p, free[k], x[static_cast<Eigen::Index>(k)]);
    return p;
  };
  const ModelFn model = [&](const Eigen::VectorXd& x) {
    const models::Profile p = with(x);
    Eigen::VectorXd out(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t i = 0; i < rows.size(); ++i) out[static_cast<Eigen::Index>(i)] = std::log(predictor(rows[i], p));
    return out;
  };
  c.fit = fit_least_squares(model, observed, params, options);
  c.profile = with(c.fit.params);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double ms = std::exp(c.fit.predicted[static_cast<Eigen::Index>(i)]) * 1e3;
    c.predicted_ms.push_back(ms);
    c.relative_error.push_back(ms / rows[i].ms - 1);
  }
  return c;
}

ScfaHeldOut scfa_leave_one_row_out(const std::vector<ScfaRow>& rows, const models::Profile& base,
                                   const std::vector<std::string>& free, const ScfaPredictor& predictor,
                                   const FitOptions& options) {
  ScfaHeldOut h;
  h.predicted_ms.assign(rows.size(), std::numeric_limits<double>::quiet_NaN());
  double abs_sum = 0, sq = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<ScfaRow> train;
    for (std::size_t j = 0; j < rows.size(); ++j)
      if (j != i) train.push_back(rows[j]);
    if (train.size() < free.size()) continue;
    ScfaCalibration c;
    try {
      c = calibrate_scfa(train, base, free, predictor, options);
    } catch (const InputError&) {
      continue;  // the others cannot fit these parameters: the row stays unscored
    }
    const double ms = predictor(rows[i], c.profile) * 1e3;
    if (!(ms > 0) || !std::isfinite(ms)) continue;
    h.predicted_ms[i] = ms;
    abs_sum += std::abs(ms / rows[i].ms - 1);
    const double e = std::log(ms / rows[i].ms);
    sq += e * e;
    ++h.points;
  }
  h.mape = h.points ? abs_sum / static_cast<double>(h.points) : std::numeric_limits<double>::quiet_NaN();
  h.log_sd = h.points ? std::sqrt(sq / static_cast<double>(h.points)) : std::numeric_limits<double>::quiet_NaN();
  return h;
}

}  // namespace ringsim::calibration
