#pragma once
// Output files that are complete or absent: the bytes go to a temporary created exclusively
// (O_CREAT | O_EXCL | O_NOFOLLOW, an unpredictable name from getrandom, in the target's
// folder so the rename stays on one file system), which is renamed over the target only when
// everything was written, and removed on every failure path (exceptions included). An
// existing link at the target is replaced, never followed; a link planted at any temporary
// name makes the exclusive create fail and another name be drawn. A character device or a
// named pipe at the target (/dev/null, a terminal, a pipe someone reads) is written directly
// instead (a pipe without a reader is an error, not a wait); a directory or a block device is
// refused. The temporary is also removed when SIGINT or SIGTERM ends the run, once the front-end
// has called install_interrupt_cleanup() (io/interrupt.hpp). Shared by every front-end
// that writes files (ringsim's -o, trace and matrix files; the GUI's scenario and PNG export).
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ringsim::io {

// A file could not be written. target_problem(): the target itself is unusable (a directory,
// a missing or read-only folder, a name too long), i.e. the user's input is at fault rather
// than the machine (a full disk, an I/O error).
class OutputError : public std::runtime_error {
 public:
  OutputError(std::string path, int error_number, const std::string& message);
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] int error_number() const noexcept { return errno_; }
  [[nodiscard]] bool target_problem() const noexcept;

 private:
  std::string path_;
  int errno_;
};

class AtomicFile {
 public:
  // Creates the temporary beside `target`; throws OutputError (nothing left behind) when the
  // target is a directory or its folder cannot take a new file.
  explicit AtomicFile(std::string target);
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view data);  // buffered
  // Flushes, syncs and closes the temporary (a full disk shows here), leaving the rename to
  // commit(): a set of outputs prepares every file before renaming any (io/output_set.hpp), and
  // holds no descriptor per file meanwhile. Throws OutputError (and removes the temporary).
  void prepare();
  // Prepares (when not done yet) and renames the temporary over the target. Throws OutputError
  // (and removes the temporary) when any of it fails.
  void commit();
  [[nodiscard]] const std::string& target() const noexcept { return target_; }
  [[nodiscard]] const std::string& temporary() const noexcept { return temporary_; }
  [[nodiscard]] std::size_t bytes_written() const noexcept { return written_ + buffer_.size(); }

 private:
  void flush();
  void discard() noexcept;
  std::string target_;
  std::string temporary_;
  std::string buffer_;
  std::size_t written_ = 0;
  int fd_ = -1;
  int slot_ = -1;  // io/interrupt.hpp: removed on SIGINT/SIGTERM while it exists
  bool prepared_ = false;
  bool committed_ = false;
};

// "-" or "" is standard output (written as it comes), anything else an AtomicFile.
class Output {
 public:
  explicit Output(const std::string& path);
  void write(std::string_view data);
  void commit();
  [[nodiscard]] bool to_stdout() const noexcept { return file_ == nullptr; }

 private:
  std::unique_ptr<AtomicFile> file_;
};

// A file written in place as it grows, for output that is meant to survive an interruption
// (a sweep's rows: a killed run leaves every complete row for --resume). Opened without
// following a link at its name (O_NOFOLLOW: a planted link is an error, ELOOP), only when it
// is a regular file or new, and cut to `keep` bytes (0: emptied). Every write reaches the file
// at once. Throws OutputError.
class JournalFile {
 public:
  JournalFile(std::string path, std::size_t keep);
  ~JournalFile();
  JournalFile(const JournalFile&) = delete;
  JournalFile& operator=(const JournalFile&) = delete;
  void write(std::string_view data);
  void close();  // flushes to disk; throws when that fails

 private:
  std::string path_;
  int fd_ = -1;
};

// The whole of `text` to `path` ("-" or "": standard output) through an Output.
void write_output(const std::string& path, std::string_view text);

}  // namespace ringsim::io
