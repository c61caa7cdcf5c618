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
// An integer in [lo, hi] (counts of repeats, device indices: whatever will be narrowed).
[[nodiscard]] std::int64_t parse_int_in(std::string_view text, std::string_view field, std::int64_t lo, std::int64_t hi);
[[nodiscard]] double parse_double(std::string_view text, std::string_view field);
// A token count as outputs print it: an integer, or a number with a binary suffix k, M or G
// (x 1024, 1024^2, 1024^3: "128k" = 131072, "1M" = 1048576, "1.5k" = 1536) whose value is a whole
// number; positive, at most 2^50.
[[nodiscard]] std::int64_t parse_token_count(std::string_view text, std::string_view field);
// The same, or 0 (an empty KV cache), at most hi.
[[nodiscard]] std::int64_t parse_token_count_or_zero(std::string_view text, std::string_view field, std::int64_t hi);
// A rate as outputs print it: a number with an optional metric suffix k, M or G (x 1000, 10^6,
// 10^9: "200k" = 200000, "34.7 k", "1e6"); finite and positive.
[[nodiscard]] double parse_metric_rate(std::string_view text, std::string_view field);
// Latency targets (--ttft, --tpot and a plan file's ttft, tpot) lie in [1 us, 1 day]: below a
// microsecond no step of any model is timed (a kernel launch alone takes microseconds), and a
// denormal target would make "how far from it" an infinite percentage.
inline constexpr double kMinDurationS = 1e-6;
inline constexpr double kMaxDurationS = 86400;
// A duration with its unit, "5s", "50ms" or "2.5 s": seconds in [kMinDurationS, kMaxDurationS]
// (a bare number is refused, its unit unknown).
[[nodiscard]] double parse_duration_s(std::string_view text, std::string_view field);
// "AxB" (e.g. a mesh "2x4" or a tile "2048x4096"): two positive integers.
[[nodiscard]] std::pair<std::int64_t, std::int64_t> parse_pair(std::string_view text, std::string_view field);
[[nodiscard]] std::vector<std::string> split(std::string_view text, char sep);
// "a, b, c": a list for a message.
[[nodiscard]] std::string join_list(const std::vector<std::string>& items);
// `v` with `digits` significant digits (printf %g), for messages that quote a number.
[[nodiscard]] std::string short_number(double v, int digits = 6);
[[nodiscard]] std::string_view trim(std::string_view text) noexcept;

// Whitespace-separated integers of a text file ('#' starts a comment), each with the line it
// stands on, so callers can name the line of a value they reject. `what` names the file's role
// in messages. More than max_values values is an InputError naming the line of the first one
// too many, raised before the rest of the file is read.
struct LocatedInt {
  std::int64_t value = 0;
  std::int64_t line = 0;
};
[[nodiscard]] std::vector<LocatedInt> read_int_list(const std::string& path, std::string_view field,
                                                    std::string_view what, std::int64_t max_values);

}  // namespace ringsim::models
