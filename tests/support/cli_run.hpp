#pragma once
// Running the `ringsim` binary from a test: exit code, stdout and stderr, without a shell (the
// arguments are the words of a string, as a user would type them; no quoting) and with a time
// limit; and the check every bad input must pass (exit code 2, one line on stderr naming what
// is wrong). Nothing is written outside the test's own temporary folders.
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/run_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace ringsim::test {

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

// `args`: words separated by single spaces.
inline Run run(const std::string& args) {
  auto argv = words(args);
  argv.insert(argv.begin(), RINGSIM_BIN);
  const auto p = run_process(argv, 120);
  REQUIRE_FALSE(p.timed_out);
  return {p.code, p.out, p.err};
}

inline std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

inline void expect_bad(const std::string& args, const std::string& needle) {
  INFO("ringsim " << args);
  const auto r = run(args);
  INFO("stderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find(needle) != std::string::npos);
}

}  // namespace ringsim::test
