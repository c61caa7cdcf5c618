#pragma once
// What the hostile-input families share (hostile_cases.cpp: configuration files and command lines;
// hostile_file_cases.cpp: CSV, mask, document and measurement files): the expectations' short
// names, one-field mutation of a JSON document, and the values no numeric field accepts.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/robust/hostile_cases.hpp"

namespace ringsim::test {

inline constexpr Expect R = Expect::Reject, A = Expect::Accept, E = Expect::Either;
using Values = std::vector<std::pair<std::string, Expect>>;  // raw JSON (or CSV) text -> expectation

inline std::string read_or_throw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `doc` with the value at `pointer` replaced by raw JSON text (which may be invalid JSON, such
// as 1e400 or NaN, on purpose); an empty `raw` removes the key.
inline std::string mutated(const nlohmann::json& doc, const std::string& pointer, const std::string& raw) {
  nlohmann::json j = doc;
  const nlohmann::json::json_pointer p(pointer);
  if (raw.empty()) {
    j[p.parent_pointer()].erase(p.back());
    return j.dump(2);
  }
  static const std::string kMark = "@@ringsim-mutation@@";
  j[p] = kMark;
  auto text = j.dump(2);
  text.replace(text.find("\"" + kMark + "\""), kMark.size() + 2, raw);
  return text;
}

// Numbers and non-numbers no config field accepts: wrong types, signs, parser overflow,
// literals JSON does not have.
inline const Values kNeverNumbers = {{"-1", R},    {"1e300", R}, {"1e400", R}, {"-1e400", R}, {"\"12\"", R},
                              {"true", R},  {"[]", R},    {"{}", R},    {"NaN", R},    {"Infinity", R},
                              {"0x10", R},  {"1e15 1", R}};

inline Values plus(Values a, const Values& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline std::string file_name(std::string s) {
  for (auto& ch : s)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))) ch = '_';
  return s.substr(0, 60);
}

}  // namespace ringsim::test
