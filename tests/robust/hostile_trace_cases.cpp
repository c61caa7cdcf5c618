// The hostile-input family of profiler traces (`trace summarize`, `check --trace`, `calibrate
// --from-trace`): small gzip archives that inflate into gigabytes of whitespace, one string or one
// number; arrays under keys no reader uses (quadratic in the DOM parser); timestamps, durations
// and ids at the int64 limits; and kernel names full of control characters, which are valid and
// must come out escaped.
#include <zlib.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tests/robust/hostile_cases.hpp"
#include "tests/robust/hostile_support.hpp"

namespace ringsim::test {
namespace {

// gzip (what PyTorch's profiler writes with use_gzip=True) of a text generated in pieces, so that
// 64 MiB of text never exists whole: `piece` repeated `times` times between `head` and `tail`.
std::string gzip_repeated(const std::string& head, const std::string& piece, std::size_t times, const std::string& tail) {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("deflateInit2");
  std::string out;
  char buf[1 << 16];
  const auto feed = [&](const std::string& s, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
    z.avail_in = static_cast<uInt>(s.size());
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof buf;
      if (deflate(&z, flush) == Z_STREAM_ERROR) throw std::runtime_error("deflate");
      out.append(buf, sizeof buf - z.avail_out);
    } while (z.avail_out == 0);
  };
  feed(head, Z_NO_FLUSH);
  for (std::size_t i = 0; i < times; ++i) feed(piece, Z_NO_FLUSH);
  feed(tail, Z_FINISH);
  deflateEnd(&z);
  return out;
}

std::string kernel(const std::string& name, const std::string& ts, const std::string& dur = "5", const std::string& args = "") {
  return R"({"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "ts": )" + ts + R"(, "dur": )" + dur +
         R"(, "args": {"device": 0, "stream": 7)" + args + "}}";
}

std::string trace(const std::string& events, const std::string& before = "") {
  return "{" + before + R"("traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 1000},
)" + events + "\n]}\n";
}

}  // namespace

std::vector<HostileCase> trace_file_cases(const HostileFixture& fx) {
  std::vector<HostileCase> out;
  int n = 0;
  const std::vector<std::string> scenario = {"--hardware", "a100-80gb", "--model", "attn:32:8:128", "--mesh", "1x4", "--seq",
                                             "32768",      "--impl",    "ring-flash-attn", "--layout", "zigzag"};
  // Each file through trace summarize; a refused one through the two commands that fit and check.
  const auto add = [&](const std::string& what, const std::string& bytes, const std::string& ext, Expect e) {
    const auto f = fx.tmp.write("trace-" + std::to_string(n++) + ext, bytes);
    out.push_back({"traces", what + " (trace summarize)", {"trace", "summarize", f}, e});
    out.push_back({"traces", what + " (--format json)", {"trace", "summarize", f, "--format", "json"}, e});
    if (e != R) return;
    for (const char* cmd : {"check", "calibrate"}) {
      std::vector<std::string> args = {cmd, std::string(cmd) == "check" ? "--trace" : "--from-trace", f};
      args.insert(args.end(), scenario.begin(), scenario.end());
      out.push_back({"traces", what + " (" + cmd + ")", args, e});
    }
  };
  const std::size_t mib64 = std::size_t{64} << 20;
  // Inflating past the token bound: the parser would hold each whole, twice (a few hundred kB of gzip).
  add("64 MiB of whitespace in a gzip", gzip_repeated("", std::string(1 << 16, ' '), mib64 >> 16, trace(kernel("k", "10"))), ".json.gz", R);
  add("64 MiB of line breaks in a gzip", gzip_repeated("", std::string(1 << 16, '\n'), mib64 >> 16, trace(kernel("k", "10"))), ".json.gz", R);
  add("a 64 MiB kernel name in a gzip",
      gzip_repeated(trace("").substr(0, trace("").size() - 4) + R"({"ph": "X", "cat": "kernel", "name": ")", std::string(1 << 16, 'a'),
                    mib64 >> 16, R"(", "ts": 10, "dur": 5}]})"),
      ".json.gz", R);
  add("a 64 MiB number in a gzip",
      gzip_repeated(trace("").substr(0, trace("").size() - 4) + R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1)",
                    std::string(1 << 16, '0'), mib64 >> 16, R"(, "dur": 5}]})"),
      ".json.gz", R);
  // Linear: 3 MB of objects under a key no reader uses, or inside one kernel's args.
  {
    std::string other = R"("otherData": [)";
    for (int i = 0; i < 150000; ++i) other += (i ? ", " : "") + std::string(R"({"k": 1, "v": [1, 2]})");
    add("a 3 MB array under another key", trace(kernel("k", "10"), other + "], "), ".json", A);
    std::string dims;
    for (int i = 0; i < 150000; ++i) dims += (i ? ", " : "") + std::string(R"({"d": [1, 2]})");
    add("a 3 MB array in a kernel's args", trace(kernel("k", "10", "5", R"(, "Input Dims": [)" + dims + "]")), ".json", A);
    add("a 3 MB top-level array", "[" + kernel("k", "10", "5", R"(, "Input Dims": [)" + dims + "]") + "]", ".json", A);
  }
  // Numbers at the limits: refused, never wrapped.
  for (const char* ts : {"9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551615",
                         "9000000000000001", "1e300"})
    add(std::string("ts = ") + ts, trace(kernel("k", "10") + ",\n" + kernel("k", ts)), ".json", R);
  add("ts INT64_MIN then INT64_MAX", trace(kernel("k", "-9223372036854775808") + ",\n" + kernel("k", "9223372036854775807")), ".json", R);
  add("dur = 1e14", trace(kernel("k", "10", "1e14")), ".json", R);
  add("correlation = 2^64 - 1", trace(kernel("k", "10", "5", R"(, "correlation": 18446744073709551615)")), ".json", R);
  add("rank = 2^62", trace(kernel("k", "10"), R"("distributedInfo": {"rank": 4611686018427387904, "world_size": 8}, )"), ".json", R);
  add("ts at the bound", trace(kernel("k", "-9000000000000000") + ",\n" + kernel("k", "9000000000000000")), ".json", A);
  // Kernel names with a NUL, terminal escapes, the 8-bit CSI, DEL: valid, printed escaped.
  add("control characters in kernel names", trace(kernel(R"(a\u0000b\u001b[2J\u009b31m\u007f\r\nc)", "10")), ".json", A);
  return out;
}

}  // namespace ringsim::test
