#pragma once
// Opening a trace file so that nothing odd can stall or exhaust a run, whatever its format: the
// path is checked, a FIFO without a writer cannot block the open (O_NONBLOCK), and only a regular
// file of at most kMaxTraceFileBytes (trace_limits.hpp) is accepted. The readers of each format start here.
#include <array>
#include <cstdint>
#include <string>

#include "calibration/trace/trace_limits.hpp"

namespace ringsim::calibration {

class TraceFile {
 public:
  // Throws models::InputError (field "trace") naming the file and the problem.
  explicit TraceFile(const std::string& path);
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;
  [[nodiscard]] int fd() const noexcept { return fd_; }
  // Hands the descriptor over (to gzdopen, say): the caller closes it.
  [[nodiscard]] int release() noexcept;
  [[nodiscard]] std::int64_t size() const noexcept { return size_; }
  // The first 16 bytes (fewer when the file is shorter: the rest zero), read at offset 0 without
  // moving the file's position.
  [[nodiscard]] std::array<char, 16> head() const;

 private:
  int fd_ = -1;
  std::int64_t size_ = 0;
};

// SQLite databases begin with this header (Nsight Systems' `nsys export --type sqlite`).
[[nodiscard]] bool is_sqlite_head(const std::array<char, 16>& head) noexcept;

}  // namespace ringsim::calibration
