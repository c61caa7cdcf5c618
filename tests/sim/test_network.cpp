#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "sim/engine.hpp"
#include "sim/network.hpp"
#include "sim/topology.hpp"

using ringsim::sim::Engine;
using ringsim::sim::FlowId;
using ringsim::sim::Handler;
using ringsim::sim::Link;
using ringsim::sim::LinkParams;
using ringsim::sim::Network;
using ringsim::sim::NoArg;
using ringsim::sim::Route;
using ringsim::sim::Tick;
using ringsim::sim::Topology;

namespace {

// Links for hand-built cases: endpoints do not matter to the network, only capacities.
std::vector<Link> make_links(std::initializer_list<double> caps, double latency_s = 0) {
  std::vector<Link> links;
  std::int64_t i = 0;
  for (const double c : caps) {
    links.push_back(Link{i, i + 1, ringsim::sim::LinkKind::NvLink, c, latency_s});
    ++i;
  }
  return links;
}

// Textbook progressive filling: raise every unfrozen flow's rate together until some link is
// full, freeze the flows crossing full links, repeat. Independent of the network's heap-based
// water-filling; used as the oracle.
std::vector<double> brute_force_max_min(const std::vector<double>& caps, const std::vector<Route>& routes) {
  const auto nf = routes.size();
  std::vector<double> rate(nf, 0.0);
  std::vector<bool> frozen(nf, false);
  std::size_t left = nf;
  while (left > 0) {
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < caps.size(); ++l) {
      double used = 0;
      int unfrozen = 0;
      for (std::size_t f = 0; f < nf; ++f) {
        if (std::find(routes[f].begin(), routes[f].end(), static_cast<std::int64_t>(l)) == routes[f].end()) continue;
        used += rate[f];
        if (!frozen[f]) ++unfrozen;
      }
      if (unfrozen > 0) step = std::min(step, (caps[l] - used) / unfrozen);
    }
    for (std::size_t f = 0; f < nf; ++f)
      if (!frozen[f]) rate[f] += step;
    for (std::size_t l = 0; l < caps.size(); ++l) {
      double used = 0;
      for (std::size_t f = 0; f < nf; ++f)
        if (std::find(routes[f].begin(), routes[f].end(), static_cast<std::int64_t>(l)) != routes[f].end())
          used += rate[f];
      if (used < caps[l] * (1 - 1e-12)) continue;
      for (std::size_t f = 0; f < nf; ++f) {
        if (frozen[f]) continue;
        if (std::find(routes[f].begin(), routes[f].end(), static_cast<std::int64_t>(l)) == routes[f].end()) continue;
        frozen[f] = true;
        --left;
      }
    }
  }
  return rate;
}

}  // namespace

TEST_CASE("A lone transfer takes latency + bytes / bandwidth", "[sim][network]") {
  Engine eng;
  const auto links = make_links({100e9, 50e9}, 1e-6);
  Network net(eng, links);
  Tick done_at = -1;
  const auto h = eng.add_handler<int>([&](int) { done_at = eng.now(); });
  const std::vector<std::int64_t> route{0, 1};
  const FlowId f = net.start(route, 50'000'000, eng.bind(h, 0));
  net.settle();
  CHECK(net.rate_bytes_per_s(f) == 50e9);
  eng.run();
  CHECK(done_at == eng.to_ticks(2e-6 + 1e-3));
  CHECK(net.delivered() == 1);
  CHECK(net.in_flight() == 0);
  CHECK(net.link_bytes_sent(0) == 50'000'000);
  CHECK(net.link_bytes_received(1) == 50'000'000);
}

