#include "io/output_file.hpp"

#include "io/interrupt.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace ringsim::io {
namespace {

std::string describe(const std::string& what, const std::string& path, int err) {
  return what + " " + path + ": " + std::strerror(err);
}

// The folder part of `path` ("" for the current folder) and the file name.
std::pair<std::string, std::string> split_path(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash + 1), path.substr(slash + 1)};
}

// 64 unpredictable bits as hex: the temporary's name cannot be guessed ahead of the run.
std::string random_suffix() {
  unsigned char bytes[8] = {};
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const auto n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got < sizeof bytes) {
    // No entropy source: fall back on the clock and the address space layout; the exclusive
    // create below still refuses anything already there.
    const auto mix = static_cast<unsigned long long>(::getpid()) ^ reinterpret_cast<unsigned long long>(&got) ^
                     static_cast<unsigned long long>(::time(nullptr)) * 0x9E3779B97F4A7C15ull;
    std::memcpy(bytes, &mix, sizeof bytes);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (const unsigned char b : bytes) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

}  // namespace

OutputError::OutputError(std::string path, int error_number, const std::string& message)
    : std::runtime_error(message), path_(std::move(path)), errno_(error_number) {}

bool OutputError::target_problem() const noexcept {
  switch (errno_) {
    case EISDIR: case ENOENT: case ENOTDIR: case EACCES: case EPERM: case EROFS: case ENAMETOOLONG: case ELOOP:
    case EEXIST: case EINVAL: case ENXIO: return true;
    default: return false;
  }
}

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  if (target_.empty() || target_.back() == '/')
    throw OutputError(target_, EISDIR, "cannot write " + (target_.empty() ? std::string("an empty path") : target_) +
                                           ": expected a file name, not a folder");
  struct stat st{};
  const bool exists = ::lstat(target_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw OutputError(target_, EISDIR, "cannot write " + target_ + ": it is a directory");
  if (exists && S_ISBLK(st.st_mode))
    throw OutputError(target_, EINVAL, "cannot write " + target_ + ": it is a block device");
  if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
    // /dev/null, a terminal, a named pipe: not a file that could be left half-written, and not
    // one to replace. Written directly; a pipe nobody reads is refused instead of waited on.
    fd_ = ::open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    const int flags = fd_ >= 0 ? ::fcntl(fd_, F_GETFL) : -1;
    if (fd_ < 0 || flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) != 0) {
      const int err = errno;
      if (fd_ >= 0) ::close(fd_);
      fd_ = -1;
      throw OutputError(target_, err,
                        err == ENXIO ? "cannot write " + target_ + ": no process reads that pipe"
                                     : describe("cannot write", target_, err));
    }
    return;
  }
  const auto [folder, name] = split_path(target_);
  // Hidden, named after the target (shortened: NAME_MAX counts the suffix too).
  std::string stem = ".";
  stem.append(name, 0, 120).append(".");
  for (int attempt = 0; attempt < 100; ++attempt) {
    temporary_ = folder + stem + random_suffix() + ".tmp";
    // O_EXCL with O_CREAT fails on anything already at that name, a link included (links are
    // not followed); the mode is subject to the umask like any new file's.
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ >= 0) {
      slot_ = register_temporary(temporary_);
      return;
    }
    if (errno != EEXIST) break;
  }
  const int err = errno;
  temporary_.clear();
  throw OutputError(target_, err, describe("cannot create a file beside", target_, err));
}

AtomicFile::~AtomicFile() {
  if (!committed_) discard();
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  // Forgotten only once gone: a signal in between finds it and unlinks a missing name (harmless).
  unregister_temporary(slot_);
  slot_ = -1;
  temporary_.clear();
}

void AtomicFile::write(std::string_view data) {
  if (fd_ < 0 || prepared_) throw OutputError(target_, EBADF, "write to " + target_ + " after it was closed");
  buffer_.append(data);
  if (buffer_.size() >= (std::size_t{1} << 20)) flush();
}

