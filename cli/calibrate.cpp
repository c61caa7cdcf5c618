// `ringsim calibrate`: fit a Profile to published speedups (--from-speedups) or to measured
// kernel launches (--from-timings, docs/timings-format.md) and write it as versioned JSON.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/attention_times.hpp"
#include "calibration/plot.hpp"
#include "calibration/scfa.hpp"
#include "calibration/tables.hpp"
#include "calibration/timings.hpp"
#include "cli/calibrate_probes.hpp"
#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/scenario_options.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/analytic/interval.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

std::string today() {
  const auto now = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  const std::chrono::year_month_day ymd{now};
  return fmt::format("{:04d}-{:02d}-{:02d}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

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

std::string fmt_se(double se) {
  return std::isfinite(se) ? fmt::format("{:.3g}", se) : "n/a (on a bound, or not identified by these rows)";
}

// One line per fitted parameter for the report, and the same compactly for the provenance.
void describe_fit(const std::vector<calibration::FreeParameter>& params, const calibration::FitResult& f,
                  std::size_t name_width, std::string& out, std::string& notes) {
  for (std::size_t k = 0; k < params.size(); ++k) {
    const auto& p = params[k];
    const double v = f.params[static_cast<Eigen::Index>(k)];
    const double se = f.std_errors[static_cast<Eigen::Index>(k)];
    out += fmt::format("  {:<{}} = {:.4g}  (std error {}, bounds [{:g}, {:g}]): {}\n", p.name, name_width, v, fmt_se(se),
                       p.lower, p.upper, p.meaning);
    notes += fmt::format("{}{} = {:.4g} +- {} in [{:g}, {:g}]", k ? "; " : "", p.name, v, fmt_se(se), p.lower, p.upper);
  }
}

// The base profile of a fit: profiles are keyed by (hardware, implementation); the implementation
// is --impl, else the one the --profile reference names, else `fallback_layouts`' default.
models::Profile base_profile(const cxxopts::ParseResult& a, const models::Catalog& catalog, const models::Hardware& hw,
                             const std::string& fallback_impl) {
  models::ScenarioSpec spec;
  spec.impl = a["impl"].as<std::string>().empty() ? fallback_impl : a["impl"].as<std::string>();
  spec.profile = a["profile"].as<std::string>();
  const auto impl = catalog.choose_implementation(spec, hw, {"contiguous", "striped"});
  return catalog.profile(spec.profile, hw, impl);
}

int from_speedups(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
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
  p.provenance.date = a["date"].as<std::string>().empty() ? today() : a["date"].as<std::string>();
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

std::vector<calibration::KernelTiming> read_timings(const std::string& path) {
  const CsvTable t = read_csv(path);
  const auto c_kernel = t.require_column("kernel");
  const auto c_dtype = t.require_column("dtype");
  const auto c_hd = t.require_column("head_dim");
  const auto c_heads = t.require_column("heads");
  const auto c_batch = t.require_column("batch");
  const auto c_tiles = t.require_column("tiles_visited");
  const auto c_area = t.require_column("visited_area");
  const auto c_masked = t.require_column("masked_area");
  const auto c_dur = t.require_column("duration_s");
  std::vector<calibration::KernelTiming> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto line = t.lines[i];
    calibration::KernelTiming k;
    k.kernel = t.text_or(i, c_kernel, "");
    k.precision = t.parsed(i, c_dtype, [](std::string_view v) { return models::parse_precision(models::trim(v)); });
    k.head_dim = t.positive_int(i, c_hd);
    k.heads = t.positive_int(i, c_heads);
    k.batch = t.positive_int(i, c_batch);
    k.tiles_visited = t.positive_int(i, c_tiles);
    k.visited_area = t.positive_int(i, c_area);
    const double masked = t.number(i, c_masked);
    if (masked < 0 || masked > static_cast<double>(k.visited_area))
      throw InputError(path, line, "masked_area", "expected a value in [0, visited_area]");
    k.masked_area = static_cast<std::int64_t>(masked);
    k.duration_s = t.number(i, c_dur);
    if (k.duration_s <= 0) throw InputError(path, line, "duration_s", "expected a positive duration");
    k.line = line;
    rows.push_back(k);
  }
  return rows;
}

int from_timings(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
  const auto path = a["from-timings"].as<std::string>();
  const auto hardware = a["hardware"].as<std::string>();
  if (hardware.empty()) throw InputError({}, 0, "hardware", "--from-timings needs --hardware (for the peak FLOP/s)");
  const auto hw = catalog.hardware(hardware);
  // Kernel timings are of ringsim's own kernel unless --impl says whose.
  const auto base = base_profile(a, catalog, hw, "ringsim-tiles");
  const auto rows = read_timings(path);
  calibration::TimingCalibration c;
  try {
    c = calibration::calibrate_timings(rows, hw, base);
  } catch (const InputError& e) {
    throw InputError(path, e.line(), e.field(), e.message());
  }
  std::string out = fmt::format("ringsim calibrate: {} kernel timings from {} on {}\n", rows.size(), path, hardware);
  out += fmt::format("R^2 {:.4f}; relative MAE {:.4f}; {}-fold held-out relative MAE {:.4f}\n", c.r_squared, c.fit.mae,
                     c.folds, c.held_out_mae);
  std::string notes = "Tile-time model fitted to kernel timings: ";
  for (const auto& t : c.terms) {
    const auto without = std::isfinite(t.held_out_without) ? fmt::format("{:.4f}", t.held_out_without) : std::string("-");
    out += fmt::format("  {:<22} = {:.4g}  (std error {}); held-out relative MAE without it: {}\n", t.term, t.value,
                       fmt_se(t.std_error), without);
    notes += fmt::format("{} = {:.4g} (held-out MAE without it {}); ", t.term, t.value, without);
  }
  notes += fmt::format("R^2 {:.4f}, {}-fold held-out relative MAE {:.4f}. launch_overhead_s is per kernel launch and "
                       "has no Profile field.",
                       c.r_squared, c.folds, c.held_out_mae);
  models::Profile p = c.profile;
  p.version = base.version + 1;
  p.provenance.calibrated = true;
  p.provenance.method = "fit to kernel timings (bounded Levenberg-Marquardt)";
  p.provenance.fitted_from = path;
  p.provenance.date = a["date"].as<std::string>().empty() ? today() : a["date"].as<std::string>();
  p.provenance.residual = c.fit.mae;
  p.provenance.notes = notes;
  if (const auto o = a["output"].as<std::string>(); !o.empty()) write_output(o, p.to_json().dump(2) + "\n");
  std::fputs(out.c_str(), stdout);
  return 0;
}

int from_scfa(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
  const auto path = a["from-scfa"].as<std::string>();
  calibration::ScfaSetting setting;
  if (const auto h = a["hardware"].as<std::string>(); !h.empty()) setting.hardware = h;
  const auto hw = catalog.hardware(setting.hardware);
  const auto base = base_profile(a, catalog, hw, "scfa");
  const CsvTable t = read_csv(path);
  const auto rows = calibration::scfa_rows(path, t.header, t.rows, t.lines);
  std::vector<std::string> free;
  // --free's default names the striped-speedup parameters; this fit has its own default.
  if (a.count("free")) {
    for (auto& name : models::split(a["free"].as<std::string>(), ','))
      if (!name.empty()) free.push_back(std::move(name));
  } else {
    free = calibration::scfa_default_free();
  }
  if (free.empty()) throw InputError({}, 0, "free", "no free parameters named");
  for (const auto& f : free) (void)calibration::find_parameter(f);
  calibration::ScfaCalibration c;
  try {
    c = calibration::calibrate_scfa(rows, base, free, calibration::analytic_scfa_predictor(catalog, setting));
  } catch (const InputError& e) {
    throw InputError(path, e.line(), e.field(), e.message());
  }
  const auto& f = c.fit;
  std::string out = fmt::format("ringsim calibrate: {} SCFA rows from {} on {} ({}, batch {}, tile {}x{}, mesh 1x1); "
                                "fit of log(forward+backward time)\n",
                                rows.size(), path, setting.hardware, setting.model, setting.batch, setting.tile.q,
                                setting.tile.k);
  std::string notes = "Free parameters (fitted, bounds): ";
  describe_fit(c.free, f, 30, out, notes);
  double max_rel = 0, mean_rel = 0;
  out += fmt::format("{:<6} {:<9} {:>7} {:>10} {:>10} {:>9}\n", "method", "param", "n_seq", "ms", "pred ms", "error");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    out += fmt::format("{:<6} {:<9} {:>7} {:>10.1f} {:>10.1f} {:>+8.1f}%\n", r.method, r.param, r.n_seq, r.ms,
                       c.predicted_ms[i], 100 * c.relative_error[i]);
    max_rel = std::max(max_rel, std::abs(c.relative_error[i]));
    mean_rel += std::abs(c.relative_error[i]) / static_cast<double>(rows.size());
  }
  out += fmt::format("mean |relative error| {:.2f}%, max {:.2f}%\n", 100 * mean_rel, 100 * max_rel);
  notes += fmt::format(". Other parameters are {}'s values ({}); sparse_prep_bytes_per_element {:g} and "
                       "hash_sort_bytes_per_token {:g} are physical defaults, not fitted (the sparse rows are all at "
                       "one length, so a linear overhead and the kernel efficiency cannot both be identified). Mean "
                       "|relative error| {:.4f}, max {:.4f} over {} rows (forward+backward times).",
                       base.name, base.provenance.method, c.profile.sparse_prep_bytes_per_element,
                       c.profile.hash_sort_bytes_per_token, mean_rel, max_rel, rows.size());
  models::Profile p = c.profile;
  p.validate(path);
  if (const auto name = a["name"].as<std::string>(); !name.empty()) p.name = name;
  p.version = base.version + 1;
  p.provenance.calibrated = true;
  p.provenance.method = "fit to published SCFA and FlashAttention-1 times (bounded Levenberg-Marquardt, analytic predictor)";
  p.provenance.fitted_from = path;
  p.provenance.date = a["date"].as<std::string>().empty() ? today() : a["date"].as<std::string>();
  p.provenance.residual = mean_rel;
  p.provenance.notes = notes;
  if (const auto o = a["output"].as<std::string>(); !o.empty()) write_output(o, p.to_json().dump(2) + "\n");
  if (const auto rpt = a["report"].as<std::string>(); !rpt.empty()) {
    std::string csv = csv_line({"method", "param", "mask", "n_seq", "ms", "pred_ms", "relative_error"});
    for (std::size_t i = 0; i < rows.size(); ++i)
      csv += csv_line({rows[i].method, rows[i].param, rows[i].mask, std::to_string(rows[i].n_seq),
                       fmt::format("{:g}", rows[i].ms), fmt::format("{:.2f}", c.predicted_ms[i]),
                       fmt::format("{:+.4f}", c.relative_error[i])});
    write_output(rpt, csv);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

std::vector<std::string> names_in(const cxxopts::ParseResult& a, const char* key) {
  std::vector<std::string> out;
  for (auto& n : models::split(a[key].as<std::string>(), ','))
    if (!n.empty()) {
      try {
        (void)calibration::find_parameter(n);
      } catch (const InputError& e) {
        throw InputError({}, 0, key, e.message());
      }
      out.push_back(std::move(n));
    }
  return out;
}

// Joint fit of a flash-attention ring library's profiles to published attention times
// (data/cp_attention_times.csv), with leave-one-group-out errors and intervals.
int from_times(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
  const auto path = a["from-times"].as<std::string>();
  const CsvTable t = read_csv(path);
  auto rows = calibration::time_rows(path, t.header, t.rows, t.lines);
  // The implementations fitted together (they call the same kernel): --impl A,B, default the first row's.
  std::vector<std::string> impls;
  for (const auto& n : models::split(a["impl"].as<std::string>(), ','))
    if (!n.empty()) impls.push_back(catalog.implementation(n).name);
  if (impls.empty()) impls.push_back(rows.front().impl);
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const calibration::TimeRow& r) {
                              return std::find(impls.begin(), impls.end(), r.impl) == impls.end();
                            }),
             rows.end());
  const std::string impl = fmt::format("{}", fmt::join(impls, ", "));
  if (rows.empty()) throw InputError(path, 0, "impl", "no rows for implementation(s) " + impl);
  // Every fit starts from the GPUs' spec defaults, not from a profile file an earlier fit wrote:
  // the result depends on the data and the free parameters only. The message dtypes are each
  // implementation's protocol's.
  calibration::TimeFitSetup setup;
  for (const auto& r : rows)
    if (!setup.base.count(r.hardware)) {
      const auto hw = catalog.hardware(r.hardware);
      auto base = models::Profile::spec_default(hw);
      base.implementation = r.impl;
      base.name = r.impl + "/" + hw.name;
      setup.base.emplace(r.hardware, base);
    }
  setup.per_hardware = names_in(a, "free");
  setup.shared = names_in(a, "shared");
  setup.shared_cycles = names_in(a, "shared-cycles");
  setup.options.extra_starts = 6;
  setup.options.max_iterations = 100;
  setup.options.tolerance = 1e-10;
  if (setup.per_hardware.empty() && setup.shared.empty() && setup.shared_cycles.empty())
    throw InputError({}, 0, "free", "no free parameters named");
  calibration::TimePredictor predictor{models::Catalog(catalog)};
  calibration::TimeFit fit;
  try {
    fit = calibration::fit_times(rows, setup, predictor);
  } catch (const InputError& e) {
    throw InputError(path, e.line(), e.field(), e.message());
  }
  std::string out = fmt::format("ringsim calibrate: {} rows of {} from {} (log-time fit, analytic predictor)\n",
                                rows.size(), impl, path);
  std::string fitted;
  for (std::size_t k = 0; k < fit.params.size(); ++k) {
    const double v = fit.fit.params[static_cast<Eigen::Index>(k)];
    const double se = fit.fit.std_errors[static_cast<Eigen::Index>(k)];
    out += fmt::format("  {:<44} = {:.5g}  (std error {})\n", fit.params[k].label(), v, fmt_se(se));
    fitted += fmt::format("{}{} = {:.4g} +- {}", k ? "; " : "", fit.params[k].label(), v, fmt_se(se));
  }
  const auto ratios = calibration::layout_ratios(rows);
  double fit_t = 0, fit_r = 0;
  std::int64_t n_t = 0;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (!rows[i].single()) {
      fit_t += std::abs(fit.predicted[i] / rows[i].seconds - 1);
      ++n_t;
    }
  for (const auto& r : ratios) fit_r += std::abs(fit.predicted[r.contiguous] / fit.predicted[r.other] / r.measured - 1);
  out += fmt::format("in-sample (fitted rows, not a test): ring-row time MAPE {:.1f}%, layout-ratio MAPE {:.1f}%\n",
                     100 * fit_t / std::max<std::int64_t>(1, n_t), 100 * fit_r / std::max<std::size_t>(1, ratios.size()));
  // Leave-one-group-out: the scores that count, and the residual spread the intervals use.
  std::vector<calibration::HeldOut> held;
  std::vector<double> log_t, log_r;
  if (!a.count("no-logo")) {
    for (const char* by : {"hardware", "table", "heads"}) {
      held.push_back(calibration::leave_one_group_out(rows, setup, predictor, by));
      const auto& h = held.back();
      out += fmt::format("leave-one-{}-out: time MAPE {:.1f}% ({} points), ratio MAPE {:.1f}% ({} ratios)\n", by,
                         100 * h.all.time_mape, h.all.time_points, 100 * h.all.ratio_mape, h.all.ratio_points);
      for (const auto& g : h.groups)
        out += fmt::format("    {:<20} time {:5.1f}% ({:2}), ratio {:5.1f}% ({:2})\n", g.group, 100 * g.time_mape,
                           g.time_points, 100 * g.ratio_mape, g.ratio_points);
      for (std::size_t i = 0; i < rows.size(); ++i)
        if (std::isfinite(h.predicted[i])) log_t.push_back(std::log(h.predicted[i] / rows[i].seconds));
      for (const auto& r : ratios)
        if (std::isfinite(h.predicted[r.contiguous]) && std::isfinite(h.predicted[r.other]))
          log_r.push_back(std::log(h.predicted[r.contiguous] / h.predicted[r.other] / r.measured));
    }
  }
  auto rms = [](const std::vector<double>& v) {
    double s = 0;
    for (const double x : v) s += x * x;
    return v.empty() ? 0.0 : std::sqrt(s / static_cast<double>(v.size()));
  };
  const double sd_t = rms(log_t), sd_r = rms(log_r);
  if (!held.empty())
    out += fmt::format("held-out log residual spread (intervals): time {:.4f}, ratio {:.4f} over {} / {} points\n", sd_t,
                       sd_r, log_t.size(), log_r.size());
  // Each row's 90 % interval around the full fit, and whether the same relative interval around
  // each held-out prediction covers the measurement (the coverage the intervals are judged by).
  std::map<std::string, models::Profile> with_uncertainty;
  for (const auto& [hw, prof] : fit.profiles) {
    auto q = prof;
    calibration::fill_uncertainty(fit, hw, q);
    if (!held.empty()) {
      q.uncertainty.residual_log_sd["time"] = sd_t;
      q.uncertainty.residual_log_sd["ratio"] = sd_r;
    }
    with_uncertainty.emplace(hw, q);
  }
  std::vector<models::Interval> band(rows.size());
  std::int64_t covered = 0, scored = 0;
  if (!held.empty()) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& q = with_uncertainty.at(rows[i].hardware);
      band[i] = models::prediction_interval(q, "time", fit.predicted[i],
                                            [&](const models::Profile& pp) { return predictor(rows[i], pp); });
      if (!band[i].available) continue;
      for (const auto& h : held) {
        if (!std::isfinite(h.predicted[i])) continue;
        const double k = h.predicted[i] / fit.predicted[i];
        covered += rows[i].seconds >= band[i].lo * k && rows[i].seconds <= band[i].hi * k;
        ++scored;
      }
    }
    out += fmt::format("90 % intervals around the held-out predictions cover {:.1f}% of the {} leave-one-group-out "
                       "points\n",
                       100.0 * static_cast<double>(covered) / static_cast<double>(std::max<std::int64_t>(1, scored)), scored);
  }
  const auto date = a["date"].as<std::string>().empty() ? today() : a["date"].as<std::string>();
  if (const auto dir = a["profiles-dir"].as<std::string>(); !dir.empty()) {
    std::string groups;
    for (const auto& h : held)
      groups += fmt::format("; leave-one-{}-out time MAPE {:.1f}%, ratio MAPE {:.1f}%", h.by, 100 * h.all.time_mape,
                            100 * h.all.ratio_mape);
    std::vector<std::string> gpus;
    for (const auto& [h2, _] : fit.profiles) gpus.push_back(h2);
    // One profile per (implementation, GPU) with rows: the GPU's fitted parameters are shared by
    // the implementations fitted together.
    std::set<std::pair<std::string, std::string>> written;
    for (const auto& r : rows) {
      if (!written.insert({r.impl, r.hardware}).second) continue;
      auto p = fit.profiles.at(r.hardware);
      const auto& hw = r.hardware;
      p.name = r.impl + "/" + hw;
      p.hardware = hw;
      p.implementation = r.impl;
      p.version = setup.base.at(hw).version + 1;
      p.provenance.calibrated = true;
      p.provenance.method = "joint fit to published attention times (bounded Levenberg-Marquardt on log time, analytic predictor)";
      p.provenance.fitted_from = path;
      p.provenance.date = date;
      p.provenance.residual = fit.fit.mae;
      p.provenance.notes = fmt::format("Fitted jointly over {} rows of {} ({}): {}{}.", rows.size(), impl,
                                       fmt::join(gpus, ", "), fitted, groups);
      calibration::fill_uncertainty(fit, hw, p);
      if (!held.empty()) {
        p.uncertainty.residual_log_sd["time"] = sd_t;
        p.uncertainty.residual_log_sd["ratio"] = sd_r;
        p.uncertainty.held_out_points = static_cast<std::int64_t>(log_t.size());
      }
      p.validate(path);
      std::filesystem::create_directories(dir + "/" + r.impl);
      write_output(dir + "/" + r.impl + "/" + hw + ".json", p.to_json().dump(2) + "\n");
    }
  }
  if (const auto rpt = a["report"].as<std::string>(); !rpt.empty()) {
    std::vector<std::string> head = {"table", "hardware", "impl", "cp", "layout", "pass", "heads", "batch", "sp", "n_seq", "packing",
                                     "seconds", "fitted_s", "fitted_s_lo", "fitted_s_hi"};
    for (const auto& h : held) head.push_back("held_out_" + h.by + "_s");
    std::string csv = csv_line(head);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      std::vector<std::string> v = {r.table, r.hardware, r.impl, r.cp, r.layout, r.pass, r.heads_key(), std::to_string(r.batch),
                                    std::to_string(r.sp), std::to_string(r.n_seq), r.packing,
                                    fmt::format("{:.6g}", r.seconds), fmt::format("{:.6g}", fit.predicted[i]),
                                    band[i].available ? fmt::format("{:.6g}", band[i].lo) : std::string(),
                                    band[i].available ? fmt::format("{:.6g}", band[i].hi) : std::string()};
      for (const auto& h : held)
        v.push_back(std::isfinite(h.predicted[i]) ? fmt::format("{:.6g}", h.predicted[i]) : std::string());
      csv += csv_line(v);
    }
    write_output(rpt, csv);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

