#include "planning/parts_io.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ringsim::planning {

const std::vector<std::string>& part_columns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < models::kStepParts; ++i)
      out.push_back(std::string("part_") + models::part_info(models::step_part(i)).key + "_s");
    return out;
  }();
  return c;
}

std::vector<std::string> with_part_columns(std::vector<std::string> columns) {
  columns.insert(columns.end(), part_columns().begin(), part_columns().end());
  return columns;
}

void append_part_cells(std::vector<std::string>& cells, const models::StepBreakdown& b, bool have) {
  for (const double x : b.s) cells.push_back(have ? fmt::format("{:.6g}", x) : std::string());
}

void add_parts_json(nlohmann::json& j, const models::StepBreakdown& b) {
  for (std::size_t i = 0; i < models::kStepParts; ++i) j[part_columns()[i]] = b.s[i];
}

}  // namespace ringsim::planning
