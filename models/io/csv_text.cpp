#include "models/io/csv_text.hpp"

#include <string_view>

namespace ringsim::models {

std::string csv_escape(const std::string& f) {
  if (f.find_first_of(std::string_view(",\"\n\r\0", 5)) == std::string::npos) return f;
  std::string s = "\"";
  for (char ch : f) {
    if (ch == '"') s += '"';
    s += ch;
  }
  return s + '"';
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string s;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) s += ',';
    s += csv_escape(fields[i]);
  }
  return s + '\n';
}

}  // namespace ringsim::models
