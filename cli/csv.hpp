#pragma once
// Small RFC-4180-style CSV reading and writing for the front-ends: rows keep their line
// numbers so errors can name them; a column named twice is an error. Output files go through
// io/output_file.hpp (complete or absent).
#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "models/io/csv_text.hpp"
#include "models/io/error.hpp"
#include "planning/table.hpp"

namespace ringsim::cli {

// file, header, rows, the source line of each row, and column(): planning::Table, which the
// planning layer's checks and charts take as it is.
struct CsvTable : planning::Table {
  // Throws InputError naming the file and the missing column.
  [[nodiscard]] std::size_t require_column(const std::string& name) const;

  // Strict cell readers: every error names this file, the row's source line and the column.
  // `parse(text)` may throw InputError; it is re-thrown located at the cell.
  template <class Parse>
  [[nodiscard]] auto parsed(std::size_t row, std::size_t col, Parse&& parse) const -> decltype(parse(std::string_view{}));
  [[nodiscard]] std::string text(std::size_t row, std::size_t col) const;  // trimmed, non-empty
  // Trimmed text, or `fallback` when the column is absent or the cell empty.
  [[nodiscard]] std::string text_or(std::size_t row, std::optional<std::size_t> col, std::string fallback) const;
  [[nodiscard]] std::int64_t positive_int(std::size_t row, std::size_t col) const;
  [[nodiscard]] double number(std::size_t row, std::size_t col) const;  // finite
};

template <class Parse>
auto CsvTable::parsed(std::size_t row, std::size_t col, Parse&& parse) const -> decltype(parse(std::string_view{})) {
  try {
    return parse(std::string_view(rows[row][col]));
  } catch (const models::InputError& e) {
    throw models::InputError(file, lines[row], header[col], e.message());
  }
}

// Lines starting with '#' before the header are comments; blank lines are skipped. With
// `max_rows` > 0, a file of more rows is refused at the first one too many (InputError naming the
// line and `field`, `why` saying what the bound is for) before the rest is read.
[[nodiscard]] CsvTable read_csv(const std::string& path, std::int64_t max_rows = 0, std::string_view field = {},
                                std::string_view why = {});
using models::csv_escape;  // models/io/csv_text.hpp: one quoting rule for every front-end
using models::csv_line;

// Writes `text` to `path` atomically (io::write_output); "-" or empty means stdout.
void write_output(const std::string& path, const std::string& text);

}  // namespace ringsim::cli
