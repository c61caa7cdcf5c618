#pragma once
// Several outputs of one command that appear together or not at all: `trace synthesize`'s rank
// files, `calibrate`'s profile, report and links file. Each is staged as it is ready (written to
// its temporary, synced and closed: a full disk or an unusable target fails here, before any
// target is touched); commit() renames them all, in the order staged. Destroyed without
// commit(), or when staging fails, the set removes every temporary, and the targets keep what
// they held. A rename can still fail after others succeeded (the folder made read-only in
// between), the one window left: renames are the last and smallest step.
//
// A folder lock (io/folder_lock.hpp) handed to the set is held until the set is committed or
// destroyed: a read-modify-write of a shared file stays one step for concurrent writers.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/folder_lock.hpp"
#include "io/output_file.hpp"

namespace ringsim::io {

class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet();

  // Writes `text` to a temporary beside `path` now. Throws OutputError (the set's temporaries
  // stay until it is destroyed, then go). "-" (or "") is standard output, written by commit()
  // after the files are in place.
  void stage(const std::string& path, std::string_view text);
  // Keeps `lock` until commit() or destruction.
  void hold(FolderLock lock);
  // Renames every staged file over its target, then releases the locks.
  void commit();
  [[nodiscard]] std::size_t size() const noexcept { return files_.size(); }

 private:
  std::vector<std::unique_ptr<AtomicFile>> files_;
  std::vector<std::string> to_stdout_;
  std::vector<FolderLock> locks_;
};

}  // namespace ringsim::io
