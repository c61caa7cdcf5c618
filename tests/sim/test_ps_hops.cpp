// Processor-sharing hops against the general max-min Network, which must give the same
// deliveries when each hop's links carry only that hop's flows.
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine.hpp"
#include "sim/network.hpp"
#include "sim/ps_hops.hpp"
#include "sim/topology.hpp"

using namespace ringsim::sim;

namespace {

struct Start {
  Tick at;
  std::size_t hop;
  std::int64_t bytes;
};

// Delivery tick of every transfer, through either model. Each hop is two links in series
// (device -> switch -> device), the second the narrower, as a NIC route would be.
std::vector<Tick> deliveries(const std::vector<Start>& starts, const std::vector<double>& caps, double latency_s,
                             bool use_network) {
  Engine engine;
  std::vector<Tick> done(starts.size(), -1);
  auto h = engine.add_handler<std::uint32_t>([&](std::uint32_t i) { done[i] = engine.now(); });
  std::vector<Link> links;
  std::vector<HopParams> hops;
  for (std::size_t k = 0; k < caps.size(); ++k) {
    const auto a = static_cast<std::int64_t>(3 * k);
    links.push_back(Link{a, a + 1, LinkKind::NvLink, 2 * caps[k], latency_s / 2});
    links.push_back(Link{a + 1, a + 2, LinkKind::NvLink, caps[k], latency_s / 2});
    hops.push_back({caps[k], 2 * engine.to_ticks(latency_s / 2)});
  }
  Network network(engine, links);
  ProcessorSharingHops ps(engine, hops);
  auto go = engine.add_handler<std::uint32_t>([&](std::uint32_t i) {
    const auto& s = starts[i];
    const Route route = {static_cast<std::int64_t>(2 * s.hop), static_cast<std::int64_t>(2 * s.hop + 1)};
    if (use_network)
      network.start(route, s.bytes, engine.bind(h, i));
    else
      ps.start(s.hop, s.bytes, engine.bind(h, i));
  });
  for (std::size_t i = 0; i < starts.size(); ++i) engine.schedule_at(starts[i].at, go, static_cast<std::uint32_t>(i));
  engine.run();
  if (!use_network) {
    CHECK(ps.in_flight() == 0);
    CHECK(ps.delivered() == static_cast<std::int64_t>(starts.size()));
  }
  return done;
}

}  // namespace

TEST_CASE("processor-sharing hops deliver when the max-min network does", "[sim][ps]") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t nhops = 1 + rng() % 3;
    std::vector<double> caps;
    for (std::size_t k = 0; k < nhops; ++k) caps.push_back(1e9 * static_cast<double>(1 + rng() % 50));
    std::vector<Start> starts;
    const std::size_t nflows = 1 + rng() % 12;
    for (std::size_t i = 0; i < nflows; ++i) {
      // Some starts at equal times, some flows of equal size: ties in both.
      starts.push_back({static_cast<Tick>(rng() % 4) * 1'000'000, rng() % nhops,
                        rng() % 5 == 0 ? 0 : static_cast<std::int64_t>(1 + rng() % 4) * 1'000'000});
    }
    const double latency = rng() % 2 == 0 ? 0.0 : 1e-6;
    const auto a = deliveries(starts, caps, latency, true);
    const auto b = deliveries(starts, caps, latency, false);
    INFO("trial " << trial);
    for (std::size_t i = 0; i < starts.size(); ++i) {
      REQUIRE(a[i] >= 0);
      REQUIRE(b[i] >= 0);
      // Both round each drain to a tick; the schedules may differ by a tick per drain.
      CHECK(std::llabs(a[i] - b[i]) <= static_cast<Tick>(nflows));
    }
  }
}

TEST_CASE("processor sharing: two equal flows on one hop take twice as long", "[sim][ps]") {
  Engine engine;
  const HopParams hop{1e9, 0};
  ProcessorSharingHops ps(engine, std::span<const HopParams>(&hop, 1));
  std::vector<Tick> done;
  auto h = engine.add_handler<NoArg>([&](NoArg) { done.push_back(engine.now()); });
  ps.start(0, 1'000'000, engine.bind(h, NoArg{}));
  ps.start(0, 1'000'000, engine.bind(h, NoArg{}));
  engine.run();
  REQUIRE(done.size() == 2);
  CHECK(done[0] == engine.to_ticks(2e-3));
  CHECK(done[1] == engine.to_ticks(2e-3));
  // Bad hops.
  const HopParams bad{0, 0};
  CHECK_THROWS_AS(ProcessorSharingHops(engine, std::span<const HopParams>(&bad, 1)), std::invalid_argument);
}
