#include "models/io/parse.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "models/io/error.hpp"
#include "models/io/input_file.hpp"

namespace ringsim::models {

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::int64_t parse_int(std::string_view text, std::string_view field) {
  const auto t = trim(text);
  std::int64_t v = 0;
  const auto* end = t.data() + t.size();
  const auto [p, ec] = std::from_chars(t.data(), end, v);
  if (t.empty() || ec != std::errc() || p != end)
    throw InputError({}, 0, std::string(field), "expected an integer, got '" + std::string(t) + "'");
  return v;
}

std::int64_t parse_positive_int(std::string_view text, std::string_view field) {
  const auto v = parse_int(text, field);
  if (v <= 0) throw InputError({}, 0, std::string(field), "expected a positive integer, got " + std::to_string(v));
  return v;
}

std::int64_t parse_int_in(std::string_view text, std::string_view field, std::int64_t lo, std::int64_t hi) {
  const auto v = parse_int(text, field);
  if (v < lo || v > hi)
    throw InputError({}, 0, std::string(field),
                     "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                         std::to_string(v));
  return v;
}

double parse_double(std::string_view text, std::string_view field) {
  const auto t = trim(text);
  double v = 0;
  const auto* end = t.data() + t.size();
  const auto [p, ec] = std::from_chars(t.data(), end, v);
  if (t.empty() || ec != std::errc() || p != end || !std::isfinite(v))
    throw InputError({}, 0, std::string(field), "expected a finite number, got '" + std::string(t) + "'");
  return v;
}

namespace {

// The number before an optional k / M / G suffix and the suffix's power (0 without one); a
// suffix may follow a space ("34.7 k", as the tables print rates).
std::pair<double, int> split_suffix(std::string_view text, std::string_view field, const char* expected,
                                    bool exponent = false) {
  auto t = trim(text);
  int power = 0;
  if (!t.empty()) {
    const char last = t.back();
    if (last == 'k' || last == 'K') power = 1;
    else if (last == 'M') power = 2;
    else if (last == 'G') power = 3;
    if (power) t = trim(t.substr(0, t.size() - 1));
  }
  // Plain decimals only (a rate may take an exponent: 1e6): no sign, hex or nan/inf spellings.
  const bool plain = !t.empty() && std::all_of(t.begin(), t.end(), [&](char c) {
    return (c >= '0' && c <= '9') || c == '.' || (exponent && (c == 'e' || c == 'E' || c == '+' || c == '-'));
  });
  double v = 0;
  const auto* end = t.data() + t.size();
  const auto [p, ec] = std::from_chars(t.data(), end, v);
  if (!plain || ec != std::errc() || p != end || !std::isfinite(v) || !(v > 0))
    throw InputError({}, 0, std::string(field), std::string(expected) + ", got '" + std::string(trim(text)) + "'");
  return {v, power};
}

}  // namespace

std::int64_t parse_token_count(std::string_view text, std::string_view field) {
  const char* expected = "expected a positive token count (an integer, or with k, M or G: 131072, 128k, 1M)";
  const auto [v, power] = split_suffix(text, field, expected);
  const double x = std::ldexp(v, 10 * power);
  constexpr double kMax = 1125899906842624.0;  // 2^50: far beyond any sequence, exact in a double
  if (!(x <= kMax) || x != std::floor(x))  // a positive whole number is at least 1
    throw InputError({}, 0, std::string(field),
                     std::string(expected) + ", got '" + std::string(trim(text)) + "'" +
                         (x > kMax ? " (over 2^50)" : x != std::floor(x) ? " (not a whole number of tokens)" : ""));
  return static_cast<std::int64_t>(x);
}

std::int64_t parse_token_count_or_zero(std::string_view text, std::string_view field, std::int64_t hi) {
  if (trim(text) == "0") return 0;
  const std::int64_t n = parse_token_count(text, field);
  if (n > hi)
    throw InputError({}, 0, std::string(field),
                     "expected at most " + std::to_string(hi) + " tokens, got '" + std::string(trim(text)) + "'");
  return n;
}

double parse_metric_rate(std::string_view text, std::string_view field) {
  const auto [v, power] = split_suffix(text, field, "expected a positive number (with k, M or G: 200000, 200k, 1.5M)", true);
  const double x = v * std::pow(1000.0, power);
  if (!std::isfinite(x))
    throw InputError({}, 0, std::string(field), "expected a finite number, got '" + std::string(trim(text)) + "'");
  return x;
}

double parse_duration_s(std::string_view text, std::string_view field) {
  const auto t = trim(text);
  const auto fail = [&]() -> double {
    throw InputError({}, 0, std::string(field),
                     "expected a duration from 1 us to a day (1e-6 s to 86400 s) with its unit, such as 5s or 50ms, got '" +
                         std::string(t) + "'");
  };
  double scale = 0;
  std::string_view number;
  if (t.ends_with("ms")) scale = 1e-3, number = t.substr(0, t.size() - 2);
  else if (t.ends_with("s")) scale = 1, number = t.substr(0, t.size() - 1);
  else return fail();
  number = trim(number);
  double v = 0;
  const auto* end = number.data() + number.size();
  const auto [p, ec] = std::from_chars(number.data(), end, v);
  if (number.empty() || ec != std::errc() || p != end || !std::isfinite(v) || !(v * scale >= kMinDurationS) ||
      !(v * scale <= kMaxDurationS))
    return fail();
  return v * scale;
}

std::pair<std::int64_t, std::int64_t> parse_pair(std::string_view text, std::string_view field) {
  const auto t = trim(text);
  const auto x = t.find('x');
  if (x == std::string_view::npos)
    throw InputError({}, 0, std::string(field), "expected AxB (two positive integers), got '" + std::string(t) + "'");
  return {parse_positive_int(t.substr(0, x), field), parse_positive_int(t.substr(x + 1), field)};
}

std::string short_number(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = text.find(sep, start);
    out.emplace_back(trim(text.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start)));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::vector<LocatedInt> read_int_list(const std::string& path, std::string_view field, std::string_view what,
                                      std::int64_t max_values) {
  InputFile in(path, field, what, kMaxDataFileBytes);
  std::vector<LocatedInt> out;
  std::string line;
  while (in.next_line(line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::string_view rest(line);
    while (true) {
      const auto start = rest.find_first_not_of(" \t\r\v\f");
      if (start == std::string_view::npos) break;
      rest.remove_prefix(start);
      const auto end = std::min(rest.find_first_of(" \t\r\v\f"), rest.size());
      if (static_cast<std::int64_t>(out.size()) >= max_values)
        throw InputError(path, in.line_number(), std::string(field),
                         "more than the " + std::to_string(max_values) + " values expected in a " + std::string(what));
      try {
        out.push_back({parse_int(rest.substr(0, end), field), in.line_number()});
      } catch (const InputError& e) {
        throw e.located(path, in.line_number());
      }
      rest.remove_prefix(end);
    }
  }
  return out;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& x : items) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace ringsim::models