// A profile for hardware without measurements: the implementation's fitted parameters copied
// from another hardware's profile (cycle-counted ones rescaled by the SM clocks), everything
// hardware-derived from the target's specs; marked uncalibrated.
int derive(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
  const auto source_ref = a["derive-from"].as<std::string>();
  const auto hardware = a["hardware"].as<std::string>();
  if (hardware.empty()) throw InputError({}, 0, "hardware", "--derive-from needs --hardware (the target)");
  const auto source_impl = catalog.profile_implementation(source_ref);
  if (!source_impl)
    throw InputError({}, 0, "derive-from", "expected IMPL/HARDWARE or a profile file naming its implementation");
  // Another implementation may borrow what runs the same kernel (te-p2p's FlashAttention-2 calls).
  const std::optional<std::string> impl =
      a["impl"].as<std::string>().empty() ? *source_impl : catalog.implementation(a["impl"].as<std::string>()).name;
  const auto source_hw_name = catalog.profile(source_ref, catalog.hardware(hardware), *source_impl).hardware;
  const auto source_hw = catalog.hardware(source_hw_name);
  const auto source = catalog.profile(source_ref, source_hw, *source_impl);
  const auto target_hw = catalog.hardware(hardware);
  models::Profile p = catalog.profile("", target_hw, *impl);
  // Start from the target's spec defaults, not a profile file it may already have.
  {
    models::Profile spec = models::Profile::spec_default(target_hw);
    spec.kv_wire_bytes = p.kv_wire_bytes;
    spec.dkv_wire_bytes = p.dkv_wire_bytes;
    p = spec;
  }
  p.name = *impl + "/" + hardware;
  p.hardware = hardware;
  p.implementation = *impl;
  p.version = source.version;
  p.attention_precision = source.attention_precision;
  p.matmul_precision = source.matmul_precision;
  p.recompute = source.recompute;
  p.default_tile = source.default_tile;
  if (*impl == *source_impl) {  // else the target's own messages (its code) decide the dtypes
    p.kv_wire_bytes = source.kv_wire_bytes;
    p.dkv_wire_bytes = source.dkv_wire_bytes;
  }
  std::string kept;
  for (const auto& n : names_in(a, "keep")) {
    calibration::set_parameter(p, n, calibration::get_parameter(source, n));
    kept += (kept.empty() ? "" : ", ") + n;
  }
  for (const auto& n : names_in(a, "keep-cycles")) {
    if (!(source_hw.sm_clock_hz > 0 && target_hw.sm_clock_hz > 0))
      throw InputError({}, 0, "keep-cycles", "both GPUs need an SM clock (compute_units.sm_clock_hz)");
    calibration::set_parameter(p, n, calibration::get_parameter(source, n) * source_hw.sm_clock_hz / target_hw.sm_clock_hz);
    kept += (kept.empty() ? "" : ", ") + n + " (same cycles)";
  }
  p.validate(source_ref);
  p.provenance.calibrated = false;
  p.provenance.method = "derived from " + source.name + " (no measurements on " + hardware + ")";
  p.provenance.fitted_from = source.provenance.fitted_from;
  p.provenance.date = a["date"].as<std::string>().empty() ? today() : a["date"].as<std::string>();
  p.provenance.residual.reset();
  p.provenance.notes = fmt::format(
      "uncalibrated: no published measurement of {} on {} was handed over. Copied from {} ({}): {}; precisions, "
      "tiles and recompute likewise (wire dtypes too when the implementation is the same). Everything hardware-derived (peak FLOP/s, memory and link "
      "bandwidths and latencies, SMs and clock) comes from configs/hardware/{}.json. {}",
      *impl, hardware, source.name, source.provenance.method, kept.empty() ? "nothing else" : kept, hardware,
      a["note"].as<std::string>());
  p.uncertainty = {};
  const auto o = a["output"].as<std::string>();
  if (o.empty()) throw InputError({}, 0, "output", "--derive-from needs -o FILE");
  write_output(o, p.to_json().dump(2) + "\n");
  std::fputs(fmt::format("ringsim calibrate: {} derived from {} ({})\n", p.name, source.name, kept).c_str(), stdout);
  return 0;
}

}  // namespace

