#pragma once
// The terminal view of `ringsim predict` (--format table): one scenario's rows side by side
// with their intervals, why each takes its time and the notes that explain the figures; and
// --compare-mask's attention times against a baseline mask.
#include <string>
#include <vector>

#include "cli/predict_rows.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::cli {

// Appends the table of `results` to `out`; `tms`: the Striped Attention paper's theoretical
// maximum speedup of striped over ring for the scenario.
// `training`: what the memory line says it assumed; `impls_named`: the user named each strategy's
// implementation (--impl A,B), so kernels that differ are the user's choice.
void print_table(const std::vector<LayoutResult>& results, double tms, Engine engine, std::string& out,
                 const Training& training = {}, bool impls_named = false);

// The first row's memory per device part by part (LayoutResult::memory_parts), each with its
// term, GiB and where its formula comes from, adding up to the memory line's figure.
void print_memory_breakdown(const std::vector<LayoutResult>& results, std::string& out);

// The rows of a comparison that cannot run here, each with its reason, under the table; nothing
// when every row ran.
void print_not_runnable(const std::vector<NotRunnable>& rows, std::string& out);

// The same scenario under a baseline mask (SCFA's comparison: the sparse kernel against dense
// causal flash attention at the same tile size), attention only: forward and forward+backward.
void print_comparison(const std::vector<LayoutResult>& results, const models::ScenarioSpec& base,
                      const models::MaskSpec& baseline_mask, const models::Catalog& catalog, Engine engine,
                      std::string& out);

}  // namespace ringsim::cli
