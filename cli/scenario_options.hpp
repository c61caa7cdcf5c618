#pragma once
// The scenario flags shared by predict, workload, show and simulate, and their parsing into
// ScenarioSpecs (one per requested layout).
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "cli/csv.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "planning/predict_runs.hpp"

namespace ringsim::cli {

void add_scenario_options(cxxopts::Options& options, const std::string& default_layouts);

// The request predict and the other scenario commands compare (planning/predict_runs.hpp: shared
// with the Python module, so both choose the same rows and implementations).
using ScenarioArgs = planning::RunRequest;

// Throws InputError for malformed values (mesh, tile, sizes, layout, mask, strategy, documents):
// the command line's strings become typed values here, once.
[[nodiscard]] ScenarioArgs parse_scenario_args(const cxxopts::ParseResult& r);

// One implementation per strategy for the requested layouts, and the (strategy, layout) rows to
// compare: planning/predict_runs.hpp.
using planning::choose_implementation;
using planning::expand_runs;
using planning::RefusedRun;

// InputError unless exactly one strategy was asked for (commands that show one scenario).
void require_one_strategy(const ScenarioArgs& args, const std::string& command);

// The columns every scenario CSV carries (hardware,model,mp,sp,n_seq), read into a spec; the
// batch predictor and the speedup calibration share them.
struct ScenarioColumns {
  explicit ScenarioColumns(const CsvTable& t);
  // InputError naming the row's line and the column for a malformed cell.
  [[nodiscard]] models::ScenarioSpec spec(const CsvTable& t, std::size_t row) const;
  std::size_t hardware, model, mp, sp, n_seq;
  std::optional<std::size_t> impl, cp, docs;  // optional columns: implementation, strategy, packed documents
};

// A non-empty cell parsed into a typed value (models::LayoutSpec::parse, MaskSpec::parse,
// Strategy::parse, DocumentsSpec::parse): an error names the file, the row's line and the column.
template <class T>
[[nodiscard]] T typed_cell(const CsvTable& t, std::size_t row, std::size_t col, T (*parse)(std::string_view)) {
  (void)t.text(row, col);  // present and non-empty
  return t.parsed(row, col, [&](std::string_view cell) { return parse(models::trim(cell)); });
}

// Human-friendly figures: 1.23 s / 45.6 ms / 7.8 us; 1.2 M; 12.3 GiB.
[[nodiscard]] std::string human_seconds(double s);
[[nodiscard]] std::string human_count(double v);
[[nodiscard]] std::string human_bytes(double b);

}  // namespace ringsim::cli
