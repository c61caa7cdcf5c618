#pragma once
// One error type for bad input anywhere in the library: it carries where (file, line, field)
// and what was expected. Only front-ends turn it into a message and exit code 2.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace ringsim::models {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::int64_t line, std::string field, std::string message);
  explicit InputError(std::string message) : InputError({}, 0, {}, std::move(message)) {}

  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] std::int64_t line() const noexcept { return line_; }
  [[nodiscard]] const std::string& field() const noexcept { return field_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

  // Same error, located: used when a parser of a value is called by a file reader that
  // knows the file and line the value came from.
  [[nodiscard]] InputError located(std::string file, std::int64_t line) const;
  [[nodiscard]] InputError with_field(std::string field) const;

 private:
  std::string file_;
  std::int64_t line_;
  std::string field_;
  std::string message_;
};

}  // namespace ringsim::models
