// What the trace and calibration commands write, under hostile conditions: several outputs of one
// command appear together or not at all (trace synthesize's rank files; calibrate's profile,
// report and links file), a folder flag naming a file is one line and exit code 2, two writers
// of one links file keep each other's hop, kernel names never reach a terminal raw, and a small
// gzip that inflates to a large trace shows its progress on a terminal.
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <barrier>
#include <regex>
#include <filesystem>
#include <set>
#include <string>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "calibration/trace/synthetic.hpp"
#include "cli/calibrate_common.hpp"
#include "cli/csv.hpp"
#include "cli/terminal_text.hpp"
#include "models/hardware/point_to_point.hpp"
#include "tests/support/cli_run.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim;
namespace fs = std::filesystem;

namespace {

const char* kScenario = "--hardware a100-80gb --model attn:32:8:128 --mesh 1x4 --seq 32768 --impl ring-flash-attn --cp ring --layout zigzag";

std::set<std::string> names(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// The traces of the scenario above, one per rank, in `dir`; their names joined by commas.
std::string traces_in(const test::TempDir& dir) {
  auto s = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 4, 32768, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  const auto run = calibration::synthetic_ring_run(s, {25e-6, 12e9}, 1);
  std::string files;
  for (std::size_t r = 0; r < run.traces.size(); ++r)
    files += (r ? "," : "") + dir.write("rank" + std::to_string(r) + ".json", run.traces[r]);
  return files;
}

}  // namespace

TEST_CASE("trace synthesize writes every rank file or none", "[cli][trace][outputs]") {
  const test::TempDir tmp;
  const auto out = tmp.file("out");
  fs::create_directory(out);
  test::write_file(out + "/rank0.json", "old 0");
  test::write_file(out + "/rank1.json", "old 1");
  fs::create_directory(out + "/rank2.json");  // the third rank's file cannot be written
  const std::string synth = std::string("trace synthesize ") + kScenario + " --steps 1 --out-dir ";
  test::expect_bad(synth + out, "rank2.json");
  CHECK(test::read_file(out + "/rank0.json") == "old 0");
  CHECK(test::read_file(out + "/rank1.json") == "old 1");
  CHECK(names(out) == std::set<std::string>{"rank0.json", "rank1.json", "rank2.json"});  // no rank3, no temporary

  // A folder flag naming a file: one line, exit 2, the file untouched; nothing computed first.
  const auto file = tmp.write("a-file", "precious");
  test::expect_bad(synth + file, "is a file");
  test::expect_bad(synth + file + "/sub", "is a file");
  CHECK(test::read_file(file) == "precious");
  // Planted figures whose trace its reader would refuse ("dur": inf): refused, nothing made.
  test::expect_bad(synth + tmp.file("new") + " --link-gbps 1e-300", "link");
  test::expect_bad(synth + tmp.file("new") + " --efficiency 1e-300", "efficiency");
  CHECK_FALSE(fs::exists(tmp.file("new")));

  // Written: new nested folders, every rank.
  const auto ok = test::run(synth + tmp.file("a/b"));
  INFO(ok.err);
  REQUIRE(ok.code == 0);
  CHECK(names(tmp.file("a/b")) == std::set<std::string>{"rank0.json", "rank1.json", "rank2.json", "rank3.json"});
}

TEST_CASE("calibrate --from-trace writes its profile, report and links file together or not at all", "[cli][trace][outputs]") {
  const test::TempDir tmp;
  const auto files = traces_in(tmp);
  const auto links = tmp.file("links");
  fs::create_directory(links);
  fs::create_directory(tmp.file("a-dir"));
  const std::string cmd = "calibrate --from-trace " + files + " " + kScenario + " --links-dir " + links;
  // The report cannot be written: neither the profile nor the links file appears.
  test::expect_bad(cmd + " -o " + tmp.file("p.json") + " --report " + tmp.file("a-dir"), "a-dir");
  // The profile cannot be written: the links file does not appear.
  test::expect_bad(cmd + " -o " + tmp.file("a-dir") + " --report " + tmp.file("r.csv"), "a-dir");
  CHECK_FALSE(fs::exists(tmp.file("p.json")));
  CHECK_FALSE(fs::exists(tmp.file("r.csv")));
  CHECK(fs::is_empty(links));
  CHECK(fs::is_empty(tmp.file("a-dir")));
  // A links folder that is a file: one line, the other outputs absent.
  test::expect_bad("calibrate --from-trace " + files + " " + kScenario + " --links-dir " + files.substr(0, files.find(',')) +
                       " -o " + tmp.file("p.json"),
                   "rank0.json");
  CHECK_FALSE(fs::exists(tmp.file("p.json")));
  const auto ok = test::run(cmd + " -o " + tmp.file("p.json") + " --report " + tmp.file("r.csv"));
  INFO(ok.err);
  REQUIRE(ok.code == 0);
  CHECK(names(links) == std::set<std::string>{"a100-80gb.json"});
  CHECK(fs::exists(tmp.file("p.json")));
  CHECK(fs::exists(tmp.file("r.csv")));
}

TEST_CASE("calibrate --profiles-dir naming a file is one line, and profiles and report appear together", "[cli][calibrate][outputs]") {
  const test::TempDir tmp;
  const std::string kernels = std::string(RINGSIM_TEST_DATA) + "/components/kernels/h100_sdpa_flash.csv";
  const std::string fit = "calibrate --from-kernels " + kernels +
                          " --as NVIDIA=h100-sxm --min-seconds 1e-2 --free attention_efficiency,attention_bwd_efficiency";
  const auto file = tmp.write("a-file", "precious");
  test::expect_bad(fit + " --profiles-dir " + file, "is a file");
  test::expect_bad(fit + " --profiles-dir " + file + "/deeper", "is a file");
  CHECK(test::read_file(file) == "precious");
  fs::create_directory(tmp.file("a-dir"));
  test::expect_bad(fit + " --profiles-dir " + tmp.file("profiles") + " --report " + tmp.file("a-dir"), "a-dir");
  CHECK_FALSE(fs::exists(tmp.file("profiles")));  // the folders it made are gone again
}

TEST_CASE("concurrent writers of one links file keep each other's hop", "[cli][calibrate][outputs]") {
  // Each round, two writers at once: one the intra-node hop, one the inter-node hop of the same
  // file, each keeping the other. Unlocked, both read the old file and the second rename drops
  // the first writer's new hop.
  const test::TempDir tmp;
  constexpr int kRounds = 40;
  std::barrier sync(2);
  int lost = 0;
  const auto writer = [&](bool inter) {
    for (int round = 1; round <= kRounds; ++round) {
      cli::HopRecord r;
      r.hardware = "h100-sxm";
      r.inter_node = inter;
      r.hop.bandwidth_bytes_per_s = round * 1e9;
      r.hop.latency_s = inter ? 2e-5 : 1e-5;
      r.hop.rows = 3;
      r.hop.pattern = inter ? "inter" : "intra";
      r.fitted_from = "the test, round " + std::to_string(round);
      r.date = "2026-01-01";
      sync.arrive_and_wait();
      (void)cli::write_hop(tmp.dir(), r);
      sync.arrive_and_wait();
      if (!inter) {
        const auto links = models::PointToPoint::load_file(tmp.file("h100-sxm.json"));
        lost += !links.intra_node || links.intra_node->bandwidth_bytes_per_s != round * 1e9;
        lost += !links.inter_node || links.inter_node->bandwidth_bytes_per_s != round * 1e9;
      }
      sync.arrive_and_wait();
    }
  };
  std::thread other(writer, true);
  writer(false);
  other.join();
  CHECK(lost == 0);
  CHECK(names(tmp.dir()) == std::set<std::string>{"h100-sxm.json"});
}

TEST_CASE("kernel names reach the terminal escaped, JSON escaped and round-tripped", "[cli][trace][outputs]") {
  const test::TempDir tmp;
  // A NUL, a screen clear, the 8-bit CSI (U+009B), DEL, a line break: as JSON escapes in the trace.
  const std::string raw_name = std::string("evil\0k", 6) + "\x1b[2J\xc2\x9b" "31m\x7f\nend";
  const std::string json_name = R"(evil\u0000k\u001b[2J\u009b31m\u007f\nend)";
  const auto trace = tmp.write("t.json", std::string(R"({"traceEvents": [
{"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100},
{"ph": "X", "cat": "kernel", "name": ")") + json_name + R"(", "ts": 10, "dur": 5, "args": {"device": 0, "stream": 7}}
]})");
  const auto table = test::run("trace summarize " + trace);
  INFO(table.err);
  REQUIRE(table.code == 0);
  for (const char c : table.out) {
    const auto u = static_cast<unsigned char>(c);
    CHECK((u >= 0x20 || u == '\n'));
    CHECK(u != 0x7f);
  }
  CHECK(table.out.find("\xc2\x9b") == std::string::npos);
  CHECK_THAT(table.out, Catch::Contains("evil\\x00k\\x1b[2J\\xc2\\x9b31m\\x7f\\x0aend"));

