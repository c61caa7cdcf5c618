#pragma once
// Output folders (--profiles-dir, --links-dir): checked before the work that fills them, so a fit
// of minutes does not run only to fail at the end, and a file or a FIFO at the folder's name is
// bad input (exit 2, one line naming the flag) rather than a failure from deep in the file
// system. Files under them are written as a set (OutputSet): all of them or none.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::cli {

// Throws models::InputError(flag) when `dir`, or the nearest part of it that exists, is not a
// folder (a regular file, a FIFO, a device), or when `dir` is not a valid path.
void check_output_dir(const std::string& dir, std::string_view flag);

// Files meant to appear together. add() and add_under() collect them; commit() creates the
// folders of those under an output folder (an InputError naming its flag when one cannot be: a
// file in the way, no permission), writes every file to a temporary (io/output_file.hpp) and
// renames them only once all were written, so a failure before that leaves none of them.
class OutputSet {
 public:
  // A file named as it is (-o, --report): its folder must exist, as for any output file.
  void add(std::string path, std::string text);
  // DIR/RELATIVE under an output folder (--profiles-dir DIR): the folders between are created.
  void add_under(const std::string& dir, const std::string& relative, std::string text, std::string flag);
  void commit();
  [[nodiscard]] std::size_t size() const noexcept { return files_.size(); }

 private:
  struct File {
    std::string path, text, flag;  // flag: "" for a file whose folder is not created
  };
  std::vector<File> files_;
};

}  // namespace ringsim::cli
