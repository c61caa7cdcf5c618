#include "cli/calibrate_scfa.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/scfa.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/csv.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

int calibrate_from_scfa(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
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
  // One predictor for the fit and its leave-one-row-out refits: it memoises the resolved scenarios.
  const auto predictor = calibration::analytic_scfa_predictor(catalog, setting);
  calibration::ScfaCalibration c;
  try {
    c = calibration::calibrate_scfa(rows, base, free, predictor);
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
  // The score and the interval's spread: each row predicted by a fit to the others.
  const auto held = calibration::scfa_leave_one_row_out(rows, base, free, predictor);
  if (held.points > 0)
    out += fmt::format("leave-one-row-out MAPE {:.1f}% over {} of {} rows; held-out log spread {:.4f} (the interval's)\n",
                       100 * held.mape, held.points, rows.size(), held.log_sd);
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
  p.provenance.date = date_option(a);
  p.provenance.residual = mean_rel;
  p.provenance.notes = notes;
  p.uncertainty = parameter_uncertainty(c.free, f);
  if (held.points > 0) {
    p.uncertainty.residual_log_sd["time"] = held.log_sd;
    p.uncertainty.held_out_points = held.points;
    p.provenance.notes += fmt::format(" Leave-one-row-out MAPE {:.4f} over {} rows: its log spread {:.4f} is the "
                                      "interval's.",
                                      held.mape, held.points, held.log_sd);
  }
  if (const auto o = a["output"].as<std::string>(); !o.empty()) write_output(o, p.to_json().dump(2) + "\n");
  if (const auto rpt = a["report"].as<std::string>(); !rpt.empty()) {
    std::string csv = csv_line({"method", "param", "mask", "n_seq", "ms", "pred_ms", "relative_error", "held_out_ms"});
    for (std::size_t i = 0; i < rows.size(); ++i)
      csv += csv_line({rows[i].method, rows[i].param, rows[i].mask.text(), std::to_string(rows[i].n_seq),
                       fmt::format("{:g}", rows[i].ms), fmt::format("{:.2f}", c.predicted_ms[i]),
                       fmt::format("{:+.4f}", c.relative_error[i]),
                       std::isfinite(held.predicted_ms[i]) ? fmt::format("{:.2f}", held.predicted_ms[i]) : std::string()});
    write_output(rpt, csv);
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
