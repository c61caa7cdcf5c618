// `ringsim calibrate`: fit a Profile to published speedups (--from-speedups) or to measured
// kernel launches (--from-timings, docs/timings-format.md) and write it as versioned JSON.
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/plot.hpp"
#include "calibration/scfa.hpp"
#include "calibration/tables.hpp"
#include "calibration/timings.hpp"
#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/scenario_options.hpp"
#include "models/error.hpp"
#include "models/parse.hpp"

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

std::string fmt_se(double se) { return std::isfinite(se) ? fmt::format("{:.3g}", se) : "n/a (on a bound)"; }

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
  const auto base = base_profile(a, catalog, hw, "");
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
  p.provenance.notes = base.provenance.notes.empty() ? notes : base.provenance.notes + " " + notes;
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

}  // namespace

int run_calibrate(int argc, char** argv) {
  cxxopts::Options o("ringsim calibrate", "Fit a profile to published speedups or to kernel timings");
  o.add_options()("from-scfa", "CSV of published SCFA/FlashAttention times: method,param,n_seq,ms (data/scfa_calibration.csv)",
                  cxxopts::value<std::string>()->default_value(""))
                 ("name", "name of the fitted profile (default: the base profile's)", cxxopts::value<std::string>()->default_value(""))
                 ("from-speedups", "CSV with hardware,model,mp,sp,n_seq,speedup[,tms]", cxxopts::value<std::string>()->default_value(""))
                 ("from-timings", "kernel timings CSV (docs/timings-format.md)", cxxopts::value<std::string>()->default_value(""))
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
  if (int(s) + int(t) + int(f) != 1)
    throw InputError({}, 0, "from-speedups", "give exactly one of --from-speedups, --from-timings and --from-scfa");
  const models::Catalog catalog;
  if (f) return from_scfa(a, catalog);
  return s ? from_speedups(a, catalog) : from_timings(a, catalog);
}

}  // namespace ringsim::cli
