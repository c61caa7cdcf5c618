// Machine capacities fitted to probe rows (calibration/machine_probes.hpp): rows generated from
// a planted machine are fitted back to the planted capacities from other starting values, every
// held-out row is then predicted within rounding, and malformed rows and descriptions are refused
// with their file, line and field.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

#include "calibration/machine_probes.hpp"
#include "models/io/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim;

namespace {

// 4 GeForce-like cards without peer access, two per socket on their own root ports.
std::string machine_json(double one_way, double both, double root_complex, double latency) {
  auto fig = [](double v) { return "{\"value\": " + std::to_string(v) + ", \"source\": \"planted\"}"; };
  return std::string("{\"name\": \"planted\", \"gpus\": ") + fig(4) + ", \"nodes\": " + fig(1) +
         ", \"machine\": {\"fabric\": \"pcie\", \"peer_access\": " + fig(0) + ", \"gpu_link\": {\"bytes_per_s\": " +
         fig(one_way) + ", \"duplex_bytes_per_s\": " + fig(both) +
         "}, \"gpu_parents\": [\"socket0\", \"socket0\", \"socket1\", \"socket1\"], \"socket_link\": {\"bytes_per_s\": " +
         fig(40e9) + "}, \"root_complex_bytes_per_s\": " + fig(root_complex) + ", \"staged_latency_s\": " + fig(latency) +
         "}, \"free\": [\"machine.gpu_link.bytes_per_s\", \"machine.gpu_link.duplex_bytes_per_s\", "
         "\"machine.root_complex_bytes_per_s\", \"machine.staged_latency_s\"]}";
}

const std::vector<std::string> kHeader = {"machine", "source", "pattern", "transfers", "bytes", "metric", "value", "note"};

}  // namespace

TEST_CASE("a machine's free capacities come back from rows its planted twin produced", "[machine-probes]") {
  test::TempDir dir;
  const auto truth = calibration::ProbeMachine::load(dir.write("truth.json", machine_json(22e9, 30e9, 36e9, 11e-6)));
  const auto start = calibration::ProbeMachine::load(dir.write("start.json", machine_json(31e9, 50e9, 80e9, 20e-6)));
  // Probe shapes of p2pBandwidthLatencyTest and p2pmark: one way, both ways, latency, and all at once.
  std::vector<std::vector<std::string>> cells;
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {"uni", "0>1"}, {"uni", "0>2"}, {"uni", "3>1"}, {"bidir", "0>1;1>0"}, {"bidir", "0>2;2>0"}, {"bidir", "1>3;3>1"},
      {"all_pairs", "0>1;1>0;2>3;3>2"}, {"staggered", "0>1;1>2;2>3;3>0"}, {"latency", "0>1"}, {"latency", "1>3"}};
  const auto spec = truth.spec(truth.with(truth.values()));
  for (const auto& [pattern, transfers] : shapes) {
    const std::string metric = pattern == "latency" ? "latency_us" : pattern == "uni" ? "flow_GBps" : "sum_GBps";
    std::vector<std::string> row = {"planted", "test", pattern, transfers, pattern == "latency" ? "16" : "160000000", metric, "1", ""};
    const auto one = calibration::probe_rows("p.csv", kHeader, {row}, {2});
    char exact[40];  // every digit, so the unscored check below sees no rounding
    std::snprintf(exact, sizeof exact, "%.17g", calibration::predict_probe(spec, 1, one.front()));
    row[6] = exact;
    cells.push_back(row);
  }
  std::vector<std::int64_t> lines(cells.size());
  for (std::size_t i = 0; i < lines.size(); ++i) lines[i] = static_cast<std::int64_t>(i + 2);
  const auto rows = calibration::probe_rows("p.csv", kHeader, cells, lines);
  const auto fit = calibration::fit_machine(start, rows, true);
  REQUIRE(fit.values.size() == 4);
  CHECK(fit.values[0] == Approx(22e9).epsilon(1e-3));
  CHECK(fit.values[1] == Approx(30e9).epsilon(1e-3));
  CHECK(fit.values[2] == Approx(36e9).epsilon(1e-3));
  CHECK(fit.values[3] == Approx(11e-6).epsilon(1e-3));
  for (const auto& [pattern, v] : fit.held_out_mape) {
    INFO(pattern);
    CHECK(v.first < 1e-3);
  }
  // Unscored: nothing free is a score of the description as it is.
  CHECK(calibration::fit_machine(truth, rows, false).in_sample_mape.at("uni").first < 1e-9);
}

TEST_CASE("probe rows and machine descriptions are refused with file, line and field", "[machine-probes]") {
  auto refused = [](std::vector<std::string> row, const std::string& field) {
    try {
      (void)calibration::probe_rows("p.csv", kHeader, {row}, {7});
      FAIL("expected InputError");
    } catch (const models::InputError& e) {
      CHECK(e.file() == "p.csv");
      CHECK(e.line() == 7);
      CHECK(e.field() == field);
    }
  };
  refused({"m", "s", "uni", "0-1", "1000", "flow_GBps", "20", ""}, "transfers");
  refused({"m", "s", "uni", "0>1", "1000", "flow_GBps", "nan", ""}, "value");
  refused({"m", "s", "uni", "0>1", "-5", "flow_GBps", "20", ""}, "bytes");
  refused({"m", "s", "all_reduce", "0", "1000", "time_us", "20", ""}, "transfers");
  refused({"", "s", "uni", "0>1", "1000", "flow_GBps", "20", ""}, "machine");
  test::TempDir dir;
  auto text = machine_json(22e9, 30e9, 36e9, 11e-6);
  const std::string from = "\"machine.staged_latency_s\"]";
  text.replace(text.find(from), from.size(), "\"machine.nowhere_s\"]");
  const auto path = dir.write("bad.json", text);
  try {
    (void)calibration::ProbeMachine::load(path);
    FAIL("expected InputError");
  } catch (const models::InputError& e) {
    CHECK(e.file() == path);
    CHECK(e.field() == "free");
  }
  // A row naming a device the machine does not have.
  const auto machine = calibration::ProbeMachine::load(dir.write("m.json", machine_json(22e9, 30e9, 36e9, 11e-6)));
  const auto rows = calibration::probe_rows("p.csv", kHeader, {{"planted", "s", "uni", "0>9", "1000", "flow_GBps", "20", ""}}, {3});
  CHECK_THROWS_AS(calibration::fit_machine(machine, rows, false), models::InputError);
}
