#include "models/io/names.hpp"

#include <string>

#include "models/io/error.hpp"

namespace ringsim::models {
namespace {

// Enough of the offending text to recognise it, never the whole of a huge one.
std::string excerpt(std::string_view s) {
  std::string out;
  for (const char ch : s.substr(0, 40)) out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
  if (s.size() > 40) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

}  // namespace

void check_catalog_name(std::string_view name, std::string_view field, std::string_view what) {
  const auto bad = [&](const std::string& why) {
    throw InputError({}, 0, std::string(field), std::string(what) + " name '" + excerpt(name) + "' " + why);
  };
  if (name.empty()) bad("is empty");
  if (name.size() > kMaxNameBytes) bad("is longer than " + std::to_string(kMaxNameBytes) + " characters");
  if (name.front() == '.') bad("starts with '.'");
  for (const char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                    ch == '_' || ch == '-' || ch == '+';
    if (!ok) bad("may hold only letters, digits and . _ + - (a file outside the catalog is given by path)");
  }
}

void check_path(std::string_view path, std::string_view field) {
  const auto bad = [&](const std::string& why) {
    throw InputError({}, 0, std::string(field), "path '" + excerpt(path) + "' " + why);
  };
  if (path.empty()) bad("is empty");
  if (path.size() > kMaxPathBytes) bad("is longer than " + std::to_string(kMaxPathBytes) + " bytes");
  std::size_t component = 0;
  for (const char ch : path) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) bad("holds a control character");
    component = ch == '/' ? 0 : component + 1;
    if (component > 255) bad("has a file or folder name longer than 255 bytes");
  }
}

void check_profile_name(std::string_view name) {
  const auto slash = name.find('/');
  if (slash == std::string_view::npos) {
    check_catalog_name(name, "profile", "profile");
    return;
  }
  if (slash + 1 == name.size() || slash == 0)
    throw InputError({}, 0, "profile",
                     "'" + excerpt(name) + "' is not a profile: expected NAME, IMPL/NAME (configs/profiles/IMPL/NAME.json) "
                     "or a FILE.json (a folder is not a profile)");
  check_catalog_name(name.substr(0, slash), "profile", "profile implementation");
  check_catalog_name(name.substr(slash + 1), "profile", "profile");
}

}  // namespace ringsim::models
