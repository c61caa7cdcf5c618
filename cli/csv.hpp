#pragma once
// Small RFC-4180-style CSV reading and writing for the front-ends: rows keep their line
// numbers so errors can name them, and output files are written to a temporary first and
// renamed, so a failed run never leaves a half-written file.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ringsim::cli {

struct CsvTable {
  std::string file;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::int64_t> lines;  // source line of each row

  [[nodiscard]] std::optional<std::size_t> column(const std::string& name) const;
  // Throws InputError naming the file and the missing column.
  [[nodiscard]] std::size_t require_column(const std::string& name) const;
};

// Lines starting with '#' before the header are comments; blank lines are skipped.
[[nodiscard]] CsvTable read_csv(const std::string& path);
[[nodiscard]] std::string csv_escape(const std::string& field);
[[nodiscard]] std::string csv_line(const std::vector<std::string>& fields);

// Writes `text` to `path` atomically (temporary file + rename); "-" or empty means stdout.
void write_output(const std::string& path, const std::string& text);

}  // namespace ringsim::cli