  const auto j = test::run("trace summarize " + trace + " --format json");
  REQUIRE(j.code == 0);
  for (const char c : j.out) CHECK((static_cast<unsigned char>(c) < 0x80 && (static_cast<unsigned char>(c) >= 0x20 || c == '\n')));
  const auto doc = nlohmann::json::parse(j.out);
  REQUIRE(doc[0]["unclassified"].size() == 1);
  CHECK(doc[0]["unclassified"][0]["name"].get<std::string>() == raw_name);

  // The shared escaping itself: valid UTF-8 of other scripts is kept, anything else shown.
  CHECK(cli::terminal_text("Gr\xc3\xbc\xc3\x9f \xe6\x97\xa5", false) == "Gr\xc3\xbc\xc3\x9f \xe6\x97\xa5");
  CHECK(cli::terminal_text("a\xff" "b\xe6\x97", false) == "a\\xffb\\xe6\\x97");
  CHECK(cli::terminal_text("x\ny", true) == "x\ny");
  CHECK(cli::terminal_text("x\ny", false) == "x\\x0ay");
  // CSV: a carriage return or a NUL is quoted like a line break.
  CHECK(cli::csv_line({"a\rb", std::string("c\0d", 3), "e"}) == "\"a\rb\",\"" + std::string("c\0d", 3) + "\",e\n");
}

