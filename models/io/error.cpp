#include "models/io/error.hpp"

namespace ringsim::models {
namespace {
std::string format(const std::string& file, std::int64_t line, const std::string& field,
                   const std::string& message) {
  std::string s;
  if (!file.empty()) {
    s.append(file);
    if (line > 0) s.append(":").append(std::to_string(line));
    s.append(": ");
  }
  if (!field.empty()) s.append("field '").append(field).append("': ");
  s.append(message);
  return s;
}
}  // namespace

InputError::InputError(std::string file, std::int64_t line, std::string field, std::string message)
    : std::runtime_error(format(file, line, field, message)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)),
      message_(std::move(message)) {}

InputError InputError::located(std::string file, std::int64_t line) const {
  return {std::move(file), line, field_, message_};
}

InputError InputError::with_field(std::string field) const { return {file_, line_, std::move(field), message_}; }

}  // namespace ringsim::models
