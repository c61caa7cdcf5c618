#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "models/io/error.hpp"
#include "sim/engine.hpp"
#include "sim/event_queue.hpp"

using ringsim::sim::Call;
using ringsim::sim::Engine;
using ringsim::sim::EventQueue;
using ringsim::sim::Handler;
using ringsim::sim::NoArg;
using ringsim::sim::QueuedEvent;
using ringsim::sim::Tick;

TEST_CASE("EventQueue pops in (time, insertion) order under interleaved pushes", "[sim][engine]") {
  // Reference: an ordered set of (time, seq). Pushes honour the monotone contract (at or after
  // the last popped time). Trials sweep the spread of times from 16 ticks to 2^39 so that ties,
  // pushes into the sorted front run, small buckets sorted whole and large buckets split by
  // level all occur; phases alternate between filling (3 pushes : 1 pop) and draining (1 : 3).
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 40; ++trial) {
    EventQueue q;
    std::set<std::pair<std::uint64_t, std::uint64_t>> pending;
    std::uint64_t seq = 0;
    std::uint64_t floor = 0;
    const auto max_bits = static_cast<std::uint64_t>(4 + trial % 36);
    for (int op = 0; op < 8000; ++op) {
      const bool filling = (op / 1000) % 2 == 0;
      const bool push = pending.empty() || rng() % 4 < (filling ? 3U : 1U);
      if (push) {
        const int n = 1 + static_cast<int>(rng() % 3);
        for (int i = 0; i < n; ++i) {
          const std::uint64_t scale = std::uint64_t{1} << (rng() % max_bits);
          const std::uint64_t t = floor + (rng() % 16 == 0 ? 0 : rng() % scale);
          q.push(t, seq);
          pending.emplace(t, seq++);
        }
      } else {
        QueuedEvent e{};
        REQUIRE(q.pop_until(UINT64_MAX, e));
        REQUIRE(e.time == pending.begin()->first);
        REQUIRE(e.payload == pending.begin()->second);
        floor = e.time;
        pending.erase(pending.begin());
      }
      REQUIRE(q.size() == pending.size());
    }
  }
}

TEST_CASE("EventQueue::pop_until leaves later events and the floor alone", "[sim][engine]") {
  EventQueue q;
  q.push(10, 1);
  q.push(30, 2);
  QueuedEvent e{};
  REQUIRE(q.pop_until(20, e));
  CHECK(e.payload == 1);
  CHECK_FALSE(q.pop_until(20, e));
  CHECK(q.floor() <= 20);
  q.push(20, 3);  // allowed: not before the floor
  REQUIRE(q.pop_until(25, e));
  CHECK(e.payload == 3);
  REQUIRE(q.pop_until(100, e));
  CHECK(e.payload == 2);
  CHECK(q.empty());
}

TEST_CASE("EventQueue inserts into its sorted front run after equal times", "[sim][engine]") {
  // A small bucket of distinct times becomes the sorted front run; pushes that fall inside
  // its range must be merged in, after the events of equal time already there.
  EventQueue q;
  q.push(110, 0);
  q.push(100, 1);
  q.push(105, 2);
  QueuedEvent e{};
  REQUIRE(q.pop_until(UINT64_MAX, e));
  CHECK(e.payload == 1);
  q.push(103, 3);
  q.push(105, 4);
  q.push(110, 5);
  q.push(111, 6);
  q.push(101, 7);
  std::vector<std::uint64_t> order;
  while (q.pop_until(UINT64_MAX, e)) order.push_back(e.payload);
  CHECK(order == std::vector<std::uint64_t>{7, 3, 2, 4, 0, 5, 6});
}

namespace {

// A random self-scheduling simulation; returns the trace of (time, id) as handled.
std::vector<std::pair<Tick, int>> random_run(std::uint64_t seed) {
  Engine eng;
  std::mt19937_64 rng(seed);
  std::vector<std::pair<Tick, int>> trace;
  int next_id = 0;
  Handler<int> h;
  h = eng.add_handler<int>([&](int id) {
    trace.emplace_back(eng.now(), id);
    if (next_id < 20000) {
      const int k = static_cast<int>(rng() % 3);
      for (int i = 0; i < k; ++i) eng.schedule_after(static_cast<Tick>(rng() % 4 == 0 ? 0 : rng() % 1000), h, next_id++);
    }
  });
  for (int i = 0; i < 50; ++i) eng.schedule_at(static_cast<Tick>(rng() % 100), h, next_id++);
  eng.run();
  return trace;
}

}  // namespace

