// Engine speed, as figures:
//  (a) raw events/s of ringsim::sim::Engine in a "hold" model (a fixed number of pending
//      events, each handler scheduling one more at a pseudo-random delay) and in lock-step
//      (every handler reschedules itself one period later), next to the same hold model on a
//      plain std::priority_queue;
//  (b) the bare ring pass of shared/baselines/des-ring-pass (N devices on a one-directional
//      ring, 8 MiB per hop at 300 GiB/s, 1 us latency, R = N rounds x 32 layers x 2 passes,
//      one event per transfer), lock-step and --jitter, on the engine and on a plain binary
//      heap loop written here after the baseline's README, both measured in the same run.
//      The ratio engine / heap of the two real times is the figure the design's speed bar uses;
//  (c) a whole training step through the step simulator (sim/step.hpp).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "models/catalog/resolve.hpp"
#include "sim/engine.hpp"
#include "sim/network.hpp"
#include "sim/step.hpp"
#include "sim/topology.hpp"

namespace {

using ringsim::sim::Engine;
using ringsim::sim::Handler;
using ringsim::sim::Tick;

// ---- (a) raw event rate -------------------------------------------------------------------

// 64-bit LCG (Knuth MMIX): cheap enough not to dominate an event.
struct Lcg {
  std::uint64_t s;
  std::uint64_t next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return s >> 33;
  }
};

constexpr std::int64_t kHoldEvents = std::int64_t{1} << 24;
constexpr std::uint64_t kMaxDelayTicks = 1'000'000;  // 1 us in picoseconds

void BM_EngineHold(benchmark::State& state) {
  const auto pending = state.range(0);
  for (auto _ : state) {
    Engine eng;
    Lcg rng{42};
    std::int64_t left = kHoldEvents - pending;
    Handler<std::uint32_t> h;
    h = eng.add_handler<std::uint32_t>([&](std::uint32_t id) {
      if (left-- > 0) eng.schedule_after(static_cast<Tick>(1 + rng.next() % kMaxDelayTicks), h, id);
    });
    for (std::int64_t i = 0; i < pending; ++i)
      eng.schedule_at(static_cast<Tick>(rng.next() % kMaxDelayTicks), h, static_cast<std::uint32_t>(i));
    benchmark::DoNotOptimize(eng.run());
    state.counters["events"] = static_cast<double>(eng.executed());
  }
  state.SetItemsProcessed(state.iterations() * kHoldEvents);
}
BENCHMARK(BM_EngineHold)->Arg(1024)->Arg(65536)->Unit(benchmark::kMillisecond);

void BM_EngineLockstep(benchmark::State& state) {
  const auto n = state.range(0);
  for (auto _ : state) {
    Engine eng;
    std::int64_t left = kHoldEvents - n;
    Handler<std::uint32_t> h;
    h = eng.add_handler<std::uint32_t>([&](std::uint32_t id) {
      if (left-- > 0) eng.schedule_after(28'000'000, h, id);
    });
    for (std::int64_t i = 0; i < n; ++i) eng.schedule_at(0, h, static_cast<std::uint32_t>(i));
    benchmark::DoNotOptimize(eng.run());
  }
  state.SetItemsProcessed(state.iterations() * kHoldEvents);
}
BENCHMARK(BM_EngineLockstep)->Arg(1024)->Unit(benchmark::kMillisecond);

// A plain binary-heap event loop: (time, seq) min-heap of 32-byte events with a function
// pointer and an argument, like the baseline's.
template <class Ctx>
class HeapLoop {
 public:
  using Fn = void (*)(Ctx&, std::uint64_t);
  void schedule(std::uint64_t t, Fn fn, std::uint64_t arg) { pq_.push(Ev{t, seq_++, fn, arg}); }
  std::uint64_t run(Ctx& ctx) {
    std::uint64_t executed = 0;
    while (!pq_.empty()) {
      const Ev e = pq_.top();
      pq_.pop();
      now_ = e.t;
      ++executed;
      e.fn(ctx, e.arg);
    }
    return executed;
  }
  [[nodiscard]] std::uint64_t now() const { return now_; }