TEST_CASE("A link's first and last use bound the time its bandwidth was drawn", "[sim][network]") {
  // Link 0 carries a flow from 1 ms to its drain; link 1 a later one; link 2 nothing; a
  // zero-byte message uses no bandwidth. Latency (delivery after the drain) is not use.
  Engine eng;
  const auto links = make_links({1e9, 1e9, 1e9}, 5e-6);
  Network net(eng, links);
  const auto h = eng.add_handler<int>([](int) {});
  const auto start = eng.add_handler<int>([&](int which) {
    const std::vector<std::int64_t> r0{0}, r1{1}, r2{2};
    if (which == 0) (void)net.start(r0, 1'000'000, eng.bind(h, 0));
    if (which == 1) (void)net.start(r1, 2'000'000, eng.bind(h, 1));
    if (which == 2) (void)net.start(r2, 0, eng.bind(h, 2));
  });
  eng.schedule_at(eng.to_ticks(1e-3), start, 0);
  eng.schedule_at(eng.to_ticks(4e-3), start, 1);
  eng.schedule_at(eng.to_ticks(5e-3), start, 2);
  eng.run();
  CHECK(net.link_first_use(0) == eng.to_ticks(1e-3));
  CHECK(net.link_last_use(0) == eng.to_ticks(1e-3) + eng.to_ticks(1e-3));  // 1 MB at 1 GB/s
  CHECK(net.link_first_use(1) == eng.to_ticks(4e-3));
  CHECK(net.link_last_use(1) == eng.to_ticks(4e-3) + eng.to_ticks(2e-3));
  CHECK(net.link_first_use(2) == Network::kNeverUsed);
  CHECK(net.link_last_use(2) == -1);
}

TEST_CASE("Max-min fairness on hand-computed cases", "[sim][network]") {
  Engine eng;
  SECTION("two flows on one link get half each; a third elsewhere is unaffected") {
    const auto links = make_links({10, 4});
    Network net(eng, links);
    const std::vector<std::int64_t> a{0}, b{1};
    const auto f1 = net.start(a, 100, {});
    const auto f2 = net.start(a, 100, {});
    const auto f3 = net.start(b, 100, {});
    net.settle();
    CHECK(net.rate_bytes_per_s(f1) == 5);
    CHECK(net.rate_bytes_per_s(f2) == 5);
    CHECK(net.rate_bytes_per_s(f3) == 4);
  }
  SECTION("the narrow link fixes its flows first, the wide one shares what is left") {
    // f1: A; f2: A, B; f3: B. B (4) gives 2 to f2 and f3; A (10) gives f1 the other 8.
    const auto links = make_links({10, 4});
    Network net(eng, links);
    const std::vector<std::int64_t> a{0}, ab{0, 1}, b{1};
    const auto f1 = net.start(a, 100, {});
    const auto f2 = net.start(ab, 100, {});
    const auto f3 = net.start(b, 100, {});
    net.settle();
    CHECK(net.rate_bytes_per_s(f1) == Approx(8));
    CHECK(net.rate_bytes_per_s(f2) == Approx(2));
    CHECK(net.rate_bytes_per_s(f3) == Approx(2));
  }
  SECTION("three levels") {
    // Links 0 (cap 3), 1 (cap 10), 2 (cap 12). f1: 0,1; f2: 0; f3: 1,2; f4: 2; f5: 1.
    // Link 0: f1 = f2 = 1.5. Link 1 then has 8.5 for f3, f5 (4.25 each); link 2 offers 6 each
    // to f3, f4, so link 1 binds: f3 = f5 = 4.25, and f4 takes 12 - 4.25 = 7.75.
    const auto links = make_links({3, 10, 12});
    Network net(eng, links);
    const std::vector<Route> routes{{0, 1}, {0}, {1, 2}, {2}, {1}};
    std::vector<FlowId> ids;
    for (const auto& r : routes) ids.push_back(net.start(r, 1000, {}));
    net.settle();
    const std::array<double, 5> want{1.5, 1.5, 4.25, 7.75, 4.25};
    for (std::size_t i = 0; i < ids.size(); ++i) CHECK(net.rate_bytes_per_s(ids[i]) == Approx(want[i]));
  }
}