int run_calibrate(int argc, char** argv) {
  cxxopts::Options o("ringsim calibrate", "Fit a profile to published speedups or to kernel timings");
  o.add_options()("from-scfa", "CSV of published SCFA/FlashAttention times: method,param,n_seq,ms (data/scfa_calibration.csv)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("name", "name of the fitted profile (default: the base profile's)", cxxopts::value<std::string>()->default_value(""))
                 ("from-speedups", "CSV with hardware,model,mp,sp,n_seq,speedup[,tms]", cxxopts::value<std::string>()->default_value(""))
                 ("from-timings", "kernel timings CSV (docs/timings-format.md)", cxxopts::value<std::string>()->default_value(""))
                 ("from-times", "published attention times of a ring library (data/cp_attention_times.csv): joint fit over its GPUs",
                  cxxopts::value<std::string>()->default_value(""))
                 ("shared", "--from-times: parameters shared by all GPUs (host costs)", cxxopts::value<std::string>()->default_value(""))
                 ("shared-cycles", "--from-times: parameters shared by all GPUs, counted in SM cycles", cxxopts::value<std::string>()->default_value(""))
                 ("profiles-dir", "--from-times: write one fitted profile per implementation and GPU here (DIR/IMPL/HARDWARE.json)", cxxopts::value<std::string>()->default_value(""))
                 ("no-logo", "--from-times: skip the leave-one-group-out refits")
                 ("from-probes", "NCCL point-to-point probes (data/components/links/): fit each hop type's latency and bandwidth",
                  cxxopts::value<std::string>()->default_value(""))
                 ("as", "--from-probes: PROBE=HARDWARE,...: the catalog GPU of each probed one (by the prefix of its name)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("links-dir", "--from-probes: write HARDWARE.json per GPU here (configs/links)", cxxopts::value<std::string>()->default_value(""))
                 ("derive-from", "a profile (IMPL/HARDWARE) to derive an uncalibrated profile for --hardware from", cxxopts::value<std::string>()->default_value(""))
                 ("keep", "--derive-from: parameters copied as they are", cxxopts::value<std::string>()->default_value(""))
                 ("keep-cycles", "--derive-from: parameters copied as SM cycles (rescaled by the clocks)", cxxopts::value<std::string>()->default_value(""))
                 ("note", "--derive-from: a sentence for the provenance notes", cxxopts::value<std::string>()->default_value(""))
                 ("hardware", "hardware name: rows to use / peak FLOP/s", cxxopts::value<std::string>()->default_value(""))
                 ("impl", "implementation the profile is for (default: the profile's, else the hardware's default for ring vs striped; scfa with --from-scfa)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("profile", "base profile (name, IMPL/NAME or path); default: the (hardware, implementation) profile", cxxopts::value<std::string>()->default_value(""))
                 ("free", "parameters to fit (speedups)", cxxopts::value<std::string>()->default_value("masked_tile_penalty,skipped_tile_cost"))
                 ("engine", "analytic | des: what predicts each step during the fit", cxxopts::value<std::string>()->default_value("analytic"))
                 ("date", "provenance date (default: today)", cxxopts::value<std::string>()->default_value(""))
                 ("o,output", "write the fitted profile JSON here (atomically)", cxxopts::value<std::string>()->default_value(""))
                 ("report", "write per-row predicted vs published CSV here", cxxopts::value<std::string>()->default_value(""))
                 ("plot", "write an SVG of speedup vs n_seq per mesh here", cxxopts::value<std::string>()->default_value(""))
                 ("h,help", "show help");
  const auto a = parse_or_throw(o, argc, argv);
  if (help_requested(o, a)) return 0;
  const bool s = !a["from-speedups"].as<std::string>().empty(), t = !a["from-timings"].as<std::string>().empty();
  const bool f = !a["from-scfa"].as<std::string>().empty();
  const bool m = !a["from-times"].as<std::string>().empty();
  const bool d = !a["derive-from"].as<std::string>().empty();
  const bool p = !a["from-probes"].as<std::string>().empty();
  if (int(s) + int(t) + int(f) + int(m) + int(d) + int(p) != 1)
    throw InputError({}, 0, "from-speedups",
                     "give exactly one of --from-speedups, --from-timings, --from-scfa, --from-times, --from-probes and "
                     "--derive-from");
  if (p) return calibrate_from_probes(a);
  const models::Catalog catalog;
  if (d) return derive(a, catalog);
  if (f) return from_scfa(a, catalog);
  if (m) return from_times(a, catalog);
  return s ? from_speedups(a, catalog) : from_timings(a, catalog);
}

}  // namespace ringsim::cli