 private:
  struct Ev {
    std::uint64_t t;
    std::uint64_t seq;
    Fn fn;
    std::uint64_t arg;
    bool operator>(const Ev& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> pq_;
  std::uint64_t now_ = 0;
  std::uint64_t seq_ = 0;
};

struct HeapHold {
  HeapLoop<HeapHold> loop;
  Lcg rng{42};
  std::int64_t left = 0;
  static void on_event(HeapHold& c, std::uint64_t id) {
    if (c.left-- > 0) c.loop.schedule(c.loop.now() + 1 + c.rng.next() % kMaxDelayTicks, &on_event, id);
  }
};

void BM_HeapHold(benchmark::State& state) {
  const auto pending = state.range(0);
  for (auto _ : state) {
    HeapHold c;
    c.left = kHoldEvents - pending;
    for (std::int64_t i = 0; i < pending; ++i)
      c.loop.schedule(c.rng.next() % kMaxDelayTicks, &HeapHold::on_event, static_cast<std::uint64_t>(i));
    benchmark::DoNotOptimize(c.loop.run(c));
  }
  state.SetItemsProcessed(state.iterations() * kHoldEvents);
}
BENCHMARK(BM_HeapHold)->Arg(1024)->Arg(65536)->Unit(benchmark::kMillisecond);

// ---- (b) the bare ring pass ---------------------------------------------------------------

struct RingPass {
  std::int64_t n = 1024;
  std::int64_t layers = 32;
  std::int64_t passes = 2;
  bool jitter = false;
  std::uint64_t block_bytes = 8ULL << 20;
  double bw_bytes_per_s = 300.0 * (1 << 30);
  double latency_s = 1e-6;