TEST_CASE("Two flows crossing one NIC each get half its bandwidth", "[sim][network]") {
  const LinkParams nvlink{450e9, 1e-6};
  const LinkParams nic{50e9, 5e-6};
  const auto topo = Topology::nodes(2, 2, nvlink, nic);
  Engine eng;
  Network net(eng, topo);
  std::vector<Tick> done;
  const auto h = eng.add_handler<int>([&](int) { done.push_back(eng.now()); });
  const auto r1 = topo.route(0, 2);
  const auto r2 = topo.route(0, 3);
  const auto f1 = net.start(r1, 1'000'000, eng.bind(h, 1));
  const auto f2 = net.start(r2, 1'000'000, eng.bind(h, 2));
  net.settle();
  CHECK(net.rate_bytes_per_s(f1) == Approx(25e9));
  CHECK(net.rate_bytes_per_s(f2) == Approx(25e9));
  CHECK(net.link_flow_count(r1.front()) == 2);
  eng.run();
  REQUIRE(done.size() == 2);
  // 1 MB at 25 GB/s = 40 us, plus the hop's 5 us latency (half on each of its two NIC links).
  CHECK(done[0] == eng.to_ticks(45e-6));
  CHECK(done[1] == done[0]);
}

TEST_CASE("Rates are recomputed when a flow ends", "[sim][network]") {
  // Both flows share one 10 B/s link at 5 B/s; the 10-byte one ends at 2 s, after which the
  // 30-byte one (20 bytes left) runs alone at 10 B/s and ends at 4 s.
  Engine eng;
  const auto links = make_links({10});
  Network net(eng, links);
  std::vector<std::pair<int, Tick>> done;
  const auto h = eng.add_handler<int>([&](int id) { done.emplace_back(id, eng.now()); });
  const std::vector<std::int64_t> r{0};
  (void)net.start(r, 10, eng.bind(h, 1));
  const auto f2 = net.start(r, 30, eng.bind(h, 2));
  eng.run_until(eng.to_ticks(1.0));
  CHECK(net.rate_bytes_per_s(f2) == 5);
  CHECK(net.remaining_bytes(f2) == 30);  // as of the last settle, at time 0
  eng.run_until(eng.to_ticks(3.0));
  CHECK(net.rate_bytes_per_s(f2) == 10);
  CHECK(net.remaining_bytes(f2) == Approx(20));
  eng.run();
  REQUIRE(done.size() == 2);
  CHECK(done[0] == std::pair<int, Tick>{1, eng.to_ticks(2.0)});
  CHECK(done[1] == std::pair<int, Tick>{2, eng.to_ticks(4.0)});
  CHECK(net.link_carried_bytes(0) == Approx(40));
}

TEST_CASE("A flow that joins a lone flow's link later slows it down", "[sim][network]") {
  // The 30-byte flow starts alone at 10 B/s; at 1 s (20 bytes left) a 10-byte flow joins and
  // both run at 5 B/s; the newcomer ends at 3 s, leaving 10 bytes that take until 4 s.
  Engine eng;
  const auto links = make_links({10, 100});
  Network net(eng, links);
  std::vector<std::pair<int, Tick>> done;
  const auto h = eng.add_handler<int>([&](int id) { done.emplace_back(id, eng.now()); });
  const std::vector<std::int64_t> long_route{0, 1}, short_route{0};
  const auto first = net.start(long_route, 30, eng.bind(h, 1));
  CHECK(net.rate_bytes_per_s(first) == 10);  // no other flow: rate known without a settle
  const auto join = eng.add_handler<NoArg>([&](NoArg) { (void)net.start(short_route, 10, eng.bind(h, 2)); });
  eng.schedule_at(eng.to_ticks(1.0), join, NoArg{});
  eng.run_until(eng.to_ticks(2.0));
  CHECK(net.rate_bytes_per_s(first) == 5);
  eng.run();
  REQUIRE(done.size() == 2);
  CHECK(done[0] == std::pair<int, Tick>{2, eng.to_ticks(3.0)});
  CHECK(done[1] == std::pair<int, Tick>{1, eng.to_ticks(4.0)});
  for (std::int64_t l = 0; l < 2; ++l) CHECK(net.link_bytes_sent(l) == net.link_bytes_received(l));
  CHECK(net.link_bytes_sent(0) == 40);
  CHECK(net.link_bytes_sent(1) == 30);
}

