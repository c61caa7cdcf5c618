// The trace readers under hostile input (trace_limits.hpp): work in proportion to the text, memory
// bounded by what is kept rather than by what the file holds, timestamps and ids that cannot wrap,
// names held once, and synthetic traces that their own reader always accepts.
#include <zlib.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "calibration/trace/kineto.hpp"
#include "calibration/trace/step_summary.hpp"
#include "calibration/trace/synthetic.hpp"
#include "calibration/trace/trace_limits.hpp"
#include "calibration/trace/trace_text.hpp"
#include "models/io/error.hpp"
#include "tests/support/scenario.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trace_support.hpp"

using namespace ringsim;

namespace {

// One kernel event per line (the events array starts on line 2).
std::string kernel_event(const std::string& name, const std::string& ts, const std::string& extra_args = "") {
  return fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "{}", "ts": {}, "dur": 5, "args": {{"device": 0, "stream": 7{}}}}})",
                     name, ts, extra_args);
}

std::string trace_of(const std::vector<std::string>& events, const std::string& before = "") {
  std::string s = "{" + before + "\"traceEvents\": [\n";
  for (std::size_t i = 0; i < events.size(); ++i) s += (i ? ",\n" : "") + events[i];
  return s + "\n]}\n";
}

// `n` objects in an array under a key no reader uses, then a valid trace.
std::string other_array(std::size_t n) {
  std::string s = "\"otherData\": [";
  for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::string(R"({"k": 1, "v": [1, 2]})");
  return trace_of({kernel_event("k", "10")}, s + "], ");
}

// A bare array of events whose one kernel's args hold `n` objects.
std::string big_args(std::size_t n) {
  std::string shapes;
  for (std::size_t i = 0; i < n; ++i) shapes += (i ? ", " : "") + std::string(R"({"dims": [1, 2, 3]})");
  return "[" + kernel_event("k", "10", ", \"Input Dims\": [" + shapes + "]") + "]";
}

void refused(const std::string& text, const std::string& field, const std::string& needle, std::int64_t line = -1) {
  try {
    (void)calibration::parse_kineto_trace(text, "t.json");
    FAIL("accepted");
  } catch (const models::InputError& e) {
    INFO(e.what());
    CHECK(e.file() == "t.json");
    CHECK(e.field() == field);
    CHECK_THAT(std::string(e.what()), Catch::Contains(needle));
    if (line >= 0) CHECK(e.line() == line);
  }
}

}  // namespace

TEST_CASE("kineto: arrays no reader uses cost work in proportion and keep nothing", "[trace][hostile]") {
  // The DOM parser with a callback kept such arrays and, at every object it ended, scanned the
  // kept array from its start: 3 MB under another key took over a minute. The SAX reader keeps the
  // event being built only: held values do not grow with the array, and work doubles with it.
  for (const auto& make : {other_array, big_args}) {
    calibration::KinetoParseWork w1, w2;
    const auto t1 = calibration::parse_kineto_trace(make(20000), "t.json", &w1);
    const auto t2 = calibration::parse_kineto_trace(make(40000), "t.json", &w2);
    REQUIRE(t1.ops.size() == 1);
    REQUIRE(t2.ops.size() == 1);
    CHECK(w1.peak_values <= 16);
    CHECK(w2.peak_values == w1.peak_values);
    const double ratio = static_cast<double>(w2.sax_events) / static_cast<double>(w1.sax_events);
    CHECK(ratio > 1.9);
    CHECK(ratio < 2.1);
  }
  // The 3 MB case of the audit, whole: parsed at once.
  calibration::KinetoParseWork w;
  const std::string big = other_array(150000);
  REQUIRE(big.size() > (3u << 20));
  CHECK(calibration::parse_kineto_trace(big, "t.json", &w).ops.size() == 1);
  CHECK(w.peak_values <= 16);
}

