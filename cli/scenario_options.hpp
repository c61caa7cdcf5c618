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

namespace ringsim::cli {

void add_scenario_options(cxxopts::Options& options, const std::string& default_layouts);

struct ScenarioArgs {
  models::ScenarioSpec base;          // layout and strategy left as the first requested ones
  std::vector<models::LayoutSpec> layouts;  // as requested (`ring` kept as written)
  bool layouts_given = false;  // --layout was on the command line (else the command's default list)
  std::vector<models::Strategy> cps;        // --cp, a comma-separated list of strategies
};

// Throws InputError for malformed values (mesh, tile, sizes, layout, mask, strategy, documents):
// the command line's strings become typed values here, once.
[[nodiscard]] ScenarioArgs parse_scenario_args(const cxxopts::ParseResult& r);

// Fixes base.impl for all the requested layouts (models::Catalog::choose_implementation); when
// --layout was not given, the command's default list keeps only the layouts it offers.
void choose_implementation(ScenarioArgs& args, const models::Catalog& catalog);

// One scenario per (strategy, layout) to compare, each with its implementation: --impl (which
// must offer every strategy), else per strategy the default that offers it and the layouts.
// Without --layout, each strategy keeps the default layouts its implementation offers (the
// first only for Ulysses, whose work does not depend on the layout).
// With `refused`, a strategy no implementation runs here is recorded there (its error, with the
// strategy as its spec's cp) instead of thrown, so a comparison can show it as not runnable.
struct RefusedRun {
  models::ScenarioSpec spec;  // the strategy (and first layout) that was asked for
  models::InputError error;
};
[[nodiscard]] std::vector<models::ScenarioSpec> expand_runs(const ScenarioArgs& args, const models::Catalog& catalog,
                                                            std::vector<RefusedRun>* refused = nullptr);
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