TEST_CASE("Engine runs events by time, then by scheduling order", "[sim][engine]") {
  Engine eng;
  std::vector<int> order;
  const auto h = eng.add_handler<int>([&](int id) { order.push_back(id); });
  eng.schedule_at(5, h, 0);
  eng.schedule_at(3, h, 1);
  eng.schedule_at(5, h, 2);
  eng.schedule_at(3, h, 3);
  eng.schedule_at(0, h, 4);
  CHECK(eng.pending() == 5);
  CHECK(eng.run() == 5);
  CHECK(order == std::vector<int>{4, 1, 3, 0, 2});
  CHECK(eng.now() == 5);
  CHECK(eng.executed() == 5);
  CHECK(eng.empty());
}

TEST_CASE("Events scheduled for now run after those already queued for now", "[sim][engine]") {
  Engine eng;
  std::vector<int> order;
  Handler<int> h;
  h = eng.add_handler<int>([&](int id) {
    order.push_back(id);
    if (id == 0) eng.schedule_after(0, h, 10);
  });
  eng.schedule_at(7, h, 0);
  eng.schedule_at(7, h, 1);
  eng.schedule_at(8, h, 2);
  eng.run();
  CHECK(order == std::vector<int>{0, 1, 10, 2});
}

TEST_CASE("Engine is deterministic and time never goes backwards", "[sim][engine]") {
  const auto a = random_run(7);
  const auto b = random_run(7);
  REQUIRE(a.size() > 1000);
  CHECK(a == b);
  for (std::size_t i = 1; i < a.size(); ++i) REQUIRE(a[i - 1].first <= a[i].first);
  // Among equal times, ids were handed out in scheduling order, so they increase.
  for (std::size_t i = 1; i < a.size(); ++i)
    if (a[i - 1].first == a[i].first) REQUIRE(a[i - 1].second < a[i].second);
  CHECK(random_run(8) != a);
}

TEST_CASE("Scheduling in the past is refused", "[sim][engine]") {
  Engine eng;
  const auto h = eng.add_handler<int>([](int) {});
  eng.schedule_at(100, h, 0);
  eng.run();
  REQUIRE(eng.now() == 100);
  CHECK_THROWS_AS(eng.schedule_at(99, h, 0), std::logic_error);
  CHECK_THROWS_AS(eng.schedule_after(-1, h, 0), std::logic_error);
  CHECK_THROWS_AS(eng.schedule_after(Engine::kMaxTick, h, 0), ringsim::models::InputError);
  CHECK_NOTHROW(eng.schedule_at(100, h, 0));
  CHECK_THROWS_AS(eng.schedule_at(200, Call{}), std::invalid_argument);
}

TEST_CASE("run_until runs events up to t and moves the clock to t", "[sim][engine]") {
  Engine eng;
  std::vector<int> order;
  const auto h = eng.add_handler<int>([&](int id) { order.push_back(id); });
  eng.schedule_at(10, h, 1);
  eng.schedule_at(20, h, 2);
  eng.schedule_at(30, h, 3);
  CHECK(eng.run_until(20) == 2);
  CHECK(eng.now() == 20);
  CHECK(eng.run_until(25) == 0);
  CHECK(eng.now() == 25);
  eng.schedule_at(25, h, 4);  // at the new now: allowed and runs before 30
  eng.schedule_at(26, h, 5);
  CHECK(eng.run_until(5) == 0);  // the past: nothing, clock unchanged
  CHECK(eng.now() == 25);
  eng.run();
  CHECK(order == std::vector<int>{1, 2, 4, 5, 3});
  CHECK(eng.now() == 30);
}

TEST_CASE("stop() ends run() after the current event, step() runs one", "[sim][engine]") {
  Engine eng;
  int count = 0;
  const auto h = eng.add_handler<int>([&](int id) {
    ++count;
    if (id == 1) eng.stop();
  });
  for (int i = 0; i < 4; ++i) eng.schedule_at(i, h, i);
  CHECK(eng.run() == 2);
  CHECK(eng.now() == 1);
  CHECK(eng.step());
  CHECK(count == 3);
  CHECK(eng.run() == 1);
  CHECK_FALSE(eng.step());
}

namespace {
enum class Kind : std::uint8_t { A = 3, B = 200 };
struct Packed {
  std::uint16_t a, b, c;
};
}  // namespace

