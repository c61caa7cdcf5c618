// The pipeline simulator (sim/pipeline_sim.hpp) against the closed forms of
// models/pipeline/schedule.hpp in lock-step (the bubble, the step with and without transfer
// time, the activations a rank holds at its peak), against a brute-force longest path over the
// passes' dependencies for stages of any durations, and against the orders Megatron-LM's
// schedules.py documents.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "models/io/error.hpp"
#include "models/pipeline/schedule.hpp"
#include "models/pipeline/step.hpp"
#include "sim/pipeline_sim.hpp"

using namespace ringsim;
using models::PipelineKind;
using models::PipelinePass;
using models::PipelineSchedule;

namespace {

PipelineSchedule make(std::int64_t p, std::int64_t m, std::int64_t v = 1) {
  PipelineSchedule s;
  s.stages = p;
  s.micro_batches = m;
  s.virtual_stages = v;
  s.kind = v > 1 ? PipelineKind::Interleaved : PipelineKind::OneFOneB;
  return s;
}

models::PipelineDurations lockstep(const PipelineSchedule& s, double f, double b, double hop) {
  return models::PipelineDurations::lockstep(s, f, b, hop);
}

constexpr sim::PipelineOptions kExact{false, 1e15};  // femtoseconds: exact sums of these durations

// The step by brute force: a pass starts when its rank has finished the pass before it in its
// order and its input is there; iterate to a fixed point over the passes (no event queue).
double longest_path(const PipelineSchedule& s, const models::PipelineDurations& d) {
  const std::int64_t p = s.stages, chunks = s.chunks();
  std::map<std::tuple<bool, std::int64_t, std::int64_t>, double> end;  // (backward, model stage, mb) -> end
  std::vector<std::vector<PipelinePass>> order;
  for (std::int64_t r = 0; r < p; ++r) order.push_back(s.order(r));
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<double> free_at(static_cast<std::size_t>(p), 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (std::int64_t r = 0; r < p; ++r) {
      auto& i = next[static_cast<std::size_t>(r)];
      while (i < order[static_cast<std::size_t>(r)].size()) {
        const auto& x = order[static_cast<std::size_t>(r)][i];
        const std::int64_t j = x.chunk * p + r;
        double ready = free_at[static_cast<std::size_t>(r)];
        const bool needs = x.backward ? j < chunks - 1 : j > 0;
        if (needs) {
          const auto it = end.find({x.backward, x.backward ? j + 1 : j - 1, x.micro_batch});
          if (it == end.end()) break;
          ready = std::max(ready, it->second + d.hop_s);
        }
        const double t = ready + (x.backward ? d.bwd_s[static_cast<std::size_t>(j)] : d.fwd_s[static_cast<std::size_t>(j)]);
        end[{x.backward, j, x.micro_batch}] = t;
        free_at[static_cast<std::size_t>(r)] = t;
        ++i;
        progress = true;
      }
    }
  }
  double step = 0;
  for (const auto& [k, t] : end) step = std::max(step, t);
  return step;
}

}  // namespace

TEST_CASE("pipeline orders: every rank runs each micro-batch's forward and backward through each of its chunks once, forward first") {
  for (const auto& s : {make(4, 8), make(4, 2), make(2, 6), make(4, 8, 2), make(3, 6, 3), make(1, 5)}) {
    for (std::int64_t r = 0; r < s.stages; ++r) {
      const auto order = s.order(r);
      REQUIRE(static_cast<std::int64_t>(order.size()) == 2 * s.micro_batches * s.virtual_stages);
      std::map<std::tuple<bool, std::int64_t, std::int64_t>, std::size_t> at;
      for (std::size_t i = 0; i < order.size(); ++i) {
        CHECK(at.emplace(std::make_tuple(order[i].backward, order[i].chunk, order[i].micro_batch), i).second);
        CHECK(order[i].chunk < s.virtual_stages);
        CHECK(order[i].micro_batch < s.micro_batches);
      }
      for (const auto& [k, i] : at)
        if (std::get<0>(k)) CHECK(at.at({false, std::get<1>(k), std::get<2>(k)}) < i);
    }
  }
}

