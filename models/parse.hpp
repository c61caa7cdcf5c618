#pragma once
// Strict parsers for the small values that specs and files carry; they throw InputError
// naming the field, never accept trailing junk, and never return NaN or infinity.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::models {

[[nodiscard]] std::int64_t parse_int(std::string_view text, std::string_view field);
[[nodiscard]] std::int64_t parse_positive_int(std::string_view text, std::string_view field);
[[nodiscard]] double parse_double(std::string_view text, std::string_view field);
// "AxB" (e.g. a mesh "2x4" or a tile "2048x4096"): two positive integers.
[[nodiscard]] std::pair<std::int64_t, std::int64_t> parse_pair(std::string_view text, std::string_view field);
[[nodiscard]] std::vector<std::string> split(std::string_view text, char sep);
[[nodiscard]] std::string_view trim(std::string_view text) noexcept;

}  // namespace ringsim::models