TEST_CASE("Water-filling matches brute-force progressive filling on random graphs", "[sim][network]") {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 200; ++trial) {
    const int n_links = 1 + static_cast<int>(rng() % 8);
    const int n_flows = 1 + static_cast<int>(rng() % 12);
    std::vector<double> caps;
    std::vector<Link> links;
    for (int l = 0; l < n_links; ++l) {
      caps.push_back(1.0 + static_cast<double>(rng() % 1000));
      links.push_back(Link{l, l + 1, ringsim::sim::LinkKind::Nic, caps.back(), 0});
    }
    std::vector<Route> routes;
    for (int f = 0; f < n_flows; ++f) {
      Route r;
      for (int l = 0; l < n_links; ++l)
        if (rng() % 3 == 0) r.push_back(l);
      if (r.empty()) r.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n_links)));
      std::shuffle(r.begin(), r.end(), rng);
      routes.push_back(r);
    }
    Engine eng;
    Network net(eng, links);
    std::vector<FlowId> ids;
    for (const auto& r : routes) ids.push_back(net.start(r, 1'000'000, {}));
    net.settle();
    const auto want = brute_force_max_min(caps, routes);
    INFO("trial " << trial);
    for (std::size_t f = 0; f < routes.size(); ++f)
      REQUIRE(net.rate_bytes_per_s(ids[f]) == Approx(want[f]).epsilon(1e-9));
    // Max-min properties, directly: no link over capacity, and every flow has a full link on
    // which no other flow gets more.
    for (int l = 0; l < n_links; ++l) {
      double used = 0;
      for (std::size_t f = 0; f < routes.size(); ++f)
        if (std::find(routes[f].begin(), routes[f].end(), l) != routes[f].end()) used += net.rate_bytes_per_s(ids[f]);
      REQUIRE(used <= caps[static_cast<std::size_t>(l)] * (1 + 1e-12));
    }
  }
}

TEST_CASE("Bytes are conserved on every link of a busy torus", "[sim][network]") {
  const std::array<std::int64_t, 2> dims{3, 4};
  const auto topo = Topology::torus(dims, LinkParams{45e9, 2e-6});
  std::mt19937_64 rng(99);
  struct Planned {
    std::int64_t src, dst, bytes;
    Tick at;
  };
  std::vector<Planned> plan;
  Engine eng;
  for (int i = 0; i < 400; ++i)
    plan.push_back({static_cast<std::int64_t>(rng() % 12), static_cast<std::int64_t>(rng() % 12),
                    static_cast<std::int64_t>(rng() % 4'000'000), static_cast<Tick>(rng() % 200'000'000)});
  Network net(eng, topo);
  std::vector<int> completions(plan.size(), 0);
  const auto done = eng.add_handler<int>([&](int i) { ++completions[static_cast<std::size_t>(i)]; });
  const auto go = eng.add_handler<int>([&](int i) {
    const auto& p = plan[static_cast<std::size_t>(i)];
    (void)net.start(topo.route(p.src, p.dst), p.bytes, eng.bind(done, i));
  });
  for (std::size_t i = 0; i < plan.size(); ++i) eng.schedule_at(plan[i].at, go, static_cast<int>(i));
  eng.run();
  CHECK(std::all_of(completions.begin(), completions.end(), [](int c) { return c == 1; }));
  CHECK(net.in_flight() == 0);
  CHECK(net.draining() == 0);
  std::vector<std::int64_t> expect(static_cast<std::size_t>(topo.link_count()), 0);
  for (const auto& p : plan)
    for (const auto id : topo.route(p.src, p.dst)) expect[static_cast<std::size_t>(id)] += p.bytes;
  for (std::int64_t l = 0; l < topo.link_count(); ++l) {
    REQUIRE(net.link_bytes_sent(l) == net.link_bytes_received(l));
    REQUIRE(net.link_bytes_sent(l) == expect[static_cast<std::size_t>(l)]);
    REQUIRE(net.link_carried_bytes(l) == Approx(static_cast<double>(expect[static_cast<std::size_t>(l)])).margin(1e-3));
  }
}

