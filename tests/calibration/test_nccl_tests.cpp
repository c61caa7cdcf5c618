// nccl-tests output as links: the real files of data/components/nccl_tests parse to their tables
// (the "# Avg bus bandwidth" line agrees with their rows), a synthetic sweep written from a known
// per-step latency and bandwidth is fitted back to them through the ring conversion, the older
// column layouts read the same, and every hostile input is one InputError naming its field.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "calibration/nccl_tests.hpp"
#include "models/io/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim;
using calibration::NcclCollective;

namespace {

const std::string kDir = std::string(RINGSIM_TEST_DATA) + "/components/nccl_tests/";

// The field of the InputError that parsing `text` raises ("" when it parses).
std::string error_field(const std::string& text, const std::string& collective = "") {
  try {
    (void)calibration::parse_nccl_tests(text, "t.txt", collective);
  } catch (const models::InputError& e) {
    CHECK(e.file() == "t.txt");
    return e.field();
  }
  return "";
}

// nccl-tests' mean busbw: out-of-place and in-place rows alike (the Avg line averages both).
double mean_busbw(const calibration::NcclTestsFile& f) {
  double sum = 0;
  int n = 0;
  for (const auto& r : f.rows) {
    sum += r.busbw, ++n;
    if (r.in_place_busbw >= 0) sum += r.in_place_busbw, ++n;
  }
  return sum / n;
}

const char* kHeader =
    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20\n"
    "#\n# Using devices\n"
    "#  Rank  0 Group  0 Pid 1 on nodeA device  0 [0x1b] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid 2 on nodeA device  1 [0x2b] NVIDIA H100 80GB HBM3\n"
    "#\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";

// A sendrecv table over two ranks with the given rows appended (already formatted).
std::string sendrecv(const std::string& rows) { return std::string("./build/sendrecv_perf -b 1M -e 128M -f 2 -g 2\n") + kHeader + rows; }

const char* kGoodRow = "     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43    N/A\n";

}  // namespace

TEST_CASE("nccl-tests: the real files parse to their tables, and their Avg line agrees with the rows", "[calibration][nccl]") {
  struct Expect {
    const char* file;
    NcclCollective c;
    std::size_t rows;
    double first, last;
    int ranks, hosts;
    const char* gpu;
    double avg;  // < 0: no Avg line
  };
  const std::vector<Expect> files = {
      {"a100_sendrecv_8gpu_nvlink.txt", NcclCollective::sendrecv, 4, 134217728, 1073741824, 0, 0, "", -1},
      {"gh200_all_reduce_2node_1gpu.txt", NcclCollective::all_reduce, 8, 1048576, 134217728, 2, 2, "NVIDIA GH200 120GB", 14.9966},
      {"gh200_all_reduce_2node_4gpu.txt", NcclCollective::all_reduce, 25, 8, 134217728, 8, 2, "NVIDIA GH200 120GB", 19.7866},
      {"h100_all_reduce_2node_8gpu.txt", NcclCollective::all_reduce, 31, 8, 8589934592.0, 16, 2, "NVIDIA H100 80GB HBM3", 70.742},
  };
  for (const auto& e : files) {
    INFO(e.file);
    const auto f = calibration::read_nccl_tests(kDir + e.file);
    CHECK(f.collective == e.c);
    REQUIRE(f.rows.size() == e.rows);
    CHECK(f.rows.front().size_bytes == e.first);
    CHECK(f.rows.back().size_bytes == e.last);
    CHECK(f.ranks == e.ranks);
    CHECK(f.hosts == e.hosts);
    CHECK(f.gpu == e.gpu);
    for (const auto& r : f.rows) CHECK(r.ranks == e.ranks);
    if (e.avg < 0) {
      CHECK_FALSE(f.avg_busbw);
    } else {
      REQUIRE(f.avg_busbw);
      CHECK(*f.avg_busbw == Approx(e.avg).margin(1e-9));
      // Each busbw is printed to 0.01 GB/s: their mean is within half of that of the exact one.
      CHECK(std::abs(mean_busbw(f) - e.avg) <= 0.005 + 1e-4);
    }
  }
  // The A100 file trims its "# Using devices" block: sendrecv's factor does not depend on n.
  CHECK(calibration::read_nccl_tests(kDir + "a100_sendrecv_8gpu_nvlink.txt").ranks_from.empty());
  // The first row of the 16-rank file as printed (line 32: "8 2 float sum -1 135.8 ...").
  const auto h = calibration::read_nccl_tests(kDir + "h100_all_reduce_2node_8gpu.txt");
  CHECK(h.rows.front().time_us == 135.8);
  CHECK(h.rows.front().line == 32);
  CHECK(h.rows.back().busbw == 338.82);
}