  [[nodiscard]] std::uint64_t rounds() const { return static_cast<std::uint64_t>(n * layers * passes); }
  [[nodiscard]] std::uint64_t transfers() const { return static_cast<std::uint64_t>(n) * rounds(); }
  // The baseline's jitter: sender i's block grows by ((i * 2654435761) mod 1000) KiB.
  [[nodiscard]] std::uint64_t bytes(std::int64_t i) const {
    return jitter ? block_bytes + ((static_cast<std::uint64_t>(i) * 2654435761ULL) % 1000ULL) * 1024ULL : block_bytes;
  }
  [[nodiscard]] double hop_s(std::int64_t i) const {
    return latency_s + static_cast<double>(bytes(i)) / bw_bytes_per_s;
  }
};

// Device state of the pass: device i starts round r once its round r-1 send has arrived and
// it has received its round r-1 block.
struct RingState {
  std::vector<std::uint64_t> next_round, sent_arrived, received;
  explicit RingState(std::int64_t n)
      : next_round(static_cast<std::size_t>(n), 0),
        sent_arrived(static_cast<std::size_t>(n), 0),
        received(static_cast<std::size_t>(n), 0) {}
  // Returns whether device i may start its next round now (and books it).
  bool begin(std::size_t i, std::uint64_t total_rounds) {
    const auto r = next_round[i];
    if (r >= total_rounds || sent_arrived[i] < r || received[i] < r) return false;
    next_round[i] = r + 1;
    return true;
  }
};

struct HeapRing {
  HeapLoop<HeapRing> loop;
  RingState st;
  std::vector<std::uint64_t> hop_ns;  // integer ns, truncated, as in the baseline
  std::uint64_t total_rounds;
  std::size_t n;
  explicit HeapRing(const RingPass& p)
      : st(p.n), total_rounds(p.rounds()), n(static_cast<std::size_t>(p.n)) {
    for (std::int64_t i = 0; i < p.n; ++i) hop_ns.push_back(static_cast<std::uint64_t>(p.hop_s(i) * 1e9));
  }
  void try_start(std::size_t i) {
    if (st.begin(i, total_rounds)) loop.schedule(loop.now() + hop_ns[i], &on_arrival, i);
  }
  static void on_arrival(HeapRing& c, std::uint64_t i64) {
    const auto i = static_cast<std::size_t>(i64);
    const auto dst = i + 1 == c.n ? 0 : i + 1;
    ++c.st.sent_arrived[i];
    ++c.st.received[dst];
    c.try_start(i);
    c.try_start(dst);
  }
};

// The lock-step pass ends at rounds x hop time; with jitter, at least that of the slowest sender.
double expected_end_s(const RingPass& p) {
  double slowest = 0;
  for (std::int64_t i = 0; i < p.n; ++i) slowest = std::max(slowest, p.hop_s(i));
  return static_cast<double>(p.rounds()) * slowest;
}

void report(benchmark::State& state, const RingPass& p, std::uint64_t events, double end_s) {
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["sim_end_s"] = end_s;
  if (events != p.transfers()) state.SkipWithError("wrong number of transfers");
  // Integer ns (heap) and ps (engine) ticks round differently: agree to 1e-3 relative.
  if (std::abs(end_s - expected_end_s(p)) > 1e-3 * expected_end_s(p)) state.SkipWithError("unexpected end time");
}

void BM_RingPassHeap(benchmark::State& state) {
  RingPass p;
  p.jitter = state.range(0) != 0;
  for (auto _ : state) {
    HeapRing c(p);
    for (std::size_t i = 0; i < c.n; ++i) c.try_start(i);
    const auto events = c.loop.run(c);
    report(state, p, events, static_cast<double>(c.loop.now()) * 1e-9);
  }
}

void BM_RingPassEngine(benchmark::State& state) {
  RingPass p;
  p.jitter = state.range(0) != 0;
  for (auto _ : state) {
    Engine eng;
    RingState st(p.n);
    std::vector<Tick> hop_ticks;
    for (std::int64_t i = 0; i < p.n; ++i) hop_ticks.push_back(eng.to_ticks(p.hop_s(i)));
    const auto n = static_cast<std::size_t>(p.n);
    const auto total_rounds = p.rounds();
    Handler<std::uint32_t> arrival;
    auto try_start = [&](std::size_t i) {
      if (st.begin(i, total_rounds)) eng.schedule_after(hop_ticks[i], arrival, static_cast<std::uint32_t>(i));
    };
    arrival = eng.add_handler<std::uint32_t>([&](std::uint32_t i32) {
      const std::size_t i = i32;
      const auto dst = i + 1 == n ? 0 : i + 1;
      ++st.sent_arrived[i];
      ++st.received[dst];
      try_start(i);
      try_start(dst);
    });
    for (std::size_t i = 0; i < n; ++i) try_start(i);
    const auto events = eng.run();
    report(state, p, static_cast<std::uint64_t>(events), eng.now_s());
  }
}

// One iteration each: a pass is 67.1 M transfers (seconds on the heap).
BENCHMARK(BM_RingPassHeap)->ArgName("jitter")->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_RingPassEngine)->ArgName("jitter")->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kSecond);

