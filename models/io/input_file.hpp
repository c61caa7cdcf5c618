#pragma once
// Input files opened so that nothing odd can stall or exhaust a run: only regular files are
// read (a FIFO, a terminal or /dev/zero could block forever or never end), up to a size
// limit per kind of file, in lines of bounded length. Every reader of the library (JSON
// configs, scenario CSVs, mask, document and permutation files) goes through it, so every
// failure is an InputError naming the file.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::models {

// Hardware, model and profile JSON: a few kilobytes each.
inline constexpr std::int64_t kMaxConfigFileBytes = std::int64_t{4} << 20;
// Scenario CSVs, mask, document and permutation files: one line per token at most.
inline constexpr std::int64_t kMaxDataFileBytes = std::int64_t{16} << 30;
// One line of a text file.
inline constexpr std::size_t kMaxLineBytes = std::size_t{1} << 20;

class InputFile {
 public:
  // Throws InputError(path, 0, field, ...) when the file cannot be opened, is not a regular
  // file, or holds more than max_bytes; `what` names the file's role ("hardware file").
  InputFile(std::string path, std::string_view field, std::string_view what, std::int64_t max_bytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // The next line without its '\n' (a '\r' before it is dropped too); false at the end.
  // Throws InputError naming the line when it is longer than kMaxLineBytes.
  bool next_line(std::string& line);
  // 1-based number of the line next_line returned last.
  [[nodiscard]] std::int64_t line_number() const noexcept { return line_; }
  // The rest of the file.
  [[nodiscard]] std::string read_all();
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  bool fill();
  [[noreturn]] void fail(const std::string& message) const;
  int fd_ = -1;
  std::string path_;
  std::string field_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
  std::int64_t line_ = 0;
  std::int64_t max_bytes_ = 0, read_bytes_ = 0;  // a file that grows while read stops at the limit too
};

}  // namespace ringsim::models
