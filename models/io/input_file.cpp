#include "models/io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "models/io/error.hpp"
#include "models/io/names.hpp"

namespace ringsim::models {

InputFile::InputFile(std::string path, std::string_view field, std::string_view what, std::int64_t max_bytes)
    : path_(std::move(path)), field_(field), max_bytes_(max_bytes) {
  try {
    check_path(path_, field);
  } catch (const InputError& e) {
    throw InputError({}, 0, e.field(), std::string(what) + " " + e.message());
  }
  // O_NONBLOCK: opening a FIFO without a writer must not wait; it is refused below anyway.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd_ < 0) fail("cannot open " + std::string(what) + ": " + std::strerror(errno));
  struct stat st{};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    fail("cannot read " + std::string(what) + ": " + std::strerror(err));
  }
  std::string problem;
  if (S_ISDIR(st.st_mode))
    problem = "is a directory, expected a " + std::string(what);
  else if (!S_ISREG(st.st_mode))
    problem = "is not a regular file (a pipe or device), expected a " + std::string(what);
  else if (st.st_size > max_bytes)
    problem = std::string(what) + " of " + std::to_string(st.st_size) + " bytes is larger than the " +
              std::to_string(max_bytes) + " bytes accepted";
  if (!problem.empty()) {
    ::close(fd_);
    fd_ = -1;
    fail(problem);
  }
  buf_.resize(std::size_t{1} << 16);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::fail(const std::string& message) const { throw InputError(path_, line_, field_, message); }

bool InputFile::fill() {
  if (eof_) return false;
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
  while (true) {
    const auto n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("read failed: ") + std::strerror(errno));
    if (n == 0) {
      eof_ = true;
      return false;
    }
    end_ += static_cast<std::size_t>(n);
    read_bytes_ += n;
    if (read_bytes_ > max_bytes_) fail("file grew past the " + std::to_string(max_bytes_) + " bytes accepted");
    return true;
  }
}

bool InputFile::next_line(std::string& line) {
  std::size_t scanned = pos_;
  while (true) {
    const void* nl = std::memchr(buf_.data() + scanned, '\n', end_ - scanned);
    if (nl) {
      const auto at = static_cast<std::size_t>(static_cast<const char*>(nl) - buf_.data());
      line.assign(buf_.data() + pos_, at - pos_);
      pos_ = at + 1;
      break;
    }
    if (end_ - pos_ > kMaxLineBytes) {
      ++line_;
      fail("line longer than " + std::to_string(kMaxLineBytes) + " bytes");
    }
    const std::size_t have = end_ - pos_;
    if (!fill()) {
      if (end_ == pos_) return false;
      line.assign(buf_.data() + pos_, end_ - pos_);  // last line without '\n'
      pos_ = end_;
      break;
    }
    scanned = pos_ + have;
  }
  ++line_;
  if (line.size() > kMaxLineBytes) fail("line longer than " + std::to_string(kMaxLineBytes) + " bytes");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

std::string InputFile::read_all() {
  std::string out(buf_.data() + pos_, end_ - pos_);
  pos_ = end_ = 0;
  while (fill()) {
    out.append(buf_.data(), end_);
    end_ = 0;
  }
  return out;
}

}  // namespace ringsim::models
