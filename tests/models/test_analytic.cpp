#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "models/analytic/analytic.hpp"
#include "models/analytic/breakdown.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim::models;

namespace {

ResolvedScenario scenario(const std::string& hw, const std::string& model, std::int64_t mp, std::int64_t sp,
                          std::int64_t n_seq, const std::string& layout, std::optional<TileShape> tile = std::nullopt,
                          const std::string& impl = {}) {
  return ringsim::test::resolve_scenario(hw, model, mp, sp, n_seq, layout, "causal", tile, impl);
}

}  // namespace

TEST_CASE("TMS reproduces the published column of the calibration file", "[analytic][tms]") {
  std::ifstream in(std::string(RINGSIM_TEST_DATA) + "/striped_paper_calibration.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);  // header: hardware,model,mp,sp,n_seq,tms,speedup
  double sum = 0, worst = 0;
  int rows = 0;
  while (std::getline(in, line)) {
    const auto f = split(line, ',');
    REQUIRE(f.size() == 8);  // hardware,model,mp,sp,n_seq,tms,speedup,impl
    const auto s = scenario(f[0], f[1], parse_int(f[2], "mp"), parse_int(f[3], "sp"), parse_int(f[4], "n_seq"), "contiguous");
    const double err = std::fabs(theoretical_max_speedup(s) - parse_double(f[5], "tms"));
    sum += err;
    worst = std::max(worst, err);
    ++rows;
  }
  REQUIRE(rows == 45);
  INFO("mean abs error " << sum / rows << ", max " << worst);
  CHECK(sum / rows <= 0.01);
  CHECK(worst <= 0.03);
}

TEST_CASE("TMS tends to (N + 1/2)/(N/2 + 1/2) as the block grows and is 1 for one device", "[analytic][tms]") {
  ModelConfig m;
  m.name = "t";
  m.vocab = 32000;
  m.d_model = 2048;
  m.d_ff = 5504;
  m.layers = 22;
  m.heads = 16;
  m.kv_heads = 16;
  m.head_dim = 128;
  CHECK(theoretical_max_speedup(m, 1, 65536, 2.0) == Approx(1.0));
  for (std::int64_t n : {2, 4, 8}) {
    const auto nd = static_cast<double>(n);
    const double limit = (nd - 0.5) / (nd / 2.0);
    const double big = theoretical_max_speedup(m, n, n * (std::int64_t{1} << 30), 1.0);
    CHECK(big == Approx(limit).epsilon(1e-3));
    CHECK(theoretical_max_speedup(m, n, n * 4096, 1.0) < big);
  }
}

TEST_CASE("ring / striped attention round time tends to 2 as c and N grow", "[analytic]") {
  double previous = 1.0;
  for (auto [n, c] : {std::pair<std::int64_t, std::int64_t>{4, 1024}, {16, 4096}, {64, 16384}}) {
    const TileShape tile{64, 64};
    // One tile loop at spec defaults for all three (ringsim's own kernels): the tile counts decide.
    const auto ring = scenario("h100-sxm", "attn:8:8:128", 1, n, n * c, "contiguous", tile, "ringsim-tiles");
    const auto striped = scenario("h100-sxm", "attn:8:8:128", 1, n, n * c, "striped", tile, "ringsim-tiles");
    const auto zigzag = scenario("h100-sxm", "attn:8:8:128", 1, n, n * c, "zigzag", tile, "ringsim-tiles");
    // Compute only: the busiest device's attention per round, summed over rounds.
    auto compute = [](const ResolvedScenario& s) {
      double t = 0;
      for (const auto& r : predict(s).rounds_fwd) t += r.compute_max_s;
      return t;
    };
    const double r_s = compute(ring) / compute(striped);
    const double r_z = compute(ring) / compute(zigzag);
    INFO("N=" << n << " c=" << c << " ring/striped=" << r_s << " ring/zigzag=" << r_z);
    CHECK(r_s > previous);
    CHECK(r_s < 2.0);
    CHECK(r_z < 2.0);
    previous = r_s;
  }
  CHECK(previous > 1.95);
}

TEST_CASE("a prediction is finite and its breakdown adds up", "[analytic]") {
  for (const char* layout : {"contiguous", "striped", "zigzag", "cyclic:64"}) {
    const auto s = scenario("a100-80gb", "ringattn-3b", 2, 4, 262144, layout);
    const auto p = predict(s);
    INFO(layout);
    CHECK(std::isfinite(p.step_s));
    CHECK(p.step_s > 0);
    CHECK(p.step_s == Approx(p.attention_fwd_s + p.attention_bwd_s + p.other_compute_s + p.collective_s));
    CHECK(p.tokens_per_s == Approx(262144.0 / p.step_s));
    CHECK(p.mfu > 0);
    CHECK(p.mfu < 1);
    CHECK(p.imbalance >= 1.0);
    CHECK(p.rounds_fwd.size() == 4);
    CHECK(p.hide_threshold_tokens > 0);
  }
  // Ring waits for its busiest device: imbalance near 2 for large N, 1 for striped.
  CHECK(predict(scenario("a100-80gb", "ringattn-1b", 1, 8, 262144, "contiguous")).imbalance > 1.7);
  CHECK(predict(scenario("a100-80gb", "ringattn-1b", 1, 8, 262144, "striped")).imbalance == Approx(1.0).epsilon(0.01));
  // The why-line quotes the same imbalance figure the table prints, not another definition.
  const auto c = predict(scenario("a100-80gb", "ringattn-1b", 1, 8, 262144, "contiguous"));
  const auto line = why(c, pass_breakdown(c));
  char quoted[64];
  std::snprintf(quoted, sizeof quoted, "imbalance %.2f:", c.imbalance);
  REQUIRE(line.starts_with("imbalance"));
  CHECK(line.find(quoted) == 0);
}

TEST_CASE("the transfer is exposed only when it outlasts compute", "[analytic]") {
  // Tiny blocks on a slow inter-node link are transfer-bound; huge blocks hide the transfer.
  const auto small = scenario("a100-80gb", "ringattn-1b", 1, 16, 16 * 512, "striped", TileShape{128, 128});
  const auto big = scenario("a100-80gb", "ringattn-1b", 1, 4, 4 * 65536, "striped");
  const auto ps = predict(small);
  const auto pb = predict(big);
  CHECK(static_cast<double>(small.layout->block()) < ps.hide_threshold_tokens);
  CHECK(static_cast<double>(big.layout->block()) > pb.hide_threshold_tokens);
  CHECK(ps.exposed_transfer_s > 0.1 * ps.attention_fwd_s);
}

TEST_CASE("scenario resolution rejects impossible scenarios", "[analytic][errors]") {
  CHECK_THROWS_AS(scenario("a100-80gb", "ringattn-1b", 1, 3, 8192, "striped"), InputError);           // 8192 % 3
  CHECK_THROWS_AS(scenario("a100-80gb", "ringattn-1b", 1, 8, 8192, "striped", TileShape{2048, 2048}), InputError);  // tile > block
  CHECK_THROWS_AS(scenario("a100-80gb", "ringattn-1b", 3, 2, 8192, "striped"), InputError);           // 16 heads % 3
  CHECK_THROWS_AS(scenario("z80", "ringattn-1b", 1, 2, 8192, "striped"), InputError);
  CHECK_THROWS_AS(scenario("a100-80gb", "gpt-5", 1, 2, 8192, "striped"), InputError);
  CHECK_THROWS_AS(scenario("a100-80gb", "attn:8:3:64", 1, 2, 8192, "striped"), InputError);
  // A profile default tile larger than the block is clamped, and says so.
  const auto s = scenario("a100-80gb", "ringattn-1b", 1, 8, 8192, "striped");
  CHECK(s.tile_clamped);
  CHECK(s.tile.q == 1024);
}

TEST_CASE("a resolved scenario stays usable after it is moved", "[analytic]") {
  auto s = scenario("a100-80gb", "ringattn-1b", 2, 4, 65536, "striped");
  const double before = predict(s).step_s;
  const auto moved = std::make_unique<ResolvedScenario>(std::move(s));
  CHECK(predict(*moved).step_s == before);
  CHECK(moved->cost->link_bandwidth_bytes_per_s(false) ==
        moved->hardware.intra_link_bandwidth_bytes_per_s * moved->profile.link_efficiency);
}
