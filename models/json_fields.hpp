#pragma once
// Typed, located access to the fields of a config JSON document: every failure names the file
// and the dotted field path, and sourced figures ({"value": x, "source": "..."}) must carry a
// non-empty source.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ringsim::models {

// Parses a JSON file; syntax errors name the file and line.
[[nodiscard]] nlohmann::json read_json_file(const std::string& path);

class JsonFields {
 public:
  JsonFields(const nlohmann::json& doc, std::string file) : doc_(doc), file_(std::move(file)) {}

  [[nodiscard]] std::string string(std::string_view path) const;
  [[nodiscard]] std::string string_or(std::string_view path, std::string fallback) const;
  [[nodiscard]] double number(std::string_view path) const;
  [[nodiscard]] std::optional<double> optional_number(std::string_view path) const;
  [[nodiscard]] bool boolean_or(std::string_view path, bool fallback) const;
  // {"value": x, "source": "..."}: value null -> nullopt; absent -> nullopt.
  [[nodiscard]] std::optional<double> optional_sourced(std::string_view path) const;
  [[nodiscard]] double positive_sourced(std::string_view path) const;
  [[nodiscard]] double non_negative_sourced(std::string_view path) const;
  [[nodiscard]] const nlohmann::json* find(std::string_view path) const;
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

 private:
  [[nodiscard]] const nlohmann::json& require(std::string_view path) const;
  const nlohmann::json& doc_;
  std::string file_;
};

}  // namespace ringsim::models
