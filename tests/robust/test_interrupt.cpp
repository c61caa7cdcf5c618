// SIGINT and SIGTERM leave no hidden temporary beside an output and no half-finished output:
// io/interrupt.hpp's registry on its own, and `ringsim simulate --trace --matrix` and
// `ringsim plan -o --emit-sweep` interrupted while they run (the existing files stay as they were).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "io/interrupt.hpp"
#include "io/output_file.hpp"
#include "tests/support/temp_dir.hpp"

using ringsim::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (name.starts_with(".") && name.ends_with(".tmp")) out.push_back(name);
  }
  return out;
}

struct Interrupted {
  bool signalled = false;  // ended by the signal (not by finishing first)
  int status = 0;
  std::size_t temporaries_seen = 0;
};

// Starts `args` in `dir`, waits until it has created `want` temporaries (its outputs are opened
// before the work), sends `sig` and reaps it.
Interrupted interrupt_run(const std::vector<std::string>& args, const std::string& dir, int sig, std::size_t want) {
  Interrupted r;
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    // As a shell's foreground job: INT and TERM at their default dispositions.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    r.temporaries_seen = temporaries(dir).size();
    if (r.temporaries_seen >= want) break;
    int st = 0;
    if (::waitpid(pid, &st, WNOHANG) == pid) {
      r.status = st;
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, sig);
  ::waitpid(pid, &r.status, 0);
  r.signalled = WIFSIGNALED(r.status) && WTERMSIG(r.status) == sig;
  return r;
}

}  // namespace

TEST_CASE("the registry holds an atomic file's temporary exactly while it exists", "[io][signal]") {
  TempDir tmp;
  const auto before = ringsim::io::registered_temporaries();
  {
    ringsim::io::AtomicFile f(tmp.file("a.txt"));
    CHECK(ringsim::io::registered_temporaries() == before + 1);
    f.write("x");
    f.commit();
    CHECK(ringsim::io::registered_temporaries() == before);
  }
  {
    ringsim::io::AtomicFile f(tmp.file("b.txt"));
    CHECK(ringsim::io::registered_temporaries() == before + 1);
  }  // abandoned: removed and forgotten
  CHECK(ringsim::io::registered_temporaries() == before);
  const int slot = ringsim::io::register_temporary(tmp.file("c"));
  CHECK(slot >= 0);
  ringsim::io::unregister_temporary(slot);
  ringsim::io::unregister_temporary(-1);
  CHECK(ringsim::io::registered_temporaries() == before);
}

TEST_CASE("SIGINT and SIGTERM during simulate leave no temporary and the old outputs intact", "[io][signal][cli]") {
  for (const int sig : {SIGINT, SIGTERM}) {
    TempDir tmp;
    tmp.write("trace.json", "old trace");
    tmp.write("m.csv", "old matrix");
    // About ten seconds of simulation in the Release build (more under the sanitizers).
    const auto r = interrupt_run({RINGSIM_BIN, "simulate", "--seq", "2097152", "--mesh", "1x256", "--model", "llama3-8b",
                                  "--layout", "contiguous,striped", "--trace", "trace.json", "--matrix", "m.csv"},
                                 tmp.dir(), sig, 2);
    INFO("signal " << sig << ", wait status " << r.status);
    REQUIRE(r.temporaries_seen == 2);
    CHECK(r.signalled);
    CHECK(temporaries(tmp.dir()).empty());
    CHECK(ringsim::test::read_file(tmp.file("trace.json")) == "old trace");
    CHECK(ringsim::test::read_file(tmp.file("m.csv")) == "old matrix");
  }
}

TEST_CASE("an interrupted plan writes neither its output nor its --emit-sweep file", "[io][signal][cli]") {
  TempDir tmp;
  // The 1024-device search of a 70B model takes seconds.
  const auto r = interrupt_run({RINGSIM_BIN, "plan", "--hardware", "h100-sxm", "--model", "llama3-70b", "--seq", "1048576",
                                "--devices", "1024", "-o", "plan.txt", "--emit-sweep", "grid.json"},
                               tmp.dir(), SIGTERM, 2);
  INFO("wait status " << r.status);
  REQUIRE(r.temporaries_seen == 2);
  CHECK(r.signalled);
  CHECK(temporaries(tmp.dir()).empty());
  CHECK_FALSE(fs::exists(tmp.file("grid.json")));
  CHECK_FALSE(fs::exists(tmp.file("plan.txt")));
}