TEST_CASE("nccl-tests: a sweep written from a planted step latency and bandwidth is fitted back", "[calibration][nccl]") {
  const test::TempDir dir;
  const double alpha = 9e-6, bandwidth = 180e9;  // one ring step: latency and per-link bandwidth
  for (const int n : {2, 8}) {
    for (const bool root : {true, false}) {
      const auto ring = calibration::nccl_ring(NcclCollective::all_reduce, n);
      CHECK(ring.factor == Approx(2.0 * (n - 1) / n));
      CHECK(ring.steps == 2 * (n - 1));
      std::string text = "# Collective test starting: all_reduce_perf\n# Using devices\n";
      for (int i = 0; i < n; ++i)
        text += fmt::format("#  Rank {:2} Group  0 Pid {} on node{} device {:2} [0x{}] NVIDIA A100-SXM4-80GB\n", i, 100 + i, i / 8, i % 8, i);
      // The newer layout names redop and root; an older one only redop, with "error" for "#wrong".
      text += root ? "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
                   : "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n";
      for (double s = 65536; s <= (1 << 30); s *= 2) {
        // Below 1 MiB another protocol's floor, which the fit must leave out.
        const double t = s < calibration::kRingMessageBytes ? 50e-6 : ring.steps * (alpha + s * ring.factor / ring.steps / bandwidth);
        const double algbw = s / t / 1e9;
        text += fmt::format("{:>12.0f} {:>13.0f}     float     sum {}{:>10.4f} {:>7.2f} {:>7.2f}      0 {:>10.4f} {:>7.2f} {:>7.2f}      0\n", s,
                            s / 4, root ? "     -1 " : "", t * 1e6, algbw, algbw * ring.factor, t * 1e6, algbw, algbw * ring.factor);
      }
      text += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.0\n";
      const auto path = dir.write(fmt::format("ar{}_{}.txt", n, root), text);
      const auto f = calibration::read_nccl_tests(path);
      CHECK(f.collective == NcclCollective::all_reduce);
      CHECK(f.ranks == n);
      CHECK(f.rows.size() == 15);
      const auto rows = calibration::nccl_hop_rows(f, "a100-80gb", "test");
      CHECK(rows.size() == 11);  // 1 MiB .. 1 GiB
      CHECK(rows.front().bytes == Approx(calibration::kRingMessageBytes / n));  // one step moves size / n
      const auto fit = calibration::fit_hop(rows, path, 0);
      CHECK(fit.hop.bandwidth_bytes_per_s == Approx(bandwidth).epsilon(1e-4));
      CHECK(fit.hop.latency_s == Approx(alpha).epsilon(1e-3));
      CHECK(fit.hop.held_out_mape < 1e-4);
    }
  }
  // Without Rank lines the ranks come from busbw / algbw (2 x 7/8 for all_reduce over 8).
  std::string no_ranks = "all_reduce_perf -g 8\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
  no_ranks += "  1073741824  268435456  float  sum  -1  6759.0  158.86  278.00  0  6737.4  159.37  278.89  0\n";
  const auto g = calibration::parse_nccl_tests(no_ranks, "t.txt");
  CHECK(g.ranks == 8);
  CHECK(g.ranks_from == "busbw/algbw ratio");
}

TEST_CASE("nccl-tests: the test is the file's, else --collective, and the two must agree", "[calibration][nccl]") {
  const std::string table = std::string(kHeader).substr(std::string(kHeader).find("#\n# Using")) + kGoodRow;
  CHECK(error_field(table) == "collective");  // named nowhere
  CHECK(calibration::parse_nccl_tests(table, "t.txt", "sendrecv").collective_from == "--collective");
  CHECK(error_field(sendrecv(kGoodRow), "all_gather") == "collective");  // disagrees with the file
  try {  // an option's error names the option, not the file
    (void)calibration::parse_nccl_tests(table, "t.txt", "broadcast");
    FAIL("expected an InputError");
  } catch (const models::InputError& e) {
    CHECK(e.field() == "collective");
  }
  CHECK(error_field("# Collective test starting: broadcast_perf\n" + table) == "collective");
  CHECK(error_field("all_reduce_perf\n" + sendrecv(kGoodRow)) == "collective");  // two tests in one file
  // A script's own "_perf" word is not a test name.
  CHECK(error_field("run_perf.sh\n" + sendrecv(kGoodRow)).empty());
}