TEST_CASE("kineto: a token or a run of whitespace over the bound is refused before it is held", "[trace][hostile]") {
  test::TempDir dir;
  const std::string good = trace_of({kernel_event("k", "10")});
  const auto over = static_cast<std::size_t>(calibration::kMaxTraceTokenBytes) + 1;
  const auto refused_file = [&](const std::string& name, const std::string& text, const std::string& needle, std::int64_t line) {
    INFO(name);
    const auto path = dir.write(name, test::gzip(text));
    try {
      (void)calibration::read_kineto_trace(path);
      FAIL("accepted");
    } catch (const models::InputError& e) {
      INFO(e.what());
      CHECK(e.file() == path);
      CHECK(e.field() == "trace");
      CHECK(e.line() == line);
      CHECK_THAT(std::string(e.what()), Catch::Contains(needle));
      CHECK_THAT(std::string(e.what()), Catch::Contains(std::to_string(calibration::kMaxTraceTokenBytes)));
    }
  };
  // A few kB of gzip each, inflating past the bound: the parser would hold each whole (twice).
  refused_file("spaces.json.gz", std::string(over, ' ') + good, "run of whitespace", 1);
  refused_file("lines.json.gz", "\n\n" + std::string(over, '\n') + good, "run of whitespace", 1);
  refused_file("name.json.gz", trace_of({kernel_event(std::string(over, 'a'), "10")}), "a JSON string", 2);
  refused_file("digits.json.gz", trace_of({kernel_event("k", std::string(over, '1'))}), "JSON token", 2);
  // Escaped quotes do not end a string; commas and brackets inside one are no boundaries.
  refused_file("escaped.json.gz", trace_of({kernel_event(std::string(over / 4, 'a') + "\\\",[]:" + std::string(over, 'b'), "10")}),
               "a JSON string", 2);
  // At the bound, accepted (and in memory the same).
  const std::string at = trace_of({kernel_event(std::string(calibration::kMaxTraceTokenBytes - 2, 'a'), "10")});
  const auto path = dir.write("at.json.gz", test::gzip(at));
  CHECK(calibration::read_kineto_trace(path).ops.at(0).name.size() == static_cast<std::size_t>(calibration::kMaxTraceTokenBytes - 2));
  refused(std::string(over, ' ') + good, "trace", "run of whitespace", 1);
}

TEST_CASE("kineto: timestamps and ids at or past the int64 limits are refused, naming line and field", "[trace][hostile]") {
  const auto ev = [](const std::string& ts) { return trace_of({kernel_event("k", "10"), kernel_event("k", ts)}); };
  for (const char* ts : {"9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551615",
                         "9000000000000001", "-9000000000000001", "1e300", "-1e18"}) {
    INFO(ts);
    refused(ev(ts), "traceEvents[1].ts", "at most 9000000000000000", 3);
  }
  // The old reader subtracted the first stamp from each: INT64_MIN then INT64_MAX wrapped to -1.
  refused(trace_of({kernel_event("k", "-9000000000000000"), kernel_event("k", "9223372036854775807")}), "traceEvents[1].ts",
          "at most", 3);
  // The bound itself is read, and exactly: the two stamps 1.8e16 us apart subtract without loss.
  const auto t = calibration::parse_kineto_trace(trace_of({kernel_event("k", "-9000000000000000"), kernel_event("k", "9000000000000000")}),
                                                 "t.json");
  CHECK(t.ops.at(1).start_us - t.ops.at(0).start_us == 1.8e16);
  refused(trace_of({R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1e14})"}), "traceEvents[0].dur", "at most");
  // An id past int64 would wrap into another (correlation 2^64 - 1 read as -1: no launch).
  refused(trace_of({kernel_event("k", "10", R"(, "correlation": 18446744073709551615)")}), "traceEvents[0].args.correlation",
          "below 2^63", 2);
  refused(trace_of({kernel_event("k", "10")}, R"("distributedInfo": {"rank": 9223372036854775807}, )"), "distributedInfo.rank",
          "[-1, 2^31]");
}

TEST_CASE("kineto: records kept are bounded, names are held once", "[trace][hostile]") {
  std::vector<std::string> events;
  const std::string name(100000, 'n');  // a long name on every op
  for (int i = 0; i < 200; ++i) events.push_back(kernel_event(name, std::to_string(10 + i)));
  const auto text = trace_of(events);
  const auto t = calibration::parse_kineto_trace(text, "t.json");
  REQUIRE(t.ops.size() == 200);
  for (const auto& op : t.ops) CHECK(op.name.shares(t.ops.front().name));
  CHECK(t.ops.back().name == name);
  try {
    (void)calibration::parse_kineto_trace(text, "t.json", nullptr, 100);
    FAIL("accepted");
  } catch (const models::InputError& e) {
    CHECK(e.field() == "traceEvents");
    CHECK(e.line() == 102);  // the 101st event
    CHECK_THAT(std::string(e.what()), Catch::Contains("more than 100 GPU operations"));
  }
  std::vector<std::string> launches{kernel_event("k", "10")};
  for (int i = 0; i < 200; ++i)
    launches.push_back(fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 5, "dur": 1, "args": {{"correlation": {}}}}})", i));
  CHECK_THROWS_WITH(calibration::parse_kineto_trace(trace_of(launches), "t.json", nullptr, 100), Catch::Contains("CPU launches"));
}

