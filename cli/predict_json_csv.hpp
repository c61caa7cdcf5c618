#pragma once
// The machine-readable views of one `ringsim predict` scenario (--format json, --format csv):
// every row's figures, intervals and engine, for scripts rather than terminals.
#include <string>
#include <vector>

#include "cli/predict_rows.hpp"

namespace ringsim::cli {

// `v` as `spec` formats it, or empty where the interval it bounds is unavailable (a CSV cell).
[[nodiscard]] std::string fmt_opt(bool available, double v, const char* spec = "{:.6g}");

// The scenario, its profile and every row as one JSON document. `tms`: as for print_table. Rows
// that cannot run are listed under "not_runnable" with their reasons.
[[nodiscard]] std::string results_json(const std::vector<LayoutResult>& results, double tms, Engine engine,
                                       const std::vector<NotRunnable>& not_runnable = {});
// A header and one CSV line per row; a row that cannot run has its layout, cp and reason (column
// not_runnable, empty for the others) and no figures.
[[nodiscard]] std::string results_csv(const std::vector<LayoutResult>& results, double tms, Engine engine,
                                      const std::vector<NotRunnable>& not_runnable = {});

}  // namespace ringsim::cli