TEST_CASE("pipeline orders: 1F1B and interleaved as Megatron-LM's schedules.py lists them") {
  // 1F1B, 4 stages, rank 1: 2 warm-up forwards, then forward/backward pairs, then backwards.
  const auto o = make(4, 4).order(1);
  const std::vector<PipelinePass> want{{false, 0, 0}, {false, 1, 0}, {false, 2, 0}, {true, 0, 0},
                                       {false, 3, 0}, {true, 1, 0},  {true, 2, 0},  {true, 3, 0}};
  CHECK(o == want);
  // Interleaved, 2 stages x 2 chunks, 4 micro-batches: schedules.py's table for groups of pp = 2
  // micro-batches: virtual ids 0..7 -> micro-batch 0 1 0 1 2 3 2 3, chunk 0 0 1 1 0 0 1 1.
  const auto s = make(2, 4, 2);
  CHECK(s.warmup(0) == 2 * (2 - 0 - 1) + (2 - 1) * 2);
  CHECK(s.warmup(1) == 2);
  const auto i1 = s.order(1);
  const std::vector<PipelinePass> first{{false, 0, 0}, {false, 1, 0}, {false, 0, 1}, {true, 0, 1}, {false, 1, 1}, {true, 1, 1}};
  CHECK(std::vector<PipelinePass>(i1.begin(), i1.begin() + 6) == first);
}

