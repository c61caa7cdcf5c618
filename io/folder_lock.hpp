#pragma once
// An exclusive lock on a folder for a read-modify-write of a file in it (calibrate's links file,
// DIR/HARDWARE.json: one command writes its intra-node hop, another its inter-node hop, each
// keeping the other's). Two commands that read the file at once and each renamed its own version
// over it would lose one hop; under the lock the second reads what the first wrote.
//
// The lock is flock(2) on the folder itself, not on the file: the file is replaced by a rename,
// so a lock on it would lock the old copy, and a separate lock file would be left beside the
// configs. It is advisory (every ringsim writer takes it), waits for the holder, and is released
// by the kernel if the holder dies. Throws OutputError when the folder cannot be opened.
#include <string>

namespace ringsim::io {

class FolderLock {
 public:
  explicit FolderLock(const std::string& folder);
  FolderLock(FolderLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FolderLock& operator=(FolderLock&& o) noexcept;
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;
  ~FolderLock();

 private:
  int fd_ = -1;
};

}  // namespace ringsim::io
