// `ringsim calibrate`: fit a Profile to published speedups (--from-speedups) or to measured
// kernel launches (--from-timings, docs/timings-format.md) and write it as versioned JSON.
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/plot.hpp"
#include "calibration/tables.hpp"
#include "calibration/timings.hpp"
#include "cli/commands.hpp"
#include "cli/csv.hpp"
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

double finite_number(const std::string& text, const std::string& file, std::int64_t line, const std::string& field) {
  const auto t = models::trim(text);
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(std::string(t), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v))
    throw InputError(file, line, field, "expected a finite number, got '" + std::string(t) + "'");
  return v;
}

std::int64_t positive_int(const std::string& text, const std::string& file, std::int64_t line, const std::string& field) {
  try {
    return models::parse_positive_int(text, field);
  } catch (const InputError& e) {
    throw InputError(file, line, field, e.message());
  }
}

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto end = s.find(',', start);
    const auto piece = std::string(models::trim(s.substr(start, end - start)));
    if (!piece.empty()) out.push_back(piece);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::vector<calibration::SpeedupRow> read_speedups(const std::string& path, const std::string& hardware,
                                                   const models::Catalog& catalog) {
  const CsvTable t = read_csv(path);
  const auto c_hw = t.require_column("hardware");
  const auto c_model = t.require_column("model");
  const auto c_mp = t.require_column("mp");
  const auto c_sp = t.require_column("sp");
  const auto c_n = t.require_column("n_seq");
  const auto c_speedup = t.require_column("speedup");
  const auto c_tms = t.column("tms");
  (void)catalog.hardware(hardware);  // unknown hardware: InputError naming the catalog
  std::vector<calibration::SpeedupRow> rows;
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    const auto line = t.lines[i];
    const std::string hw(models::trim(r[c_hw]));
    if (hw != hardware) {
      if (std::find(seen.begin(), seen.end(), hw) == seen.end()) seen.push_back(hw);
      continue;
    }
    calibration::SpeedupRow row;
    row.hardware = hw;
    row.model = std::string(models::trim(r[c_model]));
    if (row.model.empty()) throw InputError(path, line, "model", "empty value");
    row.mp = positive_int(r[c_mp], path, line, "mp");
    row.sp = positive_int(r[c_sp], path, line, "sp");
    row.n_seq = positive_int(r[c_n], path, line, "n_seq");
    row.speedup = finite_number(r[c_speedup], path, line, "speedup");
    if (row.speedup <= 0) throw InputError(path, line, "speedup", "expected a positive speedup");
    if (c_tms && !models::trim(r[*c_tms]).empty()) row.tms = finite_number(r[*c_tms], path, line, "tms");
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

int from_speedups(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
  const auto path = a["from-speedups"].as<std::string>();
  const auto hardware = a["hardware"].as<std::string>();
  if (hardware.empty()) throw InputError({}, 0, "hardware", "--from-speedups needs --hardware");
  const auto rows = read_speedups(path, hardware, catalog);
  const auto hw = catalog.hardware(hardware);
  const auto base = catalog.profile(a["profile"].as<std::string>(), hw);
  const auto free = split_names(a["free"].as<std::string>());
  if (free.empty()) throw InputError({}, 0, "free", "no free parameters named");
  for (const auto& f : free) (void)calibration::find_parameter(f);
  if (rows.size() < free.size())
    throw InputError(path, 0, "rows",
                     fmt::format("{} rows of {} for {} free parameters", rows.size(), hardware, free.size()));
  calibration::AnalyticPredictor analytic{models::Catalog(catalog)};
  const calibration::StepPredictor predictor = [&](const models::ScenarioSpec& s, const models::Profile& p) {
    return analytic(s, p);
  };
  calibration::SpeedupCalibration c;
  try {
    c = calibration::calibrate_speedups(rows, base, free, predictor);
  } catch (const InputError& e) {
    throw InputError(path, e.line(), e.field(), e.message());
  }
  const auto& f = c.fit;
  std::string out = fmt::format("ringsim calibrate: {} rows of {} from {}; analytic predictor; {} free parameters\n",
                                rows.size(), hardware, path, free.size());
  std::string notes = "Free parameters (fitted, bounds): ";
  for (std::size_t k = 0; k < free.size(); ++k) {
    const auto& p = c.free[k];
    const double v = f.params[static_cast<Eigen::Index>(k)];
    const double se = f.std_errors[static_cast<Eigen::Index>(k)];
    out += fmt::format("  {:<22} = {:.4g}  (std error {}, bounds [{:g}, {:g}]): {}\n", p.name, v, fmt_se(se), p.lower,
                       p.upper, p.meaning);
    notes += fmt::format("{}{} = {:.4g} +- {} in [{:g}, {:g}]", k ? "; " : "", p.name, v, fmt_se(se), p.lower, p.upper);
  }
  const auto cv_text = [](const calibration::CrossValidation& cv) {
    return cv.available ? fmt::format("{:.4f}", cv.mae) : std::string("n/a (one group)");
  };
  out += fmt::format("residual MAE {:.4f}, max |error| {:.4f}, R^2 {:.3f}\n", f.mae, f.residuals.cwiseAbs().maxCoeff(),
                     f.r_squared);
  out += fmt::format("leave-one-mesh-out MAE {}; leave-one-n_seq-out MAE {}\n", cv_text(c.by_mesh), cv_text(c.by_length));
  notes += fmt::format(". Other parameters are {}'s values ({}). Residual MAE {:.4f} (R^2 {:.3f}) over {} rows; "
                       "leave-one-mesh-out MAE {}; leave-one-n_seq-out MAE {}. Speedup = ring step / striped step of "
                       "the analytic model.",
                       base.name, base.provenance.method, f.mae, f.r_squared, rows.size(), cv_text(c.by_mesh),
                       cv_text(c.by_length));
  models::Profile p = c.profile;
  p.version = base.version + 1;
  p.provenance.calibrated = true;
  p.provenance.method = "fit to published speedups (bounded Levenberg-Marquardt, analytic predictor)";
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
    const auto& r = t.rows[i];
    const auto line = t.lines[i];
    calibration::KernelTiming k;
    k.kernel = std::string(models::trim(r[c_kernel]));
    try {
      k.precision = models::parse_precision(models::trim(r[c_dtype]));
    } catch (const InputError& e) {
      throw InputError(path, line, "dtype", e.message());
    }
    k.head_dim = positive_int(r[c_hd], path, line, "head_dim");
    k.heads = positive_int(r[c_heads], path, line, "heads");
    k.batch = positive_int(r[c_batch], path, line, "batch");
    k.tiles_visited = positive_int(r[c_tiles], path, line, "tiles_visited");
    k.visited_area = positive_int(r[c_area], path, line, "visited_area");
    const double masked = finite_number(r[c_masked], path, line, "masked_area");
    if (masked < 0 || masked > static_cast<double>(k.visited_area))
      throw InputError(path, line, "masked_area", "expected a value in [0, visited_area]");
    k.masked_area = static_cast<std::int64_t>(masked);
    k.duration_s = finite_number(r[c_dur], path, line, "duration_s");
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
  const auto base = catalog.profile(a["profile"].as<std::string>(), hw);
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

}  // namespace

int run_calibrate(int argc, char** argv) {
  cxxopts::Options o("ringsim calibrate", "Fit a profile to published speedups or to kernel timings");
  o.add_options()("from-speedups", "CSV with hardware,model,mp,sp,n_seq,speedup[,tms]", cxxopts::value<std::string>()->default_value(""))
                 ("from-timings", "kernel timings CSV (docs/timings-format.md)", cxxopts::value<std::string>()->default_value(""))
                 ("hardware", "hardware name: rows to use / peak FLOP/s", cxxopts::value<std::string>()->default_value(""))
                 ("profile", "base profile (name or path); default: the hardware's", cxxopts::value<std::string>()->default_value(""))
                 ("free", "parameters to fit (speedups)", cxxopts::value<std::string>()->default_value("masked_tile_penalty,skipped_tile_cost"))
                 ("date", "provenance date (default: today)", cxxopts::value<std::string>()->default_value(""))
                 ("o,output", "write the fitted profile JSON here (atomically)", cxxopts::value<std::string>()->default_value(""))
                 ("report", "write per-row predicted vs published CSV here", cxxopts::value<std::string>()->default_value(""))
                 ("plot", "write an SVG of speedup vs n_seq per mesh here", cxxopts::value<std::string>()->default_value(""))
                 ("h,help", "show help");
  const auto a = parse_or_throw(o, argc, argv);
  if (a.count("help")) {
    std::fputs(o.help().c_str(), stdout);
    return 0;
  }
  const bool s = !a["from-speedups"].as<std::string>().empty(), t = !a["from-timings"].as<std::string>().empty();
  if (s == t) throw InputError({}, 0, "from-speedups", "give exactly one of --from-speedups and --from-timings");
  const models::Catalog catalog;
  return s ? from_speedups(a, catalog) : from_timings(a, catalog);
}

}  // namespace ringsim::cli
