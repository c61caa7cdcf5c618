#include "cli/text_table.hpp"

#include <algorithm>

namespace ringsim::cli {

namespace {

// Display width of UTF-8 text: code points, not bytes (units and arrows are not ASCII).
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells, std::vector<std::string> notes) {
  cells.resize(columns_.size());
  rows_.push_back({std::move(cells), std::move(notes)});
}

std::string TextTable::render(const std::string& indent) const {
  std::vector<std::size_t> w(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    w[c] = width(columns_[c].title);
    for (const auto& r : rows_) w[c] = std::max(w[c], width(r.cells[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out = indent;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string pad(w[c] - width(cells[c]), ' ');
      if (c > 0) out += "  ";
      out += columns_[c].right ? pad + cells[c] : cells[c] + (c + 1 < columns_.size() ? pad : "");
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::vector<std::string> titles;
  for (const auto& c : columns_) titles.push_back(c.title);
  std::string out = line(titles);
  for (const auto& r : rows_) {
    out += line(r.cells);
    for (const auto& n : r.notes) out += indent + "    " + n + "\n";
  }
  return out;
}

}  // namespace ringsim::cli