TEST_CASE("Network runs are deterministic", "[sim][network]") {
  auto run = [] {
    const auto topo = Topology::nodes(2, 4, LinkParams{450e9, 1e-6}, LinkParams{50e9, 5e-6});
    Engine eng;
    Network net(eng, topo);
    std::mt19937_64 rng(5);
    std::vector<std::pair<int, Tick>> trace;
    const auto done = eng.add_handler<int>([&](int i) { trace.emplace_back(i, eng.now()); });
    for (int i = 0; i < 200; ++i) {
      const auto s = static_cast<std::int64_t>(rng() % 8);
      const auto d = static_cast<std::int64_t>(rng() % 8);
      eng.schedule_at(static_cast<Tick>(rng() % 1'000'000), eng.bind(eng.add_handler<int>([&, s, d](int id) {
                        (void)net.start(topo.route(s, d), 1 << 20, eng.bind(done, id));
                      }), i));
    }
    eng.run();
    return trace;
  };
  const auto a = run();
  CHECK(a.size() == 200);
  CHECK(a == run());
}

TEST_CASE("Empty routes and empty transfers complete after the route latency", "[sim][network]") {
  Engine eng;
  const auto links = make_links({10, 10}, 3e-6);
  Network net(eng, links);
  std::vector<std::pair<int, Tick>> done;
  const auto h = eng.add_handler<int>([&](int id) { done.emplace_back(id, eng.now()); });
  (void)net.start(Route{}, 1000, eng.bind(h, 1));
  const std::vector<std::int64_t> r{0, 1};
  (void)net.start(r, 0, eng.bind(h, 2));
  eng.run();
  REQUIRE(done.size() == 2);
  CHECK(done[0] == std::pair<int, Tick>{1, 0});
  CHECK(done[1] == std::pair<int, Tick>{2, eng.to_ticks(6e-6)});
}

TEST_CASE("Malformed transfers are refused", "[sim][network]") {
  Engine eng;
  const auto links = make_links({10, 10});
  Network net(eng, links);
  const std::vector<std::int64_t> bad_id{2}, twice{0, 1, 0}, ok{0};
  CHECK_THROWS_AS(net.start(bad_id, 1, {}), std::invalid_argument);
  CHECK_THROWS_AS(net.start(twice, 1, {}), std::invalid_argument);
  CHECK_THROWS_AS(net.start(ok, -1, {}), std::invalid_argument);
  const auto zero = make_links({0});
  CHECK_THROWS_AS(Network(eng, zero), std::invalid_argument);
}

TEST_CASE("A ring pass over the network keeps lock-step", "[sim][network]") {
  // Every device of a 4x4 torus ring sends 8 MiB to its successor, R rounds; a round starts
  // when the device's send has arrived and its predecessor's has too. The ring's hops are
  // single, distinct links, so every round lasts exactly latency + bytes / bandwidth.
  const std::array<std::int64_t, 2> dims{4, 4};
  const LinkParams ici{45e9, 2e-6};
  const auto topo = Topology::torus(dims, ici);
  const ringsim::sim::RingEmbedding ring(topo, 1, 16);
  Engine eng(ringsim::sim::kFemtosecondsPerSecond);
  Network net(eng, topo);
  constexpr std::int64_t kBytes = 8 << 20;
  constexpr int kRounds = 16;
  std::vector<int> next_round(16, 0), sent(16, 0), received(16, 0);
  Handler<int> arrived;
  auto try_start = [&](int d) {
    const int r = next_round[static_cast<std::size_t>(d)];
    if (r >= kRounds || sent[static_cast<std::size_t>(d)] < r || received[static_cast<std::size_t>(d)] < r) return;
    ++next_round[static_cast<std::size_t>(d)];
    (void)net.start(ring.hop_route(0, d), kBytes, eng.bind(arrived, d));
  };
  arrived = eng.add_handler<int>([&](int d) {
    const int to = (d + 1) % 16;
    ++sent[static_cast<std::size_t>(d)];
    ++received[static_cast<std::size_t>(to)];
    try_start(d);
    try_start(to);
  });
  for (int d = 0; d < 16; ++d) try_start(d);
  eng.run();
  CHECK(net.delivered() == 16 * kRounds);
  const double round_s = ici.latency_s + static_cast<double>(kBytes) / ici.bandwidth_bytes_per_s;
  CHECK(eng.now_s() == Approx(kRounds * round_s).epsilon(1e-9));
}
