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

std::vector<calibration::SpeedupRow> read_speedups(const std::string& path, const std::string& hardware,
                                                   const models::Catalog& catalog) {
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
    if (hw != hardware) {
      if (std::find(seen.begin(), seen.end(), hw) == seen.end()) seen.push_back(hw);
      continue;
    }
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
    rows.push_back(row);
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
  const auto rows = read_speedups(path, hardware, catalog);
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
  p.uncertainty = {};
  for (std::size_t k = 0; k < c.free.size(); ++k) p.uncertainty.parameters.push_back(c.free[k].name);
  p.uncertainty.covariance.assign(c.free.size(), std::vector<double>(c.free.size(), 0.0));
  for (std::size_t i = 0; i < c.free.size(); ++i)
    for (std::size_t j = 0; j < c.free.size(); ++j)
      p.uncertainty.covariance[i][j] = f.covariance(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
  double sq = 0;
  std::int64_t held = 0;
  for (const auto* cv : {&c.by_mesh, &c.by_length})
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (cv->available && std::isfinite(cv->held_out_predicted[i])) {
        const double e = std::log(cv->held_out_predicted[i] / rows[i].speedup);
        sq += e * e;
        ++held;
      }
  if (held > 0) {
    p.uncertainty.residual_log_sd["ratio"] = std::sqrt(sq / static_cast<double>(held));
    p.uncertainty.held_out_points = held;
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
