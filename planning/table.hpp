#pragma once
// A CSV table as the front-end read it (header, rows, the line of each row): what the checks and
// the charts of this layer take, so they stay free of a file format's reading.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ringsim::planning {

struct Table {
  std::string file;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::int64_t> lines;  // source line of each row

  [[nodiscard]] std::optional<std::size_t> column(const std::string& name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    return std::nullopt;
  }
  // The first of `names` that is a column.
  [[nodiscard]] std::optional<std::size_t> column_of(std::initializer_list<const char*> names) const {
    for (const char* n : names)
      if (auto c = column(n)) return c;
    return std::nullopt;
  }
};

}  // namespace ringsim::planning
