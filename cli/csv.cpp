#include "cli/csv.hpp"

#include "io/output_file.hpp"
#include "models/io/error.hpp"
#include "models/io/input_file.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

std::size_t CsvTable::require_column(const std::string& name) const {
  if (auto c = column(name)) return *c;
  throw InputError(file, 1, name, "missing required column");
}

std::string CsvTable::text(std::size_t row, std::size_t col) const {
  return parsed(row, col, [&](std::string_view v) {
    const auto t = models::trim(v);
    if (t.empty()) throw InputError({}, 0, header[col], "empty value");
    return std::string(t);
  });
}

std::string CsvTable::text_or(std::size_t row, std::optional<std::size_t> col, std::string fallback) const {
  if (!col) return fallback;
  const auto t = models::trim(rows[row][*col]);
  return t.empty() ? fallback : std::string(t);
}

std::int64_t CsvTable::positive_int(std::size_t row, std::size_t col) const {
  return parsed(row, col, [&](std::string_view v) { return models::parse_positive_int(v, header[col]); });
}

double CsvTable::number(std::size_t row, std::size_t col) const {
  return parsed(row, col, [&](std::string_view v) { return models::parse_double(v, header[col]); });
}

namespace {

// Splits one record; quoted fields may hold commas and doubled quotes (not newlines).
std::vector<std::string> split_record(const std::string& line, const std::string& file, std::int64_t line_no) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  if (quoted) throw InputError(file, line_no, {}, "unterminated quoted field");
  out.push_back(cur);
  return out;
}

}  // namespace

CsvTable read_csv(const std::string& path, std::int64_t max_rows, std::string_view field, std::string_view why) {
  CsvTable t;
  t.file = path;
  models::InputFile in(path, {}, "CSV file", models::kMaxDataFileBytes);
  std::string line;
  std::int64_t line_no = 0;
  while (in.next_line(line)) {
    line_no = in.line_number();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (t.header.empty()) {
      if (line[0] == '#') continue;
      t.header = split_record(line, path, line_no);
      for (auto& h : t.header) {
        while (!h.empty() && (h.back() == ' ' || h.back() == '\t')) h.pop_back();
        while (!h.empty() && (h.front() == ' ' || h.front() == '\t')) h.erase(h.begin());
        if (h.empty()) throw InputError(path, line_no, {}, "empty column name in the header");
      }
      // A column given twice would be read from one copy and passed through in both.
      for (std::size_t i = 0; i < t.header.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (t.header[i] == t.header[j]) throw InputError(path, line_no, t.header[i], "column appears twice in the header");
      continue;
    }
    if (max_rows > 0 && static_cast<std::int64_t>(t.rows.size()) >= max_rows)
      throw InputError(path, line_no, std::string(field),
                       "more than " + std::to_string(max_rows) + " rows" + (why.empty() ? "" : ": " + std::string(why)));
    auto rec = split_record(line, path, line_no);
    if (rec.size() != t.header.size())
      throw InputError(path, line_no, {},
                       "expected " + std::to_string(t.header.size()) + " fields (as in the header), found " +
                           std::to_string(rec.size()));
    t.rows.push_back(std::move(rec));
    t.lines.push_back(line_no);
  }
  if (t.header.empty()) throw InputError(path, line_no, {}, "no header row");
  return t;
}

void write_output(const std::string& path, const std::string& text) { io::write_output(path, text); }

}  // namespace ringsim::cli
