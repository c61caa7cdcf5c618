#pragma once
// A step's parts (models/analytic/breakdown.hpp) as every file format writes them: CSV columns and
// JSON fields "part_<key>_s" (after a table's own columns), so predict, sweep, plan, plan-docs and
// the Python module's rows carry one list under one set of names.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/analytic/breakdown.hpp"

namespace ringsim::planning {

// "part_attention_fwd_s", ... in the breakdown's order.
[[nodiscard]] const std::vector<std::string>& part_columns();
// A table's own columns followed by part_columns().
[[nodiscard]] std::vector<std::string> with_part_columns(std::vector<std::string> columns);
// The parts as CSV cells (%.6g), in part_columns' order; empty cells where `have` is false.
void append_part_cells(std::vector<std::string>& cells, const models::StepBreakdown& b, bool have = true);
// j["part_attention_fwd_s"] = seconds, ...: every part, zeros included.
void add_parts_json(nlohmann::json& j, const models::StepBreakdown& b);

}  // namespace ringsim::planning
