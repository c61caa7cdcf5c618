// Output files are complete or absent and never written through a link: io::AtomicFile on its
// own, and `ringsim -o` with symbolic links planted where the old implementation wrote
// (OUT.tmp) and at the target itself.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "io/folder_lock.hpp"
#include "io/output_file.hpp"
#include "io/output_set.hpp"
#include "tests/support/run_process.hpp"
#include "tests/support/temp_dir.hpp"

using ringsim::io::AtomicFile;
using ringsim::io::OutputError;
using ringsim::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::set<std::string> names(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

}  // namespace

TEST_CASE("an atomic file appears complete on commit, and only then", "[io]") {
  const TempDir tmp;
  const auto target = tmp.file("out.csv");
  {
    AtomicFile f(target);
    f.write("a,b\n");
    CHECK_FALSE(fs::exists(target));
    CHECK(fs::exists(f.temporary()));
    CHECK(fs::path(f.temporary()).parent_path() == fs::path(target).parent_path());
    f.write(std::string(3 << 20, 'x'));  // past the buffer: written while open
    f.commit();
  }
  CHECK(slurp(target).size() == 4 + (3u << 20));
  CHECK(names(tmp.dir()) == std::set<std::string>{"out.csv"});
  // New files get the usual permissions (the umask's), not a temporary's 0600.
  struct stat st{};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  CHECK((st.st_mode & 0777) == (0666 & ~mask));
}

TEST_CASE("a failed or abandoned write leaves the old file and nothing else", "[io]") {
  const TempDir tmp;
  const auto target = tmp.write("out.csv", "old\n");
  {
    AtomicFile f(target);
    f.write("half of the new");
    // destroyed without commit, as when an exception unwinds
  }
  CHECK(slurp(target) == "old\n");
  CHECK(names(tmp.dir()) == std::set<std::string>{"out.csv"});
}

TEST_CASE("a directory or a missing folder as the target is an error that leaves nothing", "[io]") {
  const TempDir tmp;
  fs::create_directory(tmp.file("dir"));
  for (const auto& target : {tmp.file("dir"), tmp.file("dir/"), tmp.file("missing/out.csv"), std::string()}) {
    INFO(target);
    try {
      AtomicFile f(target);
      FAIL("accepted " << target);
    } catch (const OutputError& e) {
      CHECK(e.target_problem());
    }
  }
  CHECK(names(tmp.dir()) == std::set<std::string>{"dir"});
  CHECK(fs::is_empty(tmp.file("dir")));
}

TEST_CASE("links at the target and at the old temporary name are never followed", "[io]") {
  const TempDir tmp, elsewhere;
  const auto victim = elsewhere.write("victim.txt", "precious\n");
  const auto victim2 = elsewhere.write("victim2.txt", "also precious\n");
  const auto target = tmp.file("out.csv");
  fs::create_symlink(victim, target);
  fs::create_symlink(victim2, target + ".tmp");
  fs::create_symlink(elsewhere.file("new-file"), tmp.file(".out.csv.tmp"));  // dangling
  ringsim::io::write_output(target, "new\n");
  CHECK(slurp(victim) == "precious\n");
  CHECK(slurp(victim2) == "also precious\n");
  CHECK(names(elsewhere.dir()) == std::set<std::string>{"victim.txt", "victim2.txt"});
  CHECK(fs::is_regular_file(fs::symlink_status(target)));  // the link itself was replaced
  CHECK(slurp(target) == "new\n");
  CHECK(names(tmp.dir()) == std::set<std::string>{"out.csv", "out.csv.tmp", ".out.csv.tmp"});
}

TEST_CASE("ringsim -o never writes through planted links and leaves nothing on failure", "[io][cli]") {
  const TempDir tmp, elsewhere;
  const auto victim = elsewhere.write("victim.csv", "precious\n");
  const auto victim_tmp = elsewhere.write("victim.tmp", "precious too\n");
  const auto out = tmp.file("p.csv");
  fs::create_symlink(victim_tmp, out + ".tmp");
  fs::create_symlink(victim, out);
  const auto r = ringsim::test::run_process(
      {RINGSIM_BIN, "predict", "--seq", "8192", "--mesh", "1x4", "--format", "csv", "-o", out}, 120);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(slurp(victim) == "precious\n");
  CHECK(slurp(victim_tmp) == "precious too\n");
  CHECK(names(elsewhere.dir()) == std::set<std::string>{"victim.csv", "victim.tmp"});
  CHECK(fs::is_regular_file(fs::symlink_status(out)));
  CHECK(slurp(out).rfind("layout,hardware,", 0) == 0);
  CHECK(names(tmp.dir()) == std::set<std::string>{"p.csv", "p.csv.tmp"});

  // -o naming a folder: exit 2, one line, nothing created anywhere.
  fs::create_directory(tmp.file("d"));
  const auto d = ringsim::test::run_process({RINGSIM_BIN, "predict", "--seq", "8192", "-o", tmp.file("d")}, 120);
  CHECK(d.code == 2);
  CHECK(std::count(d.err.begin(), d.err.end(), '\n') == 1);
  CHECK(fs::is_empty(tmp.file("d")));
  CHECK(names(tmp.dir()) == std::set<std::string>{"p.csv", "p.csv.tmp", "d"});

  // A failing run leaves no output and no temporary (abandoned writes: the test above).
  const auto w = ringsim::test::run_process(
      {RINGSIM_BIN, "workload", "--seq", "8192", "--mesh", "1x4", "--layout", "perm:/nonexistent", "-o", tmp.file("w.csv")}, 120);
  CHECK(w.code == 2);
  CHECK(names(tmp.dir()) == std::set<std::string>{"p.csv", "p.csv.tmp", "d"});
}

