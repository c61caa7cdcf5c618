#pragma once
// The CSV the front-end read, handed to the planning layer (which does not read files itself).
#include <utility>

#include "cli/csv.hpp"
#include "planning/table.hpp"

namespace ringsim::cli {

inline planning::Table planning_table(CsvTable t) {
  return {std::move(t.file), std::move(t.header), std::move(t.rows), std::move(t.lines)};
}

}  // namespace ringsim::cli
