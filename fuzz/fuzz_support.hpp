#pragma once
// Shared by the fuzz targets: the readers take file paths, so each input is written to a
// private file in memory-backed /dev/shm (or $TMPDIR) first; bad input must end as
// models::InputError, anything else (another exception, a crash, a sanitizer report, a hang)
// is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ringsim::fuzz {

inline const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    return std::string(dir) + "/ringsim-fuzz-" + std::to_string(::getpid()) + ".txt";
  }();
  return path;
}

// Writes the input to scratch_path() and returns that path.
inline const std::string& as_file(const std::uint8_t* data, std::size_t size) {
  const auto& path = scratch_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

}  // namespace ringsim::fuzz
