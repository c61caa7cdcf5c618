#include "cli/calibrate_speedups.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/plot.hpp"
#include "calibration/speedup_spread.hpp"
#include "calibration/tables.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/scenario_options.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

// The rows of `hardware`; the other hardware's rows go to `others` (scored with this fit's
// parameters: what deriving a profile from it costs).
std::vector<calibration::SpeedupRow> read_speedups(const std::string& path, const std::string& hardware,
                                                   const models::Catalog& catalog,
                                                   std::vector<calibration::SpeedupRow>& others) {
  const CsvTable t = read_csv(path);
  const ScenarioColumns cols(t);
  const auto c_speedup = t.require_column("speedup");
  const auto c_tms = t.column("tms");
  const auto c_impl = t.column("impl");
  (void)catalog.hardware(hardware);  // unknown hardware: InputError naming the catalog
  std::vector<calibration::SpeedupRow> rows;
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto line = t.lines[i];
    const std::string hw = t.text(i, cols.hardware);
    if (hw != hardware && std::find(seen.begin(), seen.end(), hw) == seen.end()) seen.push_back(hw);
    const auto spec = cols.spec(t, i);
    calibration::SpeedupRow row;
    row.hardware = hw;
    row.model = spec.model;
    row.mp = spec.mp;
    row.sp = spec.sp;
    row.n_seq = spec.n_seq;
    row.speedup = t.number(i, c_speedup);
    if (row.speedup <= 0) throw InputError(path, line, "speedup", "expected a positive speedup");
    if (!t.text_or(i, c_tms, "").empty()) row.tms = t.number(i, *c_tms);
    row.impl = t.text_or(i, c_impl, "");
    if (row.n_seq % row.sp != 0) throw InputError(path, line, "n_seq", "n_seq is not divisible by sp");
    row.line = line;
    (hw == hardware ? rows : others).push_back(row);
  }
  if (rows.empty()) {
    std::string s;
    for (const auto& h : seen) s += (s.empty() ? "" : ", ") + h;
    throw InputError(path, 0, "hardware", "no rows for hardware '" + hardware + "' (the file has: " + s + ")");
  }
  return rows;
}

}  // namespace