TEST_CASE("devices and pipes at the target are written, not replaced, a pipe nobody reads is refused", "[io]") {
  const TempDir tmp;
  // /dev/null stays the device it is.
  ringsim::io::write_output("/dev/null", "discarded\n");
  struct stat st{};
  REQUIRE(::stat("/dev/null", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // A named pipe without a reader: refused at once (no wait), as the target's fault; the pipe stays.
  const auto fifo = tmp.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  try {
    AtomicFile f(fifo);
    FAIL("a pipe without a reader was opened");
  } catch (const OutputError& e) {
    CHECK(e.target_problem());
  }
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(names(tmp.dir()) == std::set<std::string>{"pipe"});
}

TEST_CASE("a journal file (a sweep's rows) is written in place, never through a link", "[io]") {
  const TempDir tmp, elsewhere;
  const auto victim = elsewhere.write("victim.csv", "precious\n");
  const auto target = tmp.file("rows.csv");
  {
    ringsim::io::JournalFile j(target, 0);
    j.write("a\n");
    j.write("b\n");
    CHECK(slurp(target) == "a\nb\n");  // each write is in the file at once (an interrupted sweep keeps it)
    j.close();
  }
  {
    ringsim::io::JournalFile j(target, 2);  // resumed after the first row
    j.write("c\n");
    j.close();
  }
  CHECK(slurp(target) == "a\nc\n");
  fs::remove(target);
  fs::create_symlink(victim, target);
  try {
    ringsim::io::JournalFile j(target, 0);
    FAIL("a link at the journal's name was followed");
  } catch (const OutputError& e) {
    CHECK(e.target_problem());
  }
  CHECK(slurp(victim) == "precious\n");
  fs::create_directory(tmp.file("d"));
  CHECK_THROWS_AS(ringsim::io::JournalFile(tmp.file("d"), 0), OutputError);
  CHECK_THROWS_AS(ringsim::io::JournalFile(tmp.file("missing/rows.csv"), 0), OutputError);
  CHECK(names(elsewhere.dir()) == std::set<std::string>{"victim.csv"});
}

TEST_CASE("ringsim sweep -o and plot --svg never write through planted links", "[io][cli]") {
  const TempDir tmp, elsewhere;
  const auto victim = elsewhere.write("victim.csv", "precious\n");
  const auto rows = tmp.file("rows.csv");
  fs::create_symlink(victim, rows);
  const auto s = ringsim::test::run_process({RINGSIM_BIN, "sweep", "--seq", "32768,65536", "--mesh", "1x4,1x8", "--layout",
                                             "contiguous,striped", "-o", rows}, 120);
  CHECK(s.code == 2);
  CHECK(std::count(s.err.begin(), s.err.end(), '\n') == 1);
  CHECK(slurp(victim) == "precious\n");
  fs::remove(rows);
  REQUIRE(ringsim::test::run_process({RINGSIM_BIN, "sweep", "--seq", "32768,65536", "--mesh", "1x4,1x8", "--layout",
                                      "contiguous,striped", "-o", rows}, 120).code == 0);
  const auto svg = tmp.file("chart.svg");
  fs::create_symlink(victim, svg);
  fs::create_symlink(elsewhere.file("new.svg"), svg + ".tmp");  // where the old writer put its temporary
  const auto p = ringsim::test::run_process({RINGSIM_BIN, "plot", rows, "--svg", svg}, 120);
  INFO(p.err);
  REQUIRE(p.code == 0);
  CHECK(slurp(victim) == "precious\n");
  CHECK(names(elsewhere.dir()) == std::set<std::string>{"victim.csv"});
  CHECK(fs::is_regular_file(fs::symlink_status(svg)));
  CHECK(slurp(svg).find("<svg") != std::string::npos);
}

TEST_CASE("an output set renames every file or none, and holds a folder's lock until then", "[io]") {
  const TempDir tmp;
  const auto a = tmp.write("a.txt", "old a\n");
  const auto b = tmp.file("b.txt");
  fs::create_directory(tmp.file("c.txt"));  // the third target cannot be written
  {
    ringsim::io::OutputSet set;
    set.stage(a, "new a\n");
    set.stage(b, "new b\n");
    CHECK_THROWS_AS(set.stage(tmp.file("c.txt"), "new c\n"), OutputError);
  }
  CHECK(slurp(a) == "old a\n");
  CHECK(names(tmp.dir()) == std::set<std::string>{"a.txt", "c.txt"});  // no b, no temporary
  {
    ringsim::io::OutputSet set;
    set.stage(a, "new a\n");
    set.stage(b, "new b\n");
    CHECK(slurp(a) == "old a\n");  // staged, not yet renamed
    set.stage("-", "");          // standard output, not a file named "-"
    set.commit();
  }
  CHECK(slurp(a) == "new a\n");
  CHECK(slurp(b) == "new b\n");
  CHECK(names(tmp.dir()) == std::set<std::string>{"a.txt", "b.txt", "c.txt"});
  CHECK_FALSE(fs::exists("-"));
  // A folder lock: a second one on the same folder waits until the first is released.
  std::atomic<int> order{0};
  int second_saw = -1;
  {
    ringsim::io::FolderLock first(tmp.dir());
    std::thread t([&] {
      ringsim::io::FolderLock second(tmp.dir());
      second_saw = order.load();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    order = 1;  // set while the first lock is held: the second must see it
    {
      ringsim::io::FolderLock moved = std::move(first);
    }
    t.join();
  }
  CHECK(second_saw == 1);
  CHECK_THROWS_AS(ringsim::io::FolderLock(a), OutputError);  // a file, not a folder
}