TEST_CASE("synthetic traces: whatever the planted figures, the reader accepts what is written", "[trace][hostile]") {
  // A link or efficiency so small that a transfer or kernel lasts longer than a trace can hold
  // ("dur": inf was written for 1e-300 GB/s) is refused up front; everything else reads back.
  std::mt19937_64 rng(50);
  const auto log_uniform = [&](double lo, double hi) {
    return std::pow(10.0, std::uniform_real_distribution<double>(std::log10(lo), std::log10(hi))(rng));
  };
  auto s = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 2, 8192, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  int written = 0, refused_up_front = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const bool extreme = trial % 2 == 0;
    s.profile.attention_efficiency = extreme ? log_uniform(1e-300, 1) : log_uniform(1e-12, 1);
    s.profile.attention_bwd_efficiency = extreme ? log_uniform(1e-300, 1) : log_uniform(1e-12, 1);
    s.rebuild_cost();
    const calibration::PlantedLink link{trial % 3 == 0 ? 0.0 : log_uniform(1e-9, 1e3),
                                        extreme ? log_uniform(1e-300, 1e300) : log_uniform(1e-3, 1e15)};
    const int steps = 1 + trial % 3;
    const double other = trial % 4 == 0 ? log_uniform(1e-9, 1e9) : 0.0;
    INFO("trial " << trial << ": efficiencies " << s.profile.attention_efficiency << ", " << s.profile.attention_bwd_efficiency
                  << "; link " << link.latency_s << " s, " << link.bandwidth_bytes_per_s << " B/s; other " << other);
    calibration::SyntheticRun run;
    try {
      run = calibration::synthetic_ring_run(s, link, steps, other);
    } catch (const models::InputError& e) {
      CHECK((e.field() == "link" || e.field() == "efficiency" || e.field() == "other_compute_s"));
      ++refused_up_front;
      continue;
    }
    ++written;
    for (std::size_t r = 0; r < run.traces.size(); ++r) {
      CHECK(run.traces[r].find("inf") == std::string::npos);
      CHECK(run.traces[r].find("nan") == std::string::npos);
      const auto t = calibration::parse_kineto_trace(run.traces[r], "rank" + std::to_string(r) + ".json");
      const auto sum = calibration::summarize(t, test::trace_classes());
      CHECK(static_cast<int>(sum.steps.size()) == steps);
    }
  }
  CHECK(written > 10);
  CHECK(refused_up_front > 5);
}
