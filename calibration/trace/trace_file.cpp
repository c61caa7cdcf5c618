#include "calibration/trace/trace_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "models/io/error.hpp"
#include "models/io/names.hpp"

namespace ringsim::calibration {

using models::InputError;

TraceFile::TraceFile(const std::string& path) {
  try {
    models::check_path(path, "trace");
  } catch (const InputError& e) {
    throw InputError({}, 0, "trace", "trace file " + e.message());
  }
  const auto fail = [&](const std::string& what) { throw InputError(path, 0, "trace", what); };
  // O_NONBLOCK: a FIFO without a writer must not block the open; it is refused below.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd_ < 0) fail(std::string("cannot open trace file: ") + std::strerror(errno));
  struct stat st{};
  std::string problem;
  if (::fstat(fd_, &st) != 0) problem = std::string("cannot read trace file: ") + std::strerror(errno);
  else if (S_ISDIR(st.st_mode)) problem = "is a directory, expected a trace file";
  else if (!S_ISREG(st.st_mode)) problem = "is not a regular file (a pipe or device), expected a trace file";
  else if (st.st_size > kMaxTraceFileBytes)
    problem = "trace file of " + std::to_string(st.st_size) + " bytes is larger than the " +
              std::to_string(kMaxTraceFileBytes) + " bytes accepted";
  if (!problem.empty()) {
    ::close(fd_);
    fd_ = -1;
    fail(problem);
  }
  size_ = st.st_size;
}

TraceFile::~TraceFile() {
  if (fd_ >= 0) ::close(fd_);
}

int TraceFile::release() noexcept {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

std::array<char, 16> TraceFile::head() const {
  std::array<char, 16> h{};
  if (fd_ >= 0 && ::pread(fd_, h.data(), h.size(), 0) < 0) h.fill(0);
  return h;
}

bool is_sqlite_head(const std::array<char, 16>& head) noexcept {
  return std::string_view(head.data(), head.size()) == std::string_view("SQLite format 3\0", 16);
}

}  // namespace ringsim::calibration
