#include "cli/calibrate_machines.hpp"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibration/machine_probes.hpp"
#include "cli/csv.hpp"
#include "models/catalog/catalog.hpp"
#include "models/io/error.hpp"
#include "models/io/names.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

int calibrate_from_machine_probes(const cxxopts::ParseResult& a) {
  const auto file = a["from-machine-probes"].as<std::string>();
  // The descriptions beside the catalog (data/ is the catalog root's, as configs/ is), wherever
  // the command runs from.
  auto dir = a["machines"].as<std::string>();
  if (dir.empty()) dir = (std::filesystem::path(models::Catalog::default_root()) / "data" / "components" / "machines").string();
  models::check_path(dir, "machines");
  const auto table = read_csv(file);
  const auto rows = calibration::probe_rows(file, table.header, table.rows, table.lines);
  std::vector<std::string> names;
  if (const auto only = a["machine"].as<std::string>(); !only.empty()) {
    names = models::split(only, ',');
  } else {
    std::set<std::string> seen;
    for (const auto& r : rows)
      if (seen.insert(r.machine).second) names.push_back(r.machine);
  }
  const bool logo = a.count("no-logo") == 0;
  std::string report = "machine,source,pattern,metric,bytes,published,fitted,held_out\n";
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& name : names) {
    // A file name in the folder: the catalog's name rule (letters, digits, '-', '_', '.'; bounded
    // length), so no name reaches the file system that it cannot take.
    models::check_catalog_name(name, "machine", "machine");
    const auto path = (std::filesystem::path(dir) / (name + ".json")).string();
    if (!std::filesystem::is_regular_file(path))
      throw InputError(path, 0, "machine", "no description of machine '" + name + "' in " + dir);
    const auto machine = calibration::ProbeMachine::load(path);
    std::int64_t modelled = 0;
    for (const auto& r : rows) modelled += r.machine == name && r.modelled() ? 1 : 0;
    if (modelled == 0 && a["machine"].as<std::string>().empty()) {
      // Over every machine of the file: one whose rows no model covers is said, not fitted.
      std::cout << fmt::format("{}  no row of a pattern a model covers (not fitted)\n", name);
      continue;
    }
    const auto fit = calibration::fit_machine(machine, rows, logo);
    std::cout << fmt::format("{}  ({} device{}, {} node{})\n", name, machine.devices(), machine.devices() == 1 ? "" : "s",
                             machine.nodes(), machine.nodes() == 1 ? "" : "s");
    for (std::size_t i = 0; i < fit.names.size(); ++i) {
      const bool lat = fit.names[i].ends_with("latency_s");
      const double scale = lat ? 1e6 : 1e-9;
      std::cout << fmt::format("  {:<58} {:>9.4g} +- {:<8.2g} {}\n", fit.names[i], fit.values[i] * scale,
                               std::isfinite(fit.std_errors[i]) ? fit.std_errors[i] * scale : 0.0, lat ? "us" : "GB/s");
    }
    for (const auto& [pattern, v] : fit.in_sample_mape) {
      const auto ho = fit.held_out_mape.find(pattern);
      std::cout << fmt::format("  {:<16} {:>4} rows   in-sample {:5.1f} %", pattern, v.second, 100 * v.first);
      if (ho != fit.held_out_mape.end()) std::cout << fmt::format("   held-out {:5.1f} %", 100 * ho->second.first);
      std::cout << "\n";
    }
    std::int64_t skipped = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      if (r.machine != name) continue;
      if (!r.modelled()) {
        ++skipped;
        continue;
      }
      report += csv_line({r.machine, r.source, r.pattern, r.metric, models::short_number(r.bytes, 10),
                          models::short_number(r.value, 6), models::short_number(fit.predicted[i], 6),
                          std::isfinite(fit.held_out[i]) ? models::short_number(fit.held_out[i], 6) : std::string()});
    }
    if (skipped > 0) std::cout << fmt::format("  {} row{} of patterns no model covers (not fitted, not scored)\n", skipped, skipped == 1 ? "" : "s");
    auto doc = fit.fitted;
    doc["fitted_by"] = fmt::format("ringsim calibrate --from-machine-probes {} (free values fitted on log error; "
                                   "held-out: leave one row out)",
                                   file);
    outputs.emplace_back(name, doc.dump(2) + "\n");
  }
  if (const auto out = a["machines-out"].as<std::string>(); !out.empty()) {
    if (std::filesystem::exists(out) && !std::filesystem::is_directory(out))
      throw InputError(out, 0, "machines-out", "exists and is not a directory");
    std::filesystem::create_directories(out);
    for (const auto& [name, text] : outputs) write_output((std::filesystem::path(out) / (name + ".json")).string(), text);
  }
  if (const auto r = a["report"].as<std::string>(); !r.empty()) write_output(r, report);
  return 0;
}

}  // namespace ringsim::cli
