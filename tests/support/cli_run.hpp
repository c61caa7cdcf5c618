#pragma once
// Running the `ringsim` binary from a test: exit code, stdout and stderr; and the check every
// bad input must pass (exit code 2, one line on stderr naming what is wrong).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

namespace ringsim::test {

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

inline Run run(const std::string& args) {
  // ctest runs test cases as parallel processes in one folder: one stderr file per process.
  const std::string err_file = "ringsim_cli_test_stderr." + std::to_string(getpid()) + ".txt";
  const std::string cmd = std::string(RINGSIM_BIN) + " " + args + " 2>" + err_file;
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  {
    std::ifstream e(err_file);
    std::stringstream ss;
    ss << e.rdbuf();
    r.err = ss.str();
  }
  std::filesystem::remove(err_file);
  return r;
}

inline std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

inline void write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
}

inline void expect_bad(const std::string& args, const std::string& needle) {
  INFO("ringsim " << args);
  const auto r = run(args);
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find(needle) != std::string::npos);
  INFO("stderr: " << r.err);
}

}  // namespace ringsim::test
