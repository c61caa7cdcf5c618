#include "cli/calibrate_derive.hpp"

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/tables.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/csv.hpp"
#include "models/cost/profile_params.hpp"
#include "models/io/error.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

// What a derived profile is uncertain about: the source fit's covariance of the parameters it
// copied (rescaled as they were), and as held-out spread the source's "time_derived" and
// "ratio_derived" (its parameters predicting another fitted GPU's ring times, or another fitted
// hardware's speedups), the error that copying parameters across hardware was measured to make.
// Empty when the source measured no such spread: then, or when nothing was copied, the derived
// profile has no interval.
models::Profile::Uncertainty derived_uncertainty(const models::Profile& source, const std::map<std::string, double>& scale) {
  models::Profile::Uncertainty u;
  const auto& su = source.uncertainty;
  const auto t = su.residual_log_sd.find("time_derived");
  const auto r = su.residual_log_sd.find("ratio_derived");
  // Nothing copied: the target keeps its spec defaults, which the measured spread does not describe.
  if ((t == su.residual_log_sd.end() && r == su.residual_log_sd.end()) || scale.empty()) return u;
  if (t != su.residual_log_sd.end()) u.residual_log_sd["time"] = t->second;
  if (r != su.residual_log_sd.end()) u.residual_log_sd["ratio"] = r->second;
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < su.parameters.size(); ++i)
    if (scale.count(su.parameters[i])) idx.push_back(i);
  u.covariance.assign(idx.size(), std::vector<double>(idx.size(), 0.0));
  for (std::size_t a = 0; a < idx.size(); ++a) {
    u.parameters.push_back(su.parameters[idx[a]]);
    for (std::size_t b = 0; b < idx.size(); ++b)
      u.covariance[a][b] = su.covariance[idx[a]][idx[b]] * scale.at(su.parameters[idx[a]]) * scale.at(su.parameters[idx[b]]);
  }
  u.held_out_points = su.held_out_points;
  return u;
}

}  // namespace

// A profile for hardware without measurements: the implementation's fitted parameters copied
// from another hardware's profile (cycle-counted ones rescaled by the SM clocks), everything
// hardware-derived from the target's specs; marked uncalibrated.
int calibrate_derive(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
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
    models::Profile spec = catalog.spec_profile(target_hw, *impl);
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
  std::map<std::string, double> scale;  // each copied parameter: target value / source value
  // A parameter whose 0 means "none" (the backward's shared-memory rate: the forward's) is named
  // as unset where the source leaves it so: copying a 0 copies no measured figure.
  const auto name_of = [&](const std::string& n, double v, const char* how) {
    const auto* d = models::find_profile_parameter(n);
    return n + (d && d->zero_is_none && v == 0 ? std::string(" (unset there, so unset here)") : std::string(how));
  };
  for (const auto& n : names_in(a, "keep")) {
    const double v = calibration::get_parameter(source, n);
    calibration::set_parameter(p, n, v);
    kept += (kept.empty() ? "" : ", ") + name_of(n, v, "");
    scale[n] = 1.0;
  }
  for (const auto& n : names_in(a, "keep-cycles")) {
    if (!(source_hw.sm_clock_hz > 0 && target_hw.sm_clock_hz > 0))
      throw InputError({}, 0, "keep-cycles", "both GPUs need an SM clock (compute_units.sm_clock_hz)");
    scale[n] = source_hw.sm_clock_hz / target_hw.sm_clock_hz;
    const double v = calibration::get_parameter(source, n);
    calibration::set_parameter(p, n, v * scale[n]);
    kept += (kept.empty() ? "" : ", ") + name_of(n, v, " (same cycles)");
  }
  p.validate(source_ref);
  p.provenance.calibrated = false;
  p.provenance.method = "derived from " + source.name + " (no measurements on " + hardware + ")";
  p.provenance.fitted_from = source.provenance.fitted_from;
  p.provenance.date = date_option(a);
  p.provenance.residual.reset();
  p.provenance.notes = fmt::format(
      "uncalibrated: no published measurement of {} on {} was handed over. Copied from {} ({}): {}; precisions, "
      "tiles and recompute likewise (wire dtypes too when the implementation is the same). Everything hardware-derived (peak FLOP/s, memory and link "
      "bandwidths and latencies, SMs and clock) comes from configs/hardware/{}.json. {}",
      *impl, hardware, source.name, source.provenance.method, kept.empty() ? "nothing else" : kept, hardware,
      a["note"].as<std::string>());
  p.uncertainty = derived_uncertainty(source, scale);
  if (!p.uncertainty.residual_log_sd.empty()) {
    std::string sds;
    for (const auto& [q, v] : p.uncertainty.residual_log_sd) sds += fmt::format("{}{} {:.3f}", sds.empty() ? "" : ", ", q, v);
    p.provenance.notes += fmt::format(
        " Its intervals: the copied parameters' covariance and the spread the source's fit measured when its "
        "parameters predict another fitted hardware's rows (log sd {}).",
        sds);
  }
  const auto o = a["output"].as<std::string>();
  if (o.empty()) throw InputError({}, 0, "output", "--derive-from needs -o FILE");
  write_output(o, p.to_json().dump(2) + "\n");
  std::fputs(fmt::format("ringsim calibrate: {} derived from {} ({})\n", p.name, source.name, kept).c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
