#pragma once
// A fresh private folder under $TMPDIR (or /tmp) for one test, removed with everything in it
// when the test ends: tests never write into the working, source or build tree, and parallel
// test processes never share a file name (mkdtemp). And reading and writing whole files.
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ringsim::test {

class TempDir {
 public:
  TempDir() {
    const char* root = std::getenv("TMPDIR");
    std::string pattern = std::string(root && *root ? root : "/tmp") + "/ringsim-test-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
    dir_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::string& dir() const noexcept { return dir_; }
  // The path of `name` inside the folder (nothing is created).
  [[nodiscard]] std::string file(const std::string& name) const { return dir_ + "/" + name; }
  // Writes `text` to `name` inside the folder and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = file(name);
    std::ofstream f(p, std::ios::binary);
    f << text;
    if (!f.flush()) throw std::runtime_error("cannot write " + p);
    return p;
  }

 private:
  std::string dir_;
};

// A file's bytes ("" when it cannot be read), and a file written with exactly `text`.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

}  // namespace ringsim::test
