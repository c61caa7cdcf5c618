// Point-to-point hops fitted from probes: the fit recovers a planted line exactly, its held-out
// error never scores a fitted size, sizes below a ring's messages are left out, and a hardware
// that carries measured hops prices its ring hops with them (the spec otherwise).
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "calibration/link_probes.hpp"
#include "models/cost/cost.hpp"
#include "models/io/error.hpp"
#include "models/catalog/resolve.hpp"

using namespace ringsim;

namespace {

std::vector<calibration::ProbeRow> planted(double latency, double bandwidth, bool inter, const char* hw,
                                           double noise = 0) {
  std::vector<calibration::ProbeRow> rows;
  int k = 0;
  for (double b = 8192; b <= 1e9; b *= 1.5, ++k) {
    calibration::ProbeRow r;
    r.hardware = hw;
    r.pattern = inter ? "inter-node, pairs" : "intra-node, 1 GPU pair";
    r.inter_node = inter;
    r.bytes = b;
    // Small messages follow another regime (a floor), which the fit must leave out.
    const double t = b < calibration::kRingMessageBytes ? 5 * latency : latency + b / bandwidth;
    r.seconds = t * (1 + noise * ((k % 3) - 1));
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("probe fit: a planted latency and bandwidth come back, sizes below 1 MiB left out", "[calibration][links]") {
  const auto f = calibration::fit_hop(planted(12e-6, 160e9, false, "H800"), "p.csv");
  CHECK(f.hop.bandwidth_bytes_per_s == Approx(160e9).epsilon(1e-9));
  CHECK(f.hop.latency_s == Approx(12e-6).epsilon(1e-6));
  CHECK(f.hop.held_out_mape < 1e-9);
  for (const double b : f.bytes) CHECK(b >= calibration::kRingMessageBytes);
  // With noise the held-out error is positive and each held-out prediction differs from the
  // in-sample one: the size left out was not fitted.
  const auto g = calibration::fit_hop(planted(12e-6, 160e9, false, "H800", 0.02), "p.csv");
  CHECK(g.hop.held_out_mape > 0);
  CHECK(g.hop.bandwidth_se > 0);
  for (std::size_t i = 0; i < g.bytes.size(); ++i) CHECK(g.held_out_s[i] != g.fitted_s[i]);
}

TEST_CASE("probe fit: one GPU's hop types from its own rows, too few sizes is an input error", "[calibration][links]") {
  auto rows = planted(10e-6, 160e9, false, "H800");
  const auto inter = planted(30e-6, 23e9, true, "H800");
  rows.insert(rows.end(), inter.begin(), inter.end());
  const auto other = planted(15e-6, 150e9, false, "A800");
  rows.insert(rows.end(), other.begin(), other.end());
  const auto fit = calibration::fit_hardware(rows, "H800", "h800", "p.csv");
  REQUIRE(fit.links.intra_node);
  REQUIRE(fit.links.inter_node);
  CHECK(fit.links.intra_node->bandwidth_bytes_per_s == Approx(160e9));
  CHECK(fit.links.inter_node->bandwidth_bytes_per_s == Approx(23e9));
  CHECK_THROWS_AS(calibration::fit_hardware(rows, "B200", "b200", "p.csv"), models::InputError);
  const auto all = planted(10e-6, 1e11, false, "X");
  const std::vector<calibration::ProbeRow> few(all.end() - 2, all.end());
  CHECK_THROWS_AS(calibration::fit_hop(few, "p.csv"), models::InputError);
}

TEST_CASE("measured hops price a hardware's ring hops, without them the spec at link_efficiency does", "[calibration][links]") {
  const models::Catalog cat;
  auto hw = cat.hardware("h800");
  hw.point_to_point.reset();  // the catalog's h800 carries probed hops (configs/links): here, none
  const auto p = cat.profile("", hw, "ring-flash-attn");
  const auto spec = p.ring_hop(hw, false);
  CHECK_FALSE(spec.measured);
  models::PointToPoint links;
  links.hardware = "h800";
  links.fitted_from = "test";
  models::PointToPointHop hop;
  hop.bandwidth_bytes_per_s = 162e9;
  hop.latency_s = 10.5e-6;
  links.intra_node = hop;
  hw.point_to_point = links;
  const auto intra = p.ring_hop(hw, false);
  CHECK(intra.measured);
  // The profile's p2p limit, when a profile sets one, still applies.
  CHECK(intra.bandwidth_bytes_per_s == Approx(p.p2p_bandwidth_bytes_per_s > 0 ? std::min(162e9, p.p2p_bandwidth_bytes_per_s) : 162e9));
  CHECK(intra.latency_s == Approx(10.5e-6 + p.p2p_latency_s));
  CHECK_FALSE(p.ring_hop(hw, true).measured);  // no inter-node probe: the spec
  // The JSON round trip, and a file of another kind is refused.
  const auto back = models::PointToPoint::from_json(links.to_json(), "l.json");
  CHECK(back.intra_node->bandwidth_bytes_per_s == 162e9);
  auto bad = links.to_json();
  bad["intra_node"]["bandwith_bytes_per_s"] = 1e9;
  CHECK_THROWS_AS(models::PointToPoint::from_json(bad, "l.json"), models::InputError);
}
