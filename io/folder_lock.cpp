#include "io/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/output_file.hpp"

namespace ringsim::io {

FolderLock::FolderLock(const std::string& folder) {
  const std::string path = folder.empty() ? std::string(".") : folder;
  fd_ = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) {
    const int err = errno;
    throw OutputError(path, err, "cannot write into " + path + ": " + std::strerror(err));
  }
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw OutputError(path, err, "cannot lock " + path + ": " + std::strerror(err));
  }
}

FolderLock& FolderLock::operator=(FolderLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the only descriptor releases the lock
}

}  // namespace ringsim::io
