#include "calibration/trace/read_trace.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <string_view>

#include "calibration/trace/kineto.hpp"

namespace ringsim::calibration {

TraceFormat trace_format(const std::string& path) {
  // O_NONBLOCK and regular files only: a FIFO or device is left to the reader to refuse.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return TraceFormat::KinetoJson;
  struct stat st{};
  std::array<char, 16> head{};
  const bool sqlite = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                      ::read(fd, head.data(), head.size()) == static_cast<ssize_t>(head.size()) &&
                      std::string_view(head.data(), head.size()) == std::string_view("SQLite format 3\0", 16);
  ::close(fd);
  return sqlite ? TraceFormat::NsysSqlite : TraceFormat::KinetoJson;
}

Trace read_trace(const std::string& path, const TraceProgress& progress, const std::string& step_regex) {
  // The option is checked whatever the files are, so a bad regex is never silently unused.
  check_step_regex(step_regex);
  if (trace_format(path) == TraceFormat::NsysSqlite) return read_nsys_sqlite(path, step_regex);
  return read_kineto_trace(path, progress);
}

}  // namespace ringsim::calibration
