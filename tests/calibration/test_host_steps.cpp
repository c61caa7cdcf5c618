// The host's time per ring step and per call: counts from the library's own step plan, a fit that
// recovers what generated the runs, and refusals where the runs cannot tell the two terms apart.
#include <random>

#include <catch2/catch.hpp>

#include "calibration/host_steps.hpp"
#include "models/catalog/catalog.hpp"
#include "models/io/error.hpp"

using namespace ringsim;
using calibration::HostRow;

namespace {

const models::RingSteps& rfa() {
  static const auto impl = models::Catalog().implementation("ring-flash-attn");
  return impl.protocol.ring_steps;
}

std::vector<HostRow> runs(double step, double call, double bwd_step, double bwd_call, double noise, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> eps(0, noise);
  std::vector<HostRow> rows;
  for (const char* layout : {"contiguous", "zigzag", "striped"})
    for (std::int64_t rank : {0, 3, 5, 7})
      for (const char* pass : {"fwd", "bwd"}) {
        HostRow r{"test host", layout, pass, 8, rank, 128, 0, static_cast<std::int64_t>(rows.size() + 2)};
        const auto n = calibration::host_counts(rfa(), layout, 8, rank, 128);
        const bool f = std::string(pass) == "fwd";
        r.seconds = ((f ? step : bwd_step) * n.steps + (f ? call : bwd_call) * n.calls) * std::exp(eps(rng));
        rows.push_back(r);
      }
  return rows;
}

}  // namespace

TEST_CASE("host counts: a causal contiguous ring calls on its own and earlier blocks, zigzag and stripe on all",
          "[calibration][host]") {
  for (std::int64_t n : {1, 2, 5, 8}) {
    for (std::int64_t rank = 0; rank < n; ++rank) {
      INFO("n " << n << " rank " << rank);
      const auto c = calibration::host_counts(rfa(), "contiguous", n, rank, 128);
      CHECK(c.steps == static_cast<double>(n));
      CHECK(c.calls == static_cast<double>(rank + 1));
      CHECK(calibration::host_counts(rfa(), "zigzag", n, rank, 128).calls == static_cast<double>(n));
      CHECK(calibration::host_counts(rfa(), "striped", n, rank, 128).calls == static_cast<double>(n));
    }
  }
  CHECK_THROWS_AS(calibration::host_counts(rfa(), "cyclic", 8, 0, 128), models::InputError);
  CHECK_THROWS_AS(calibration::host_counts(rfa(), "zigzag", 8, 8, 128), models::InputError);
}

TEST_CASE("host fit: recovers the terms that generated the runs, per pass", "[calibration][host]") {
  const auto exact = calibration::fit_host_steps(runs(2e-4, 5e-4, 4.5e-4, 4e-4, 0, 1), rfa());
  REQUIRE(exact.passes.size() == 2);
  CHECK(exact.passes[0].pass == "fwd");
  CHECK(exact.passes[0].step_s == Approx(2e-4).epsilon(1e-9));
  CHECK(exact.passes[0].call_s == Approx(5e-4).epsilon(1e-9));
  CHECK(exact.passes[1].step_s == Approx(4.5e-4).epsilon(1e-9));
  CHECK(exact.passes[1].call_s == Approx(4e-4).epsilon(1e-9));
  CHECK(exact.passes[0].held_out_mape < 1e-9);
  // Noisy runs: the truth within three standard errors, the held-out error near the noise.
  const auto noisy = calibration::fit_host_steps(runs(2e-4, 5e-4, 4.5e-4, 4e-4, 0.05, 7), rfa());
  const auto& f = noisy.passes[0];
  CHECK(std::abs(f.step_s - 2e-4) < 3 * f.step_se);
  CHECK(std::abs(f.call_s - 5e-4) < 3 * f.call_se);
  CHECK(f.step_se > 0);
  CHECK(f.held_out_mape > f.in_sample_mape * 0.9);
  CHECK(f.held_out_mape < 0.1);
  // Without the contiguous runs the others cannot tell steps from calls: said, not guessed.
  for (const auto& l : f.by_layout) CHECK(l.identified == (l.layout != "contiguous"));
}

TEST_CASE("host fit: refuses runs that cannot tell a step from a call", "[calibration][host][errors]") {
  auto rows = runs(2e-4, 5e-4, 4.5e-4, 4e-4, 0.02, 3);
  std::vector<HostRow> zigzag;
  for (const auto& r : rows)
    if (r.layout == "zigzag") zigzag.push_back(r);
  CHECK_THROWS_WITH(calibration::fit_host_steps(zigzag, rfa()), Catch::Contains("cannot tell"));
  std::vector<HostRow> two(rows.begin(), rows.begin() + 2);  // one fwd, one bwd run
  CHECK_THROWS_WITH(calibration::fit_host_steps(two, rfa()), Catch::Contains("at least 3"));
}
