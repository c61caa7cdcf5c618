#pragma once
// A terminal table whose columns are as wide as their widest cell (names of strategies and
// layouts vary: usp:16x4, doc-zigzag-docmajor), with lines under a row (a plan's why) that do
// not widen the columns.
#include <string>
#include <vector>

namespace ringsim::cli {

class TextTable {
 public:
  struct Column {
    std::string title;
    bool right = false;  // numbers align right
  };
  explicit TextTable(std::vector<Column> columns);
  // Cells in column order (missing ones are empty); `notes`: lines printed under the row.
  void add_row(std::vector<std::string> cells, std::vector<std::string> notes = {});
  // Header, then each row and its notes; every line starts with `indent`, notes one level more.
  [[nodiscard]] std::string render(const std::string& indent = "") const;

 private:
  struct Row {
    std::vector<std::string> cells;
    std::vector<std::string> notes;
  };
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

}  // namespace ringsim::cli