TEST_CASE("pipeline simulation: in lock-step the step and the bubble are the closed forms, 1F1B and interleaved") {
  for (std::int64_t p : {2, 3, 4, 8}) {
    for (std::int64_t m : {1, 2, 3, 8, 16}) {
      const auto s = make(p, m);
      const auto run = sim::simulate_pipeline(s, lockstep(s, 1.0, 2.0, 0), kExact);
      INFO("1F1B p=" << p << " m=" << m);
      CHECK(run.step_s == Approx(s.lockstep_step_s(3.0)).epsilon(1e-12));
      for (std::int64_t r = 0; r < p; ++r) CHECK(run.bubble_fraction(r) == Approx(s.bubble_fraction()).epsilon(1e-12));
    }
    for (std::int64_t v : {2, 3, 4}) {
      for (std::int64_t k : {1, 2, 4}) {
        const auto s = make(p, k * p, v);
        const auto run = sim::simulate_pipeline(s, lockstep(s, 0.5 / static_cast<double>(v), 1.0 / static_cast<double>(v), 0), kExact);
        INFO("interleaved p=" << p << " m=" << k * p << " v=" << v);
        CHECK(run.step_s == Approx(s.lockstep_step_s(1.5 / static_cast<double>(v))).epsilon(1e-12));
        CHECK(run.bubble_fraction(0) == Approx(s.bubble_fraction()).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("pipeline simulation: with transfer time the hops of its cycles, counted alike by the simulator and the model") {
  // 1F1B over two stages: a micro-batch's forward and backward cross the link once each, and in
  // the steady state the first stage's backward of micro-batch i - 1 must reach it before its
  // forward of i + 1 can go to the second, which has run i meanwhile: two micro-batches per two
  // hops.
  const auto two = make(2, 8);
  CHECK(models::pipeline_step(two, lockstep(two, 1.0, 2.0, 0.5)).step_s == Approx(9 * 3.0 + 8 * 0.5).epsilon(1e-12));
  for (const auto& s : {make(2, 8), make(4, 3), make(4, 8), make(6, 8), make(4, 8, 2), make(3, 9, 3)}) {
    for (const double hop : {0.25, 3.0}) {
      const auto d = lockstep(s, 1.0, 2.0, hop);
      const auto run = sim::simulate_pipeline(s, d, kExact);
      const auto model = models::pipeline_step(s, d);
      INFO("p=" << s.stages << " m=" << s.micro_batches << " v=" << s.virtual_stages << " hop " << hop);
      CHECK(run.step_s == Approx(model.step_s).epsilon(1e-12));
      CHECK(run.step_s == Approx(longest_path(s, d)).epsilon(1e-12));
      // Hops only lengthen it, and at least by the first micro-batch's way there and back.
      CHECK(run.step_s >= s.lockstep_step_s(3.0 / static_cast<double>(s.virtual_stages)) + static_cast<double>(2 * (s.stages - 1)) * hop - 1e-9);
    }
  }
}

TEST_CASE("pipeline simulation: peak activations per rank are the closed form (Megatron's warm-up plus one)") {
  for (const auto& s : {make(4, 8), make(4, 2), make(8, 16), make(4, 8, 2), make(4, 4, 3), make(2, 8, 4)}) {
    const auto run = sim::simulate_pipeline(s, lockstep(s, 1.0, 2.0, 0.1), kExact);
    for (std::int64_t r = 0; r < s.stages; ++r) {
      INFO("p=" << s.stages << " m=" << s.micro_batches << " v=" << s.virtual_stages << " rank " << r);
      CHECK(run.peak_in_flight[static_cast<std::size_t>(r)] == s.peak_in_flight(r));
    }
  }
  // The first rank of 1F1B holds p micro-batches of its L / p layers: every layer's activations once.
  CHECK(make(4, 8).peak_in_flight(0) == 4);
  // Interleaved holds (1 + (p - 1) / (p v)) times that (Narayanan et al., section 2.2.2): 4 x 2
  // chunks of L / 8 layers, 2 (4 - 1) + 4 + 1 = 11 of them = 1.375 L.
  CHECK(make(4, 8, 2).peak_in_flight(0) == 11);
}

TEST_CASE("pipeline simulation: stages of any durations and transfers give the brute-force longest path") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.1, 3.0);
  for (const auto& s : {make(4, 8), make(3, 5), make(4, 8, 2), make(2, 6, 3), make(5, 10, 2)}) {
    for (int trial = 0; trial < 5; ++trial) {
      models::PipelineDurations d;
      for (std::int64_t j = 0; j < s.chunks(); ++j) d.fwd_s.push_back(u(rng)), d.bwd_s.push_back(u(rng));
      d.hop_s = trial == 0 ? 0.0 : u(rng) / 4;
      const auto run = sim::simulate_pipeline(s, d, kExact);
      INFO("p=" << s.stages << " m=" << s.micro_batches << " v=" << s.virtual_stages << " trial " << trial);
      CHECK(run.step_s == Approx(longest_path(s, d)).epsilon(1e-9));
      CHECK(models::pipeline_step(s, d).step_s == Approx(run.step_s).epsilon(1e-9));
    }
  }
}

TEST_CASE("pipeline step: a step asked again, after others, is the one computed for its own durations") {
  // pipeline_step keeps each thread's steps per (schedule, durations): a repeat must give the
  // same step, and durations one bit apart or another schedule must not be served the kept one.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.1, 3.0);
  const auto s = make(4, 8, 2);
  models::PipelineDurations a;
  for (std::int64_t j = 0; j < s.chunks(); ++j) a.fwd_s.push_back(u(rng)), a.bwd_s.push_back(u(rng));
  a.hop_s = 0.05;
  auto b = a;
  b.bwd_s.back() = std::nextafter(b.bwd_s.back(), 10.0) + 0.5;  // the last stage's backward, longer
  const auto first = models::pipeline_step(s, a);
  const auto other = models::pipeline_step(s, b);
  CHECK(other.step_s == Approx(longest_path(s, b)).epsilon(1e-12));
  CHECK(other.step_s > first.step_s);
  const auto again = models::pipeline_step(s, a);
  CHECK(again.step_s == first.step_s);
  CHECK(again.busy_s == first.busy_s);
  CHECK(first.step_s == Approx(longest_path(s, a)).epsilon(1e-12));
  // The same durations under another micro-batch count are another step.
  const auto more = make(4, 16, 2);
  CHECK(models::pipeline_step(more, a).step_s == Approx(longest_path(more, a)).epsilon(1e-12));
}

TEST_CASE("pipeline schedules refuse what Megatron refuses, naming the field") {
  const auto field = [](auto f) {
    try {
      f();
    } catch (const models::InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  CHECK(field([] { make(4, 8).check(30); }) == "pp");                // 30 layers over 4 stages
  CHECK(field([] { make(4, 8, 2).check(32); }) == "none");
  CHECK(field([] { make(4, 8, 3).check(32); }) == "pp");             // 32 over 12 chunks
  CHECK(field([] { make(4, 6, 2).check(32); }) == "micro-batches");  // 6 not a multiple of 4
  CHECK(field([] { make(0, 1).check(32); }) == "pp");
  CHECK(field([] { make(2, 0).check(32); }) == "micro-batches");
  // Sizes are checked before anything is listed: 2 x stages x chunks x micro-batches passes.
  CHECK(field([] { make(65536, std::int64_t{1} << 40).check(0); }) == "micro-batches");
  CHECK(field([] { make(64, 1 << 15, 2).check(0); }) == "micro-batches");
  CHECK(field([] { make(64, 1 << 10, 2).check(0); }) == "none");
  CHECK(field([] { (void)PipelineSchedule::parse("interleaved:1", 2, 2); }) == "pp-schedule");
  // Nothing to interleave without a pipeline (Megatron asserts pp > 1).
  CHECK(field([] { make(1, 4, 2).check(32); }) == "pp-schedule");
  CHECK(field([] { make(2, 4, 2).check(32); }) == "none");
  CHECK(field([] { (void)PipelineSchedule::parse("gpipe", 2, 2); }) == "pp-schedule");
  CHECK(PipelineSchedule::parse("interleaved:3", 4, 8).virtual_stages == 3);
  CHECK(PipelineSchedule::parse("1f1b", 4, 8).spec() == "1f1b");
}
