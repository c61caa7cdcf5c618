#pragma once
// Typed, located access to the fields of a config JSON document: every failure names the file
// and the dotted field path, and sourced figures ({"value": x, "source": "..."}) must carry a
// non-empty source.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ringsim::models {

// Parses a JSON file (a regular file of at most kMaxConfigFileBytes, models/io/input_file.hpp);
// syntax errors name the file and line. Numbers the parser cannot hold (1e400), duplicated keys
// in an object and nesting deeper than 64 levels are InputErrors too.
[[nodiscard]] nlohmann::json read_json_file(const std::string& path);
// The same for text already in memory; `file` names it in errors.
[[nodiscard]] nlohmann::json parse_json_text(const std::string& text, const std::string& file);

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
  // Sourced figures in a physical range [lo, hi]: required, or optional (absent or null ->
  // nullopt). The bounds keep every time and rate computed from them finite.
  [[nodiscard]] double sourced_in(std::string_view path, double lo, double hi) const;
  [[nodiscard]] std::optional<double> optional_sourced_in(std::string_view path, double lo, double hi) const;
  // A sourced count: an integer (4 or 4.0, never 4.5) in [lo, hi].
  [[nodiscard]] std::int64_t count_sourced(std::string_view path, std::int64_t lo, std::int64_t hi) const;
  // A plain integer field in [lo, hi], or `fallback` when absent.
  [[nodiscard]] std::int64_t integer_or(std::string_view path, std::int64_t lo, std::int64_t hi,
                                        std::int64_t fallback) const;
  [[nodiscard]] std::int64_t integer(std::string_view path, std::int64_t lo, std::int64_t hi) const;
  // A string that must be one of `choices`, or `fallback` when absent.
  [[nodiscard]] std::string one_of_or(std::string_view path, std::initializer_list<std::string_view> choices,
                                      std::string fallback) const;
  [[nodiscard]] const nlohmann::json* find(std::string_view path) const;
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  // Throws InputError naming the file and the first field that no accessor has looked up: a
  // misspelt key (matmul_eficiency) would otherwise silently take its default, and a file of
  // another kind (a hardware file given as a profile) would run on defaults. Call it after every
  // field was read. An object looked up whole (read raw by its caller) counts as read with its
  // contents; an object only some of whose members were looked up is checked member by member.
  // Documentation keys are always allowed: description, source, sources, note, notes, comment
  // and any key ending in _note or _comment. `kind` names the file's role ("profile file").
  void reject_unread(std::string_view kind) const;

 private:
  [[nodiscard]] const nlohmann::json& require(std::string_view path) const;
  [[nodiscard]] std::int64_t integer_value(const nlohmann::json& v, const std::string& path, std::int64_t lo,
                                           std::int64_t hi) const;
  const nlohmann::json& doc_;
  std::string file_;
  mutable std::set<std::string, std::less<>> read_;  // every path find() was asked for
};

}  // namespace ringsim::models
