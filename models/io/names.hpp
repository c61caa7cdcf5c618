#pragma once
// Names and paths from input, checked before they become file names: a catalog name
// (hardware, model, profile) is a short plain word, so it cannot reach outside configs/ or
// trip the file system ("File name too long"); a path given as such must be a usable path.
#include <string_view>

namespace ringsim::models {

// Longest catalog name and path accepted.
inline constexpr std::size_t kMaxNameBytes = 128;
inline constexpr std::size_t kMaxPathBytes = 4096;

// Throws InputError(field) unless `name` is 1 to kMaxNameBytes characters of [A-Za-z0-9._+-],
// not starting with '.' (so not "." or ".."). `what` names the catalog in the message.
void check_catalog_name(std::string_view name, std::string_view field, std::string_view what);
// A profile named NAME or IMPLEMENTATION/NAME (configs/profiles/IMPLEMENTATION/NAME.json):
// catalog names, so it stays inside configs/profiles. InputError(field "profile") otherwise.
void check_profile_name(std::string_view name);
// Throws InputError(field) unless `path` is non-empty, at most kMaxPathBytes long, has no NUL
// or control characters, and no component longer than 255 bytes (NAME_MAX).
void check_path(std::string_view path, std::string_view field);

}  // namespace ringsim::models
