#pragma once
// Writing CSV fields (RFC 4180): what every front-end's CSV output quotes the same way, so the
// GUI's exports and the command line's tables are byte-for-byte alike.
#include <string>
#include <vector>

namespace ringsim::models {

// The field as is, or quoted (inner quotes doubled) when it holds a comma, a quote, a line break
// (CR as well as LF) or a NUL (some readers end a line at it).
[[nodiscard]] std::string csv_escape(const std::string& field);
// The fields escaped, comma-separated, ending in a newline.
[[nodiscard]] std::string csv_line(const std::vector<std::string>& fields);

}  // namespace ringsim::models