// The same pass with every transfer a flow of the network model (route, max-min sharing,
// latency, byte counters) on nodes:128x8 (NVLink inside a node, NIC between nodes): what a
// step builder pays per transfer when it does use the network. One layer, one direction:
// 1 M transfers. Link figures are round placeholders; only the cost per transfer matters here.
void BM_RingPassNetwork(benchmark::State& state) {
  const auto topo = ringsim::sim::Topology::nodes(128, 8, {450e9, 1e-6}, {50e9, 5e-6});
  const ringsim::sim::RingEmbedding ring(topo, 1, 1024);
  const std::int64_t n = 1024;
  const std::uint64_t total_rounds = static_cast<std::uint64_t>(n);
  const std::int64_t bytes = 8 << 20;
  std::int64_t transfers = 0;
  for (auto _ : state) {
    Engine eng;
    ringsim::sim::Network net(eng, topo);
    RingState st(n);
    Handler<std::uint32_t> arrival;
    auto try_start = [&](std::size_t i) {
      if (st.begin(i, total_rounds))
        (void)net.start(ring.hop_route(0, static_cast<std::int64_t>(i)), bytes,
                        eng.bind(arrival, static_cast<std::uint32_t>(i)));
    };
    arrival = eng.add_handler<std::uint32_t>([&](std::uint32_t i32) {
      const std::size_t i = i32;
      const auto dst = i + 1 == static_cast<std::size_t>(n) ? 0 : i + 1;
      ++st.sent_arrived[i];
      ++st.received[dst];
      try_start(i);
      try_start(dst);
    });
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) try_start(i);
    const auto events = eng.run();
    transfers = net.delivered();
    state.counters["events"] = static_cast<double>(events);
    state.counters["sim_end_s"] = eng.now_s();
    if (transfers != n * n) state.SkipWithError("wrong number of transfers");
  }
  state.counters["transfers_per_s"] =
      benchmark::Counter(static_cast<double>(transfers) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RingPassNetwork)->Iterations(1)->Unit(benchmark::kMillisecond);

// A whole training step through the step simulator: llama2-7b (32 layers), 1024 tokens per
// device, striped causal, device-round granularity; the design's yardstick is 1024 devices in
// < 1 s and <= 0.25x the bare heap ring pass above.
void BM_TrainingStep(benchmark::State& state) {
  ringsim::models::ScenarioSpec spec;
  spec.hardware = "h100-sxm";
  spec.model = "llama2-7b";
  spec.sp = state.range(0);
  spec.n_seq = spec.sp * 1024;
  spec.layout = ringsim::models::LayoutSpec::parse("striped");
  spec.tile = ringsim::models::TileShape{128, 128};
  const auto s = ringsim::models::resolve(spec, ringsim::models::Catalog());
  std::int64_t events = 0;
  double step_s = 0;
  std::int64_t passes = 0;
  for (auto _ : state) {
    const auto r = ringsim::sim::simulate_step(s, {});
    events = r.events;
    step_s = r.step_s;
    passes = r.passes_simulated;
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["sim_step_s"] = step_s;
  state.counters["passes_simulated"] = static_cast<double>(passes);
}
BENCHMARK(BM_TrainingStep)->Arg(64)->Arg(1024)->Iterations(1)->Unit(benchmark::kSecond);

// Tensor parallelism 2 beside a ring of 512 (1024 H100s, 128 nodes of 8, llama2-7b, 1M tokens,
// striped): the tensor-parallel all-reduces share each device's NVLink port with the ring's hops,
// so layers go apart only while no link carries two layers at once (checked); arg 1: the same
// step as one engine pass (LayerPasses::Whole), the result it must equal.
void BM_TrainingStepTp(benchmark::State& state) {
  ringsim::models::ScenarioSpec spec;
  spec.hardware = "h100-sxm";
  spec.model = "llama2-7b";
  spec.mp = 2;
  spec.sp = 512;
  spec.n_seq = 1024 * 1024;
  spec.layout = ringsim::models::LayoutSpec::parse("striped");
  const auto s = ringsim::models::resolve(spec, ringsim::models::Catalog());
  ringsim::sim::StepOptions o;
  if (state.range(0) == 1) o.layer_passes = ringsim::sim::LayerPasses::Whole;
  ringsim::sim::StepResult r;
  for (auto _ : state) r = ringsim::sim::simulate_step(s, o);
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["sim_step_s"] = r.step_s;
  state.counters["passes_simulated"] = static_cast<double>(r.passes_simulated);
  state.counters["passes_replayed"] = static_cast<double>(r.passes_reused);
}
BENCHMARK(BM_TrainingStepTp)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