void AtomicFile::flush() {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const auto n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      discard();
      throw OutputError(target_, err, describe("cannot write", target_, err));
    }
    done += static_cast<std::size_t>(n);
  }
  written_ += done;
  buffer_.clear();
}

void AtomicFile::prepare() {
  if (prepared_ || committed_) return;
  flush();
  if (temporary_.empty()) {  // written directly (a device or a pipe)
    const int closed = ::close(fd_);
    const int err = errno;
    fd_ = -1;
    if (closed != 0) throw OutputError(target_, err, describe("cannot write", target_, err));
    prepared_ = true;
    return;
  }
  // The data must be on disk before the name points at it, or a crash could leave an empty
  // file under the target's name.
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) {
    const int err = errno;
    discard();
    throw OutputError(target_, err, describe("cannot write", target_, err));
  }
  const int closed = ::close(fd_);
  const int close_err = errno;
  fd_ = -1;
  if (closed != 0) {
    discard();
    throw OutputError(target_, close_err, describe("cannot write", target_, close_err));
  }
  prepared_ = true;
}

void AtomicFile::commit() {
  if (committed_) return;
  prepare();
  if (!temporary_.empty() && ::rename(temporary_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    discard();
    throw OutputError(target_, err, describe("cannot write", target_, err));
  }
  unregister_temporary(slot_);
  slot_ = -1;
  committed_ = true;
}

Output::Output(const std::string& path) {
  if (!path.empty() && path != "-") file_ = std::make_unique<AtomicFile>(path);
}

void Output::write(std::string_view data) {
  if (file_) {
    file_->write(data);
    return;
  }
  if (std::fwrite(data.data(), 1, data.size(), stdout) != data.size())
    throw OutputError("-", errno ? errno : EIO, "cannot write to standard output");
}

void Output::commit() {
  if (file_) {
    file_->commit();
    return;
  }
  if (std::fflush(stdout) != 0) throw OutputError("-", errno ? errno : EIO, "cannot write to standard output");
}

JournalFile::JournalFile(std::string path, std::size_t keep) : path_(std::move(path)) {
  if (path_.empty() || path_.back() == '/')
    throw OutputError(path_, EISDIR, "cannot write " + (path_.empty() ? std::string("an empty path") : path_) +
                                         ": expected a file name, not a folder");
  // O_NONBLOCK: a FIFO planted at the name must not block the open (it is refused below).
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0666);
  if (fd_ < 0) {
    const int err = errno;
    throw OutputError(path_, err,
                      err == ELOOP ? "cannot write " + path_ + ": it is a symbolic link (not followed)"
                                   : describe("cannot write", path_, err));
  }
  struct stat st{};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw OutputError(path_, EINVAL, "cannot write " + path_ + ": not a regular file");
  }
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) != 0 ||
      ::ftruncate(fd_, static_cast<off_t>(keep)) != 0 || ::lseek(fd_, 0, SEEK_END) < 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw OutputError(path_, err, describe("cannot write", path_, err));
  }
}

JournalFile::~JournalFile() {
  if (fd_ >= 0) ::close(fd_);
}

void JournalFile::write(std::string_view data) {
  if (fd_ < 0) throw OutputError(path_, EBADF, "write to " + path_ + " after it was closed");
  std::size_t done = 0;
  while (done < data.size()) {
    const auto n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      throw OutputError(path_, err, describe("cannot write", path_, err));
    }
    done += static_cast<std::size_t>(n);
  }
}

void JournalFile::close() {
  if (fd_ < 0) return;
  const bool synced = ::fsync(fd_) == 0 || errno == EINVAL || errno == EROFS;
  const int sync_err = errno;
  const int closed = ::close(fd_);
  const int close_err = errno;
  fd_ = -1;
  if (!synced) throw OutputError(path_, sync_err, describe("cannot write", path_, sync_err));
  if (closed != 0) throw OutputError(path_, close_err, describe("cannot write", path_, close_err));
}

void write_output(const std::string& path, std::string_view text) {
  Output out(path);
  out.write(text);
  out.commit();
}

}  // namespace ringsim::io
