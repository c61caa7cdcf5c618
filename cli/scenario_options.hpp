#pragma once
// The scenario flags shared by predict, workload, show and simulate, and their parsing into
// ScenarioSpecs (one per requested layout).
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "cli/csv.hpp"
#include "models/scenario.hpp"

namespace ringsim::cli {

void add_scenario_options(cxxopts::Options& options, const std::string& default_layouts);

struct ScenarioArgs {
  models::ScenarioSpec base;          // layout left as the first requested one
  std::vector<std::string> layouts;   // as requested (`ring` kept as written)
  bool layouts_given = false;         // --layout was on the command line (else the command's default list)
};

// Throws InputError for malformed values (mesh, tile, sizes).
[[nodiscard]] ScenarioArgs parse_scenario_args(const cxxopts::ParseResult& r);

// Fixes base.impl for all the requested layouts (models::Catalog::choose_implementation); when
// --layout was not given, the command's default list keeps only the layouts it offers.
void choose_implementation(ScenarioArgs& args, const models::Catalog& catalog);

// The columns every scenario CSV carries (hardware,model,mp,sp,n_seq), read into a spec; the
// batch predictor and the speedup calibration share them.
struct ScenarioColumns {
  explicit ScenarioColumns(const CsvTable& t);
  [[nodiscard]] models::ScenarioSpec spec(const CsvTable& t, std::size_t row) const;
  std::size_t hardware, model, mp, sp, n_seq;
  std::optional<std::size_t> impl, cp;  // optional columns: implementation, strategy
};

// Human-friendly figures: 1.23 s / 45.6 ms / 7.8 us; 1.2 M; 12.3 GiB.
[[nodiscard]] std::string human_seconds(double s);
[[nodiscard]] std::string human_count(double v);
[[nodiscard]] std::string human_bytes(double b);

}  // namespace ringsim::cli
