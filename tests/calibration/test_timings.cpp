#include <catch2/catch.hpp>

#include <random>

#include "calibration/timings.hpp"
#include "models/io/error.hpp"
#include "models/catalog/resolve.hpp"

using namespace ringsim;
using namespace ringsim::calibration;

TEST_CASE("The tile-time fit recovers known parameters from noisy synthetic timings", "[timings]") {
  const models::Catalog catalog;
  const auto hw = catalog.hardware("a100-80gb");
  const auto base = catalog.profile("", hw);
  const double eff = 0.42, tile_s = 3e-6, penalty = 0.25, launch_s = 8e-6;
  std::mt19937_64 gen(2024);                         // explicit seed
  std::lognormal_distribution<double> noise(0, 0.01);  // 1 % multiplicative noise
  std::vector<KernelTiming> rows;
  std::int64_t line = 2;
  for (std::int64_t tile : {64, 128, 256})
    for (std::int64_t tiles : {1, 4, 16, 64, 256})
      for (bool masked : {false, true})
        for (const char* kernel : {"attention_fwd", "attention_bwd"}) {
          KernelTiming t;
          t.kernel = kernel;
          t.precision = models::Precision::BF16;
          t.head_dim = 128;
          t.heads = 16;
          t.batch = 2;
          t.tiles_visited = tiles;
          t.visited_area = tiles * tile * tile;
          t.masked_area = masked ? t.visited_area / 2 : 0;
          t.duration_s = predict_timing(t, hw, eff, tile_s, penalty, launch_s, base.attention_bwd_factor) * noise(gen);
          t.line = line++;
          rows.push_back(t);
        }
  const auto c = calibrate_timings(rows, hw, base, 5);
  // Tolerances: 1 % noise on 60 launches; the FLOP term is the best determined.
  CHECK(c.profile.attention_efficiency == Approx(eff).epsilon(0.02));
  CHECK(c.profile.tile_overhead_s == Approx(tile_s).epsilon(0.10));
  CHECK(c.profile.masked_tile_penalty == Approx(penalty).epsilon(0.05));
  CHECK(c.launch_overhead_s == Approx(launch_s).epsilon(0.10));
  CHECK(c.r_squared > 0.999);
  CHECK(c.held_out_mae < 0.02);
  // Every term matters: dropping any makes the held-out error worse.
  for (std::size_t k = 1; k < c.terms.size(); ++k) CHECK(c.terms[k].held_out_without > c.held_out_mae);
}

TEST_CASE("The tile-time fit rejects too few rows and unknown kernels", "[timings]") {
  const models::Catalog catalog;
  const auto hw = catalog.hardware("a100-80gb");
  const auto base = catalog.profile("", hw);
  std::vector<KernelTiming> rows(3);
  CHECK_THROWS_AS(calibrate_timings(rows, hw, base), models::InputError);
  rows.resize(10);
  for (auto& r : rows) {
    r.kernel = "matmul";
    r.head_dim = r.heads = r.tiles_visited = r.visited_area = 1;
    r.duration_s = 1;
  }
  CHECK_THROWS_AS(calibrate_timings(rows, hw, base), models::InputError);
}