int calibrate_from_speedups(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
  const auto path = a["from-speedups"].as<std::string>();
  const auto hardware = a["hardware"].as<std::string>();
  if (hardware.empty()) throw InputError({}, 0, "hardware", "--from-speedups needs --hardware");
  std::vector<calibration::SpeedupRow> other_rows;
  const auto rows = read_speedups(path, hardware, catalog, other_rows);
  if (!a["mesh-spread-from"].as<std::string>().empty() &&
      std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r.mesh() != rows.front().mesh(); }))
    throw InputError({}, 0, "mesh-spread-from",
                     "the rows of " + hardware + " hold several meshes: their own leave-one-mesh-out spread is used");
  const auto hw = catalog.hardware(hardware);
  // The rows say which implementation was measured (an impl column); --impl must agree.
  std::string measured;
  for (const auto& r : rows) {
    if (r.impl.empty()) continue;
    if (!measured.empty() && r.impl != measured)
      throw InputError(path, r.line, "impl", "rows of " + hardware + " measure both " + measured + " and " + r.impl);
    measured = r.impl;
  }
  if (!measured.empty() && !a["impl"].as<std::string>().empty() && a["impl"].as<std::string>() != measured)
    throw InputError(path, 0, "impl", "the rows measure " + measured + ", not --impl " + a["impl"].as<std::string>());
  const auto base = base_profile(a, catalog, hw, measured);
  std::vector<std::string> free;
  for (auto& name : models::split(a["free"].as<std::string>(), ','))
    if (!name.empty()) free.push_back(std::move(name));
  if (free.empty()) throw InputError({}, 0, "free", "no free parameters named");
  for (const auto& f : free) (void)calibration::find_parameter(f);
  if (rows.size() < free.size())
    throw InputError(path, 0, "rows",
                     fmt::format("{} rows of {} for {} free parameters", rows.size(), hardware, free.size()));
  const auto engine_name = one_of(a, "engine", {"analytic", "des"});
  calibration::ScenarioPredictor step_time{models::Catalog(catalog),
                                           engine_name == "des" ? calibration::Engine::Des : calibration::Engine::Analytic};
  const calibration::StepPredictor predictor = [&](const models::ScenarioSpec& s, const models::Profile& p) {
    return step_time(s, p);
  };
  const std::string engine_label = engine_name == "des" ? "discrete-event simulator" : "analytic predictor";
  calibration::SpeedupCalibration c;
  try {
    c = calibration::calibrate_speedups(rows, base, free, predictor);
  } catch (const InputError& e) {
    throw InputError(path, e.line(), e.field(), e.message());
  }
  const auto& f = c.fit;
  std::string out = fmt::format("ringsim calibrate: {} rows of {} from {}; {}; {} free parameters\n", rows.size(),
                                hardware, path, engine_label, free.size());
  std::string notes = "Free parameters (fitted, bounds): ";
  describe_fit(c.free, f, 22, out, notes);
  const auto cv_text = [](const calibration::CrossValidation& cv) {
    return cv.available ? fmt::format("{:.4f}", cv.mae) : std::string("n/a (one group)");
  };
  out += fmt::format("residual MAE {:.4f}, max |error| {:.4f}, R^2 {:.3f}\n", f.mae, f.residuals.cwiseAbs().maxCoeff(),
                     f.r_squared);
  out += fmt::format("leave-one-mesh-out MAE {}; leave-one-n_seq-out MAE {}\n", cv_text(c.by_mesh), cv_text(c.by_length));
  notes += fmt::format(". Other parameters are {}'s values ({}). Residual MAE {:.4f} (R^2 {:.3f}) over {} rows; "
                       "leave-one-mesh-out MAE {}; leave-one-n_seq-out MAE {}. Speedup = ring step / striped step of "
                       "the {}.",
                       base.name, base.provenance.method, f.mae, f.r_squared, rows.size(), cv_text(c.by_mesh),
                       cv_text(c.by_length), engine_label);
  models::Profile p = c.profile;
  p.version = base.version + 1;
  p.provenance.calibrated = true;
  p.provenance.method = "fit to published speedups (bounded Levenberg-Marquardt, " + engine_label + ")";
  p.provenance.fitted_from = path;
  p.provenance.date = date_option(a);
  p.provenance.residual = f.mae;
  // A refit replaces the previous fit's account (from "Free parameters" on) and keeps the rest.
  std::string base_notes = base.provenance.notes;
  if (const auto cut = base_notes.find("Free parameters (fitted, bounds):"); cut != std::string::npos)
    base_notes = std::string(models::trim(base_notes.substr(0, cut)));
  p.provenance.notes = base_notes.empty() ? notes : base_notes + " " + notes;
  // Intervals: the fitted parameters' covariance, and the spread of the held-out speedups (log).
  p.uncertainty = parameter_uncertainty(c.free, f);
  // The spread: held-out residuals grouped by what a user changes (calibration/speedup_spread.hpp).
  const auto spread = calibration::speedup_spread(rows, c);
  double ratio_sd = spread.held_out_log_sd;
  if (std::isfinite(spread.mesh_log_sd)) {
    p.uncertainty.residual_log_sd["ratio_mesh"] = spread.mesh_log_sd;
    out += fmt::format("held-out log spread {:.4f} over {} points; leave-one-mesh-out alone {:.4f} over {}\n",
                       spread.held_out_log_sd, spread.held_out_points, spread.mesh_log_sd, spread.mesh_points);
  } else if (std::isfinite(ratio_sd)) {
    out += fmt::format("held-out log spread {:.4f} over {} points (no mesh held out)\n", ratio_sd, spread.held_out_points);
  }
  if (std::isfinite(spread.mesh_coverage))
    out += fmt::format("90 % intervals of each held-out mesh, spread from the other meshes only, cover {} of {} points "
                       "({:.1f}%)\n",
                       spread.mesh_covered, spread.mesh_points, 100 * spread.mesh_coverage);
  // One mesh: its own spread holds no change of mesh, which a user of another mesh makes. The
  // spread a mesh change made where several were measured (--mesh-spread-from) is added.
  if (const auto src = a["mesh-spread-from"].as<std::string>(); !src.empty()) {
    const auto sp = catalog.profile(src, hw, c.profile.implementation);
    const auto m = sp.uncertainty.residual_log_sd.find("ratio_mesh");
    if (m == sp.uncertainty.residual_log_sd.end())
      throw InputError({}, 0, "mesh-spread-from", "profile " + sp.name + " measured no leave-one-mesh-out spread (ratio_mesh)");
    ratio_sd = calibration::combine_spread(ratio_sd, m->second);
    out += fmt::format("one mesh: a change of mesh adds {}'s leave-one-mesh-out spread {:.4f} in quadrature: {:.4f}\n",
                       sp.name, m->second, ratio_sd);
    p.provenance.notes += fmt::format(" These rows hold one mesh: the interval adds {}'s leave-one-mesh-out spread ({:.4f}, "
                                      "log) in quadrature.",
                                      sp.name, m->second);
  }
  if (std::isfinite(ratio_sd)) {
    p.uncertainty.residual_log_sd["ratio"] = ratio_sd;
    p.uncertainty.held_out_points = spread.held_out_points;
  }
  // Derived profiles copy these free parameters: the other fitted hardware's rows under them say
  // what that costs (its interval, ratio_derived).
  {
    // The other hardware's rows of the same implementation, in the file's order of hardware.
    std::vector<std::pair<std::string, std::vector<calibration::SpeedupRow>>> others;
    for (const auto& r : other_rows) {
      if (!r.impl.empty() && r.impl != measured) continue;
      auto it = std::find_if(others.begin(), others.end(), [&](const auto& o) { return o.first == r.hardware; });
      if (it == others.end()) it = others.insert(others.end(), {r.hardware, {}});
      it->second.push_back(r);
    }
    double sq = 0;
    std::int64_t n = 0;
    for (const auto& [h, mine] : others) {
      const auto target = catalog.profile({}, catalog.hardware(h), c.profile.implementation);
      // Only a fitted profile says what copying costs; spec defaults would add their own error.
      if (!target.provenance.calibrated) continue;
      const auto score = calibration::predict_with_copied(mine, target, c.profile, free, predictor);
      if (score.rows == 0) continue;
      out += fmt::format("derived (these free parameters on {}'s profile {}, as --derive-from copies them): MAE {:.4f}, log "
                         "spread {:.4f} over {} rows\n",
                         h, target.name, score.mae, score.log_sd, score.rows);
      sq += score.log_sd * score.log_sd * static_cast<double>(score.rows);
      n += score.rows;
    }
    if (n > 0) p.uncertainty.residual_log_sd["ratio_derived"] = std::sqrt(sq / static_cast<double>(n));
  }
  if (const auto o = a["output"].as<std::string>(); !o.empty()) write_output(o, p.to_json().dump(2) + "\n");

  if (const auto rpt = a["report"].as<std::string>(); !rpt.empty()) {
    std::string csv = csv_line({"hardware", "model", "mp", "sp", "n_seq", "tms", "speedup", "pred_speedup", "error",
                                "held_out_mesh", "held_out_n_seq"});
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      const double pr = f.predicted[static_cast<Eigen::Index>(i)];
      auto opt = [](double v) { return std::isfinite(v) ? fmt::format("{:.4f}", v) : std::string(); };
      csv += csv_line({r.hardware, r.model, std::to_string(r.mp), std::to_string(r.sp), std::to_string(r.n_seq),
                       opt(r.tms), fmt::format("{:.2f}", r.speedup), fmt::format("{:.4f}", pr),
                       fmt::format("{:+.4f}", pr - r.speedup), opt(c.by_mesh.held_out_predicted[i]),
                       opt(c.by_length.held_out_predicted[i])});
    }
    write_output(rpt, csv);
  }
  if (const auto svg = a["plot"].as<std::string>(); !svg.empty()) {
    std::map<std::string, calibration::PlotSeries> by_mesh;
    std::vector<std::string> order;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto key = fmt::format("{} {}x{}", rows[i].model, rows[i].mp, rows[i].sp);
      if (!by_mesh.count(key)) order.push_back(key);
      auto& s = by_mesh[key];
      s.label = key;
      s.x.push_back(static_cast<double>(rows[i].n_seq));
      s.predicted.push_back(f.predicted[static_cast<Eigen::Index>(i)]);
      s.measured.push_back(rows[i].speedup);
    }
    std::vector<calibration::PlotSeries> series;
    for (const auto& k : order) series.push_back(by_mesh[k]);
    write_output(svg, calibration::svg_chart(fmt::format("Striped over Ring speedup, {} (mp x sp)", hardware),
                                             "n_seq (tokens, log scale)", "speedup", series));
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
