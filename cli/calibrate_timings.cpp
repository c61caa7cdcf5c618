#include "cli/calibrate_timings.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/kernel_curves.hpp"
#include "calibration/timings.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/csv.hpp"
#include "models/io/error.hpp"
#include "models/io/limits.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

namespace {

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
  const auto c_kv = t.column("kv_heads");  // optional (docs/timings-format.md)
  std::vector<calibration::KernelTiming> rows;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto line = t.lines[i];
    // The bounds of one GPU's kernel call (calibration/kernel_curves.hpp): a row beyond them is a
    // typo, not a launch, and would be fitted as one.
    const auto bounded = [&](std::size_t col, std::int64_t hi, const char* what) {
      const auto v = t.positive_int(i, col);
      if (v > hi) throw InputError(path, line, t.header[col], fmt::format("expected {} from 1 to {}, got {}", what, hi, v));
      return v;
    };
    calibration::KernelTiming k;
    k.kernel = t.text_or(i, c_kernel, "");
    k.precision = t.parsed(i, c_dtype, [](std::string_view v) { return models::parse_precision(models::trim(v)); });
    k.head_dim = bounded(c_hd, calibration::kMaxKernelRowHeads, "elements per head");
    k.heads = bounded(c_heads, calibration::kMaxKernelRowHeads, "query heads");
    if (c_kv && !t.text_or(i, *c_kv, "").empty()) {
      const auto kv = bounded(*c_kv, calibration::kMaxKernelRowHeads, "K/V heads");
      if (k.heads % kv != 0)
        throw InputError(path, line, "kv_heads",
                         fmt::format("the {} query heads are not a multiple of the {} K/V heads (each K/V head serves a "
                                     "whole group of query heads)",
                                     k.heads, kv));
    }
    k.batch = bounded(c_batch, models::kMaxBatch, "sequences");
    // Per head and sequence, a call visits at most (2^26 queries x 2^26 keys) pairs, in tiles of one or more.
    constexpr std::int64_t kMaxArea = calibration::kMaxKernelRowTokens * calibration::kMaxKernelRowTokens;
    k.visited_area = bounded(c_area, kMaxArea, "visited (query, key) pairs per head and sequence");
    k.tiles_visited = bounded(c_tiles, k.visited_area, "tiles (each of at least one visited pair)");
    const double masked = t.number(i, c_masked);
    if (masked < 0 || masked > static_cast<double>(k.visited_area))
      throw InputError(path, line, "masked_area", "expected a value in [0, visited_area]");
    k.masked_area = static_cast<std::int64_t>(masked);
    k.duration_s = t.number(i, c_dur);
    if (!(k.duration_s >= calibration::kMinKernelRowSeconds && k.duration_s <= calibration::kMaxKernelRowSeconds))
      throw InputError(path, line, "duration_s",
                       fmt::format("expected a kernel time from {:g} s to {:g} s, got {:.4g}", calibration::kMinKernelRowSeconds,
                                   calibration::kMaxKernelRowSeconds, k.duration_s));
    k.line = line;
    rows.push_back(k);
  }
  return rows;
}

}  // namespace

int calibrate_from_timings(const cxxopts::ParseResult& a, const models::Catalog& catalog) {
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
  p.provenance.date = date_option(a);
  p.provenance.residual = c.fit.mae;
  p.provenance.notes = notes;
  if (const auto o = a["output"].as<std::string>(); !o.empty()) write_output(o, p.to_json().dump(2) + "\n");
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace ringsim::cli