TEST_CASE("nccl-tests: hostile inputs are one InputError naming the field", "[calibration][nccl]") {
  CHECK(error_field("") == "table");
  CHECK(error_field("# nThread 1 nGpus 8\n# Using devices\nhello\n") == "table");
  CHECK(error_field(sendrecv("")) == "table");  // a header row and no rows
  // Truncated: the row stops before busbw.
  CHECK(error_field(sendrecv("     1048576        262144     float     sum      -1    20.00   52.43\n")) == "busbw");
  CHECK(error_field(sendrecv("     1048576        262144     float     sum      -1    abc   52.43   52.43      0    20.00   52.43   52.43    N/A\n")) == "time");
  CHECK(error_field(sendrecv("     1048576        262144     float     sum      -1    N/A   52.43   52.43      0    20.00   52.43   52.43    N/A\n")) == "time");
  CHECK(error_field(sendrecv("     1048576        262144     float     sum      -1    nan   52.43   52.43      0    20.00   52.43   52.43    N/A\n")) == "time");
  CHECK(error_field(sendrecv("     1048576        262144     float     sum      -1   -20.0   52.43   52.43      0    20.00   52.43   52.43    N/A\n")) == "time");
  CHECK(error_field(sendrecv("     1048576        262144     float     sum      -1    20.00   52.43     inf      0    20.00   52.43   52.43    N/A\n")) == "busbw");
  CHECK(error_field(sendrecv("     1048576        262144     float     sum      -1     0.00   52.43   52.43      0    20.00   52.43   52.43    N/A\n")) == "time");
  CHECK(error_field(sendrecv("99999999999999999999999 4 float sum -1 20.00 52.43 52.43 0 20.00 52.43 52.43 N/A\n")) == "size");
  CHECK(error_field(sendrecv("2251799813685248 4 float sum -1 20.00 52.43 52.43 0 20.00 52.43 52.43 N/A\n")) == "size");
  CHECK(error_field(sendrecv("-1048576 4 float sum -1 20.00 52.43 52.43 0 20.00 52.43 52.43 N/A\n")) == "size");
  // A size written as a number the program never prints was a skipped line: refused, with its line.
  CHECK(error_field(sendrecv("1e308 4 float sum -1 20.00 52.43 52.43 0 20.00 52.43 52.43 N/A\n")) == "size");
  CHECK(error_field(sendrecv("1048576.5 4 float sum -1 20.00 52.43 52.43 0 20.00 52.43 52.43 N/A\n")) == "size");
  // The element count (nelems) is a whole number no larger than the size in bytes.
  CHECK(error_field(sendrecv("     1048576         1e308     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43    N/A\n")) == "count");
  CHECK(error_field(sendrecv("     1048576       2097152     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43    N/A\n")) == "count");
  // A NUL inside a row split its first word and dropped the row silently (the fit moved): refused
  // with its line, wherever in the file it is.
  for (const std::size_t at : {std::size_t{12}, std::size_t{40}, std::size_t{0}}) {
    std::string row = kGoodRow;
    row[at] = '\0';
    const auto text = sendrecv(std::string(kGoodRow) + row + kGoodRow);
    CHECK(error_field(text) == "text");
    try {
      (void)calibration::parse_nccl_tests(text, "t.txt");
    } catch (const models::InputError& e) {
      CHECK(e.line() == 11);  // the command line, 8 header lines, one good row, then this one
    }
  }
  // A busbw that size / time x factor does not give: not this test, or not these ranks.
  CHECK(error_field(sendrecv("     1048576        262144     float     sum      -1    20.00   52.43   91.75      0    20.00   52.43   52.43    N/A\n")) == "busbw");
  // An all_reduce over 2 ranks prints its operation; "none" is another test's output.
  CHECK(error_field("all_reduce_perf\n" + std::string(kHeader) +
                    "     1048576        262144     float    none      -1    20.00   52.43   52.43      0    20.00   52.43   52.43      0\n") == "redop");
  CHECK(error_field(sendrecv(kGoodRow) + "# Avg bus bandwidth    : N/A\n") == "avg_busbw");
  // NCCL INFO lines inside the table are skipped; a good file parses.
  CHECK(error_field(sendrecv("host1:880:880 [1] NCCL INFO comm 0x55 rank 0 nranks 2\n[0] NCCL INFO x\n" + std::string(kGoodRow))).empty());
  // One rank moves nothing: all_gather over one GPU has no hop.
  CHECK(error_field("all_gather_perf\n#  Rank  0 Group  0 Pid 1 on a device 0 [0x1] GPU\n"
                    "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
                    "  1048576  262144  float  none  -1  20.00  52.43  0.00  0  20.00  52.43  0.00  0\n") == "ranks");
  // The file reader: a missing file and a folder name the option.
  try {
    (void)calibration::read_nccl_tests("/nonexistent/x.txt");
    FAIL("expected an InputError");
  } catch (const models::InputError& e) {
    CHECK(e.file() == "/nonexistent/x.txt");
  }
  CHECK_THROWS_AS(calibration::read_nccl_tests(kDir), models::InputError);
}