TEST_CASE("Handler arguments round-trip through the 48-bit payload", "[sim][engine]") {
  Engine eng;
  std::vector<std::int64_t> ints;
  std::vector<Kind> kinds;
  std::vector<std::tuple<int, int, int>> packs;
  bool flag = false;
  int noargs = 0;
  const auto hi = eng.add_handler<std::int64_t>([&](std::int64_t v) { ints.push_back(v); });
  const auto hk = eng.add_handler<Kind>([&](Kind k) { kinds.push_back(k); });
  const auto hp = eng.add_handler<Packed>([&](Packed p) { packs.emplace_back(p.a, p.b, p.c); });
  const auto hb = eng.add_handler<bool>([&](bool b) { flag = b; });
  const auto hn = eng.add_handler<NoArg>([&](NoArg) { ++noargs; });
  const std::int64_t big = (std::int64_t{1} << 47) - 1;
  for (const std::int64_t v : {std::int64_t{0}, std::int64_t{-1}, big, -big - 1, std::int64_t{123456789}})
    eng.schedule_at(1, hi, v);
  eng.schedule_at(2, hk, Kind::B);
  eng.schedule_at(2, hk, Kind::A);
  eng.schedule_at(3, hp, Packed{65535, 0, 4242});
  eng.schedule_at(4, hb, true);
  eng.schedule_at(4, hn, NoArg{});
  eng.run();
  CHECK(ints == std::vector<std::int64_t>{0, -1, big, -big - 1, 123456789});
  CHECK(kinds == std::vector<Kind>{Kind::B, Kind::A});
  CHECK(packs == std::vector<std::tuple<int, int, int>>{{65535, 0, 4242}});
  CHECK(flag);
  CHECK(noargs == 1);
  CHECK_THROWS_AS(eng.schedule_at(5, hi, big + 1), std::out_of_range);
  CHECK_THROWS_AS(eng.bind(eng.add_handler<std::uint64_t>([](std::uint64_t) {}), std::uint64_t{1} << 48),
                  std::out_of_range);
}

TEST_CASE("Calls can be stored and invoked directly", "[sim][engine]") {
  Engine eng;
  int got = 0;
  const auto h = eng.add_handler<int>([&](int v) { got = v; });
  const Call c = eng.bind(h, 42);
  CHECK(c.valid());
  CHECK_FALSE(Call{}.valid());
  eng.invoke(c);
  CHECK(got == 42);
  CHECK(eng.executed() == 0);
  Engine other;
  CHECK_THROWS_AS(other.bind(h, 1), std::invalid_argument);
}

TEST_CASE("Seconds convert to ticks by rounding, with range checks", "[sim][engine]") {
  const Engine ps;
  CHECK(ps.to_ticks(1e-6) == 1'000'000);
  CHECK(ps.to_ticks(1.4e-12) == 1);
  CHECK(ps.to_ticks(0.0) == 0);
  CHECK(ps.to_seconds(2'000'000'000'000) == 2.0);
  CHECK_THROWS_AS(ps.to_ticks(-1e-12), ringsim::models::InputError);
  CHECK_THROWS_AS(ps.to_ticks(1e10), ringsim::models::InputError);  // 116 days
  CHECK_THROWS_AS(ps.to_ticks(std::numeric_limits<double>::quiet_NaN()), ringsim::models::InputError);
  const Engine fs(ringsim::sim::kFemtosecondsPerSecond);
  CHECK(fs.to_ticks(1e-6) == 1'000'000'000);
  CHECK_THROWS_AS(Engine(0.0), std::invalid_argument);
}

TEST_CASE("A lock-step batch keeps its order across rounds", "[sim][engine]") {
  // The ring pattern: N handlers each rescheduling themselves one period later. Every round
  // must see the devices in the same order as the first, since they were rescheduled in it.
  Engine eng;
  constexpr int kN = 257;
  std::vector<int> seen;
  Handler<int> h;
  h = eng.add_handler<int>([&](int d) {
    seen.push_back(d);
    if (eng.now() < 50 * 1000) eng.schedule_after(1000, h, d);
  });
  for (int d = 0; d < kN; ++d) eng.schedule_at(0, h, (d * 31) % kN);
  eng.run();
  REQUIRE(seen.size() == static_cast<std::size_t>(kN * 51));
  for (std::size_t i = kN; i < seen.size(); ++i) REQUIRE(seen[i] == seen[i - kN]);
}
