#include "models/io/json_fields.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "models/io/error.hpp"
#include "models/io/input_file.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {
namespace {
std::string num(double v) { return short_number(v); }
}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  InputFile in(path, {}, "JSON file", kMaxConfigFileBytes);
  return parse_json_text(in.read_all(), path);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& file) {
  // Keys seen in each open object, to refuse duplicates (the parser would keep the last one
  // silently), and the nesting depth (configs are a few levels deep).
  std::vector<std::vector<std::string>> keys;
  const auto check = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (depth > 64) throw InputError(file, 0, {}, "JSON nested deeper than 64 levels");
    if (event == E::object_start) keys.emplace_back();
    if (event == E::object_end && !keys.empty()) keys.pop_back();
    if (event == E::key && !keys.empty()) {
      const auto& k = parsed.get_ref<const std::string&>();
      auto& seen = keys.back();
      if (std::find(seen.begin(), seen.end(), k) != seen.end())
        throw InputError(file, 0, k, "duplicated key in a JSON object");
      seen.push_back(k);
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, check);
  } catch (const nlohmann::json::parse_error& e) {
    // Turn the byte offset into a line number so the message points at the mistake.
    const auto upto = std::min<std::size_t>(e.byte, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(upto), '\n');
    throw InputError(file, line, {}, "malformed JSON: " + std::string(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // out_of_range.406: a number the parser cannot hold (1e400).
    std::string what = e.what();
    if (const auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    throw InputError(file, 0, {}, "malformed JSON: " + what);
  }
}

const nlohmann::json* JsonFields::find(std::string_view path) const {
  read_.emplace(path);
  const nlohmann::json* cur = &doc_;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto dot = path.find('.', start);
    const std::string key(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (!cur->is_object()) return nullptr;
    const auto it = cur->find(key);
    if (it == cur->end()) return nullptr;
    cur = &*it;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return cur;
}

namespace {

bool documentation_key(std::string_view k) {
  return k == "description" || k == "source" || k == "sources" || k == "note" || k == "notes" || k == "comment" ||
         k.ends_with("_note") || k.ends_with("_comment");
}

// The known key closest to a misspelt one (edit distance at most 3), for the message.
std::string closest(std::string_view key, const std::set<std::string, std::less<>>& read, const std::string& prefix) {
  std::string best;
  std::size_t best_d = 4;
  for (auto it = read.lower_bound(prefix); it != read.end() && it->starts_with(prefix); ++it) {
    std::string_view cand(*it);
    cand.remove_prefix(prefix.size());
    if (cand.find('.') != std::string_view::npos) continue;
    std::vector<std::size_t> row(cand.size() + 1);
    for (std::size_t j = 0; j <= cand.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= key.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= cand.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (key[i - 1] == cand[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    if (row[cand.size()] < best_d) {
      best_d = row[cand.size()];
      best = std::string(cand);
    }
  }
  return best;
}

}  // namespace

void JsonFields::reject_unread(std::string_view kind) const {
  // Depth-first over the objects whose members were looked up one by one.
  const auto walk = [&](const auto& self, const nlohmann::json& obj, const std::string& prefix) -> void {
    for (const auto& [key, value] : obj.items()) {
      const std::string path = prefix + key;
      const std::string inner = path + ".";
      const auto below = read_.lower_bound(inner);
      const bool members_read = below != read_.end() && below->starts_with(inner);
      if (members_read && value.is_object()) {
        self(self, value, inner);
        continue;
      }
      if (read_.count(path) || documentation_key(key)) continue;
      std::string message = "unknown field in a " + std::string(kind);
      if (const auto near = closest(key, read_, prefix); !near.empty()) message += " (did you mean " + prefix + near + "?)";
      throw InputError(file_, 0, path, message);
    }
  };
  if (doc_.is_object()) walk(walk, doc_, "");
}

const nlohmann::json& JsonFields::require(std::string_view path) const {
  const auto* v = find(path);
  if (!v) throw InputError(file_, 0, std::string(path), "missing required field");
  return *v;
}

std::string JsonFields::string(std::string_view path) const {
  const auto& v = require(path);
  if (!v.is_string() || v.get<std::string>().empty())
    throw InputError(file_, 0, std::string(path), "expected a non-empty string");
  return v.get<std::string>();
}

std::string JsonFields::string_or(std::string_view path, std::string fallback) const {
  const auto* v = find(path);
  if (!v) return fallback;
  if (!v->is_string()) throw InputError(file_, 0, std::string(path), "expected a string");
  return v->get<std::string>();
}

double JsonFields::number(std::string_view path) const {
  const auto& v = require(path);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    throw InputError(file_, 0, std::string(path), "expected a finite number");
  return v.get<double>();
}

std::optional<double> JsonFields::optional_number(std::string_view path) const {
  if (!find(path)) return std::nullopt;
  return number(path);
}

bool JsonFields::boolean_or(std::string_view path, bool fallback) const {
  const auto* v = find(path);
  if (!v) return fallback;
  if (!v->is_boolean()) throw InputError(file_, 0, std::string(path), "expected true or false");
  return v->get<bool>();
}

std::optional<double> JsonFields::optional_sourced(std::string_view path) const {
  const auto* v = find(path);
  if (!v) return std::nullopt;
  const std::string p(path);
  if (!v->is_object() || !v->contains("value"))
    throw InputError(file_, 0, p, "expected {\"value\": number, \"source\": \"...\"}");
  const auto src = v->find("source");
  if (src == v->end() || !src->is_string() || src->get<std::string>().empty())
    throw InputError(file_, 0, p + ".source", "every figure must cite its public source");
  const auto& val = (*v)["value"];
  if (val.is_null()) return std::nullopt;
  if (!val.is_number() || !std::isfinite(val.get<double>()))
    throw InputError(file_, 0, p + ".value", "expected a finite number or null");
  return val.get<double>();
}

double JsonFields::positive_sourced(std::string_view path) const {
  const auto v = optional_sourced(path);
  if (!v) throw InputError(file_, 0, std::string(path), "missing required figure");
  if (*v <= 0) throw InputError(file_, 0, std::string(path), "expected a positive value");
  return *v;
}

double JsonFields::non_negative_sourced(std::string_view path) const {
  const auto v = optional_sourced(path);
  if (!v) throw InputError(file_, 0, std::string(path), "missing required figure");
  if (*v < 0) throw InputError(file_, 0, std::string(path), "expected a value >= 0");
  return *v;
}

std::optional<double> JsonFields::optional_sourced_in(std::string_view path, double lo, double hi) const {
  const auto v = optional_sourced(path);
  if (v && !(*v >= lo && *v <= hi))
    throw InputError(file_, 0, std::string(path), "expected a value in [" + num(lo) + ", " + num(hi) + "], got " + num(*v));
  return v;
}

double JsonFields::sourced_in(std::string_view path, double lo, double hi) const {
  const auto v = optional_sourced_in(path, lo, hi);
  if (!v) throw InputError(file_, 0, std::string(path), "missing required figure");
  return *v;
}

std::int64_t JsonFields::integer_value(const nlohmann::json& v, const std::string& path, std::int64_t lo,
                                       std::int64_t hi) const {
  // Appended in steps: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string&&.
  std::string range = "[";
  range.append(std::to_string(lo)).append(", ").append(std::to_string(hi)).append("]");
  const auto bad = [&](const std::string& got) {
    throw InputError(file_, 0, path, "expected an integer in " + range + ", got " + got);
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi) || static_cast<std::int64_t>(u) < lo) bad(std::to_string(u));
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if (i < lo || i > hi) bad(std::to_string(i));
    return i;
  }
  if (v.is_number_float()) {
    // 4.0 or 1e3 is a whole number written as a float; 4.5 is not a count.
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) || d > static_cast<double>(hi))
      bad(num(d));
    return static_cast<std::int64_t>(d);
  }
  throw InputError(file_, 0, path, "expected an integer in " + range + ", got a " + v.type_name());
}

std::int64_t JsonFields::count_sourced(std::string_view path, std::int64_t lo, std::int64_t hi) const {
  const auto* v = find(path);
  if (!v) throw InputError(file_, 0, std::string(path), "missing required figure");
  (void)optional_sourced(path);  // the {"value", "source"} shape and its source
  const auto& val = (*v)["value"];
  if (val.is_null()) throw InputError(file_, 0, std::string(path), "missing required figure");
  return integer_value(val, std::string(path), lo, hi);
}

std::int64_t JsonFields::integer(std::string_view path, std::int64_t lo, std::int64_t hi) const {
  return integer_value(require(path), std::string(path), lo, hi);
}

std::int64_t JsonFields::integer_or(std::string_view path, std::int64_t lo, std::int64_t hi, std::int64_t fallback) const {
  const auto* v = find(path);
  return v ? integer_value(*v, std::string(path), lo, hi) : fallback;
}

std::string JsonFields::one_of_or(std::string_view path, std::initializer_list<std::string_view> choices,
                                  std::string fallback) const {
  const auto* v = find(path);
  if (!v) return fallback;
  std::string list;
  for (const auto c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
  if (!v->is_string()) throw InputError(file_, 0, std::string(path), "expected one of " + list);
  const auto& s = v->get_ref<const std::string&>();
  for (const auto c : choices)
    if (s == c) return s;
  std::string shown = s.substr(0, 40);
  throw InputError(file_, 0, std::string(path), "expected one of " + list + ", got '" + shown + "'");
}

}  // namespace ringsim::models