TEST_CASE("a small gzip that inflates to a large trace shows its progress on a terminal", "[cli][trace][outputs]") {
  // 0.3 MB of gzip, 100 MB of dropped events: counted in whole MB the bar read 0 of 1 MB until
  // the end. Run on a pseudo-terminal (the bar is drawn only there).
  const test::TempDir tmp;
  const auto path = tmp.file("t.json.gz");
  {
    gzFile g = gzopen(path.c_str(), "wb9");
    REQUIRE(g);
    const std::string head = "{\"traceEvents\": [\n";
    gzwrite(g, head.data(), static_cast<unsigned>(head.size()));
    std::string chunk;
    for (int i = 0; i < 10000; ++i) chunk += R"({"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1, "dur": 1},)" "\n";
    while (gztell(g) < (100 << 20)) gzwrite(g, chunk.data(), static_cast<unsigned>(chunk.size()));
    const std::string tail = R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "dur": 5})" "\n]}\n";
    gzwrite(g, tail.data(), static_cast<unsigned>(tail.size()));
    REQUIRE(gzclose(g) == Z_OK);
  }
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::execl(RINGSIM_BIN, RINGSIM_BIN, "trace", "summarize", path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string seen;
  char buf[4096];
  for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) seen.append(buf, static_cast<std::size_t>(n));
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // Some frame strictly between the start and the end.
  const std::regex frame(R"(\b(\d+)/(\d+) kB\b)");
  bool between = false;
  for (auto it = std::sregex_iterator(seen.begin(), seen.end(), frame); it != std::sregex_iterator(); ++it) {
    const auto done = std::stoll((*it)[1].str()), total = std::stoll((*it)[2].str());
    between |= done > 0 && done < total;
  }
  INFO(seen.substr(0, 2000));
  CHECK(between);
}
