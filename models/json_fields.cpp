#include "models/json_fields.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "models/error.hpp"

namespace ringsim::models {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, {}, "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Turn the byte offset into a line number so the message points at the mistake.
    const auto upto = std::min<std::size_t>(e.byte, text.size());
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(upto), '\n');
    throw InputError(path, line, {}, "malformed JSON: " + std::string(e.what()));
  }
}

const nlohmann::json* JsonFields::find(std::string_view path) const {
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

}  // namespace ringsim::models
