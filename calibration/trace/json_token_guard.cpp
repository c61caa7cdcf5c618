#include "calibration/trace/json_token_guard.hpp"

#include "models/io/error.hpp"

namespace ringsim::calibration {

void JsonTokenGuard::scan(std::string_view block) {
  for (const char c : block) {
    bool boundary = false;
    if (in_string_) {
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == '"') in_string_ = false, boundary = true;
    } else {
      switch (c) {
        case '"': in_string_ = true; [[fallthrough]];
        case '{': case '}': case '[': case ']': case ',': case ':': boundary = true; break;
        default: break;
      }
    }
    if (boundary) {
      run_ = 0;
      run_line_ = line_;
    } else if (++run_ > max_) {
      fail();
    }
    if (c == '\n') ++line_;
  }
}

void JsonTokenGuard::fail() const {
  throw models::InputError(file_, run_line_, "trace",
                           std::string(in_string_ ? "a JSON string" : "a JSON token or a run of whitespace") +
                               " longer than the " + std::to_string(max_) +
                               " bytes accepted (no profiler writes one; the file is damaged or not a trace)");
}

}  // namespace ringsim::calibration
