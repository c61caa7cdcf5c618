#pragma once
// Bounds the memory the JSON parser takes for one token. nlohmann's lexer keeps the token it
// scans, and every byte of whitespace before it, whole in memory (twice for a string: the value
// and a copy for its error messages), so 10 MB of gzip that inflates to 10 GB of spaces, digits
// or one string would take over 10 GB. The guard sees the text first, block by block as it is
// read, and refuses a run of more than kMaxTraceTokenBytes between two structural characters
// ({ } [ ] , : or a string's quotes), naming the line where the run starts. It tracks strings
// (escaped quotes included), so a comma inside a string is not a boundary.
#include <cstdint>
#include <string>
#include <string_view>

#include "calibration/trace/trace_limits.hpp"

namespace ringsim::calibration {

class JsonTokenGuard {
 public:
  explicit JsonTokenGuard(std::string file, std::int64_t max_token_bytes = kMaxTraceTokenBytes)
      : file_(std::move(file)), max_(max_token_bytes) {}
  // The next bytes of the text, in order. Throws models::InputError (field "trace") at a run
  // longer than the bound.
  void scan(std::string_view block);

 private:
  [[noreturn]] void fail() const;
  std::string file_;
  std::int64_t max_;
  std::int64_t line_ = 1;       // the line being scanned
  std::int64_t run_ = 0;        // bytes since the last structural character
  std::int64_t run_line_ = 1;   // the line of that character (where the run starts)
  bool in_string_ = false, escaped_ = false;
};

}  // namespace ringsim::calibration
