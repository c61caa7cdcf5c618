#include "cli/calibrate_times.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/attention_times.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/csv.hpp"
#include "cli/output_dirs.hpp"
#include "models/analytic/interval.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

// Joint fit of a flash-attention ring library's profiles to published attention times
// (data/cp_attention_times.csv), with leave-one-group-out errors and intervals.
int calibrate_from_times(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
  const auto path = a["from-times"].as<std::string>();
  // Where the profiles go, checked before the fit; every output written together at the end.
  const auto profiles_dir = a["profiles-dir"].as<std::string>();
  if (!profiles_dir.empty()) check_output_dir(profiles_dir, "profiles-dir");
  OutputSet outputs;
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
  // the result depends on the data and the free parameters only. --base-profiles DIR starts each
  // GPU from DIR/IMPL/HARDWARE.json instead (component fits: calibrate --from-kernels), so that
  // only the freed system parameters are fitted on these rows. The message dtypes are each
  // implementation's protocol's.
  const auto base_dir = a["base-profiles"].as<std::string>();
  calibration::TimeFitSetup setup;
  for (const auto& r : rows)
    if (!setup.base.count(r.hardware)) {
      const auto hw = catalog.hardware(r.hardware);
      auto base = base_dir.empty() ? catalog.spec_profile(hw, r.impl)
                                   : catalog.profile(base_dir + "/" + r.impl + "/" + hw.name + ".json", hw, r.impl);
      base.implementation = r.impl;
      base.name = r.impl + "/" + hw.name;
      setup.base.emplace(r.hardware, base);
    }
  // --free none: nothing is fitted on these rows; they score the base profiles (component fits),
  // every prediction out of sample. --keep names what a derived profile copies (its interval).
  const bool score_only = a["free"].as<std::string>() == "none";
  if (score_only && base_dir.empty())
    throw InputError({}, 0, "free", "none (score only) needs --base-profiles: spec defaults are not a model to score");
  if (!score_only) setup.per_hardware = names_in(a, "free");
  setup.shared = names_in(a, "shared");
  setup.shared_cycles = names_in(a, "shared-cycles");
  setup.copied = names_in(a, "keep");
  setup.options.extra_starts = 6;
  setup.options.max_iterations = 100;
  setup.options.tolerance = 1e-10;
  if (!score_only && setup.per_hardware.empty() && setup.shared.empty() && setup.shared_cycles.empty())
    throw InputError({}, 0, "free", "no free parameters named (none: score the base profiles)");
  if (score_only && !(setup.shared.empty() && setup.shared_cycles.empty()))
    throw InputError({}, 0, "shared", "--free none fits nothing: drop --shared");
  calibration::TimePredictor predictor{models::Catalog(catalog)};
  // Each implementation's own base profile gives what its code costs beyond the shared kernel and loop.
  // Each (implementation, hardware) pair's file is read once, however many rows it has.
  if (!base_dir.empty()) {
    std::set<std::pair<std::string, std::string>> pairs;
    for (const auto& r : rows) pairs.emplace(r.impl, r.hardware);
    for (const auto& [row_impl, row_hw] : pairs) {
      const auto own_file = base_dir + "/" + row_impl + "/" + row_hw + ".json";
      if (!std::filesystem::is_regular_file(own_file)) continue;
      const auto own = catalog.profile(own_file, catalog.hardware(row_hw), row_impl);
      predictor.set_library_terms(row_impl, row_hw, {own.host_collective_s, own.host_collective_peer_s});
    }
  }
  calibration::TimeFit fit;
  try {
    fit = calibration::fit_times(rows, setup, predictor);
  } catch (const InputError& e) {
    throw InputError(path, e.line(), e.field(), e.message());
  }
  std::string out = fmt::format("ringsim calibrate: {} rows of {} from {} ({}, analytic predictor)\n", rows.size(), impl,
                                path, score_only ? "scored, nothing fitted: every prediction is out of sample" : "log-time fit");
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
  out += fmt::format("{}: ring-row time MAPE {:.1f}%, layout-ratio MAPE {:.1f}%\n",
                     score_only ? "out of sample (the base profiles as they are)" : "in-sample (fitted rows, not a test)",
                     100 * fit_t / static_cast<double>(std::max<std::int64_t>(1, n_t)), 100 * fit_r / static_cast<double>(std::max<std::size_t>(1, ratios.size())));
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
      if (const double c = calibration::grouped_interval_coverage(rows, h); std::isfinite(c))
        out += fmt::format("    90 % intervals with the spread of the other groups only cover {:.1f}%\n", 100 * c);
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
  // A profile derived for a GPU without measurements copies the per-GPU parameters of a fitted
  // one; how far that lands is measured here, on the fitted GPUs, and becomes its interval.
  calibration::DerivedScore derived;
  if (!held.empty()) derived = calibration::derived_from_other_gpus(rows, fit, setup, predictor);
  const double sd_dt = rms(derived.log_time), sd_dr = rms(derived.log_ratio);
  if (!derived.log_time.empty()) {
    out += fmt::format("derived from another GPU's fit (what --derive-from copies): time MAPE {:.1f}% ({} points), ratio "
                       "MAPE {:.1f}% ({} ratios); log spread time {:.4f}, ratio {:.4f}\n",
                       100 * derived.all.time_mape, derived.all.time_points, 100 * derived.all.ratio_mape,
                       derived.all.ratio_points, sd_dt, sd_dr);
    for (const auto& g : derived.pairs)
      out += fmt::format("    {:<28} time {:5.1f}% ({:2}), ratio {:5.1f}% ({:2})\n", g.group, 100 * g.time_mape, g.time_points,
                         100 * g.ratio_mape, g.ratio_points);
    if (const double c = calibration::derived_interval_coverage(derived); std::isfinite(c))
      out += fmt::format("90 % intervals of derived times, spread from the other pairs only, cover {:.1f}% of the {} "
                         "derived points\n",
                         100 * c, derived.log_time.size());
  }
  auto set_spread = [&](models::Profile& q) {
    if (held.empty()) return;
    q.uncertainty.residual_log_sd["time"] = sd_t;
    q.uncertainty.residual_log_sd["ratio"] = sd_r;
    if (!derived.log_time.empty()) q.uncertainty.residual_log_sd["time_derived"] = sd_dt;
    if (!derived.log_ratio.empty()) q.uncertainty.residual_log_sd["ratio_derived"] = sd_dr;
  };
  // Each row's 90 % interval around the full fit, and whether the same relative interval around
  // each held-out prediction covers the measurement (the coverage the intervals are judged by).
  std::map<std::string, models::Profile> with_uncertainty;
  for (const auto& [hw, prof] : fit.profiles) {
    auto q = prof;
    calibration::fill_uncertainty(fit, hw, q);
    set_spread(q);
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
  const auto date = date_option(a);
  if (const auto& dir = profiles_dir; !dir.empty()) {
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
      auto p = predictor.with_library_terms(fit.profiles.at(r.hardware), r.impl, r.hardware);
      const auto& hw = r.hardware;
      p.name = r.impl + "/" + hw;
      p.hardware = hw;
      p.implementation = r.impl;
      p.version = setup.base.at(hw).version + 1;
      p.provenance.date = date;
      if (score_only) {
        // The component fit stays what it is; the ring rows only measured how far it lands.
        p.provenance.notes += fmt::format(" Nothing fitted on ring rows: scored out of sample on {} rows of {} ({}) from {}{}.",
                                          rows.size(), impl, fmt::join(gpus, ", "), path, groups);
      } else {
        p.provenance.calibrated = true;
        p.provenance.method =
            "joint fit to published attention times (bounded Levenberg-Marquardt on log time, analytic predictor)";
        p.provenance.fitted_from = path;
        p.provenance.residual = fit.fit.mae;
        p.provenance.notes = fmt::format("Fitted jointly over {} rows of {} ({}): {}{}.", rows.size(), impl,
                                         fmt::join(gpus, ", "), fitted, groups);
      }
      calibration::fill_uncertainty(fit, hw, p);
      set_spread(p);
      if (!held.empty()) p.uncertainty.held_out_points = static_cast<std::int64_t>(log_t.size());
      p.validate(path);
      outputs.add_under(dir, r.impl + "/" + hw + ".json", p.to_json().dump(2) + "\n", "profiles-dir");
    }
  }
  if (const auto rpt = a["report"].as<std::string>(); !rpt.empty()) {
    std::vector<std::string> head = {"table", "hardware", "impl", "cp", "layout", "pass", "heads", "batch", "sp", "n_seq", "packing",
                                     "seconds", "fitted_s", "fitted_s_lo", "fitted_s_hi"};
    for (const auto& h : held) head.push_back("held_out_" + h.by + "_s");
    std::string csv = csv_line(head);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      std::vector<std::string> v = {r.table, r.hardware, r.impl, r.cp.text(), r.layout, r.pass, r.heads_key(), std::to_string(r.batch),
                                    std::to_string(r.sp), std::to_string(r.n_seq), r.packing,
                                    fmt::format("{:.6g}", r.seconds), fmt::format("{:.6g}", fit.predicted[i]),
                                    band[i].available ? fmt::format("{:.6g}", band[i].lo) : std::string(),
                                    band[i].available ? fmt::format("{:.6g}", band[i].hi) : std::string()};
      for (const auto& h : held)
        v.push_back(std::isfinite(h.predicted[i]) ? fmt::format("{:.6g}", h.predicted[i]) : std::string());
      csv += csv_line(v);
    }
    outputs.add(rpt, csv);
  }
  outputs.commit();
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
