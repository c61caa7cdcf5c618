// A step in parts (models/analytic/breakdown.hpp) on random scenarios: the attention columns are
// exactly their parts (mean kernels, the busiest device's wait, the loop's per-round costs, the
// exposed communication), so the cost model's parts add up to its step with nothing left for the
// simulator's difference; a trained step (micro-batches, pipelines, ZeRO, data parallelism) adds up
// to its step; no part but the simulator's difference is negative; the why-line names the largest.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "models/analytic/analytic.hpp"
#include "models/analytic/breakdown.hpp"
#include "models/analytic/training_step.hpp"
#include "models/catalog/catalog.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"

using namespace ringsim::models;

namespace {

struct Drawn {
  ScenarioSpec spec;
  TrainingOptions options;
  std::string text;
};

// One random scenario a user could ask for: a GPU, a model, a strategy and layout that split the
// mesh, a length the ring divides, data and pipeline parallelism, ZeRO, micro-batches.
Drawn draw(std::mt19937_64& rng) {
  const auto pick = [&](const auto& v) { return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)]; };
  const std::vector<std::string> hardware = {"h100-sxm", "a100-80gb", "h800", "a800", "rtx-4090", "l20"};
  const std::vector<std::string> models = {"llama2-7b", "llama3-8b", "ringattn-1b"};
  const std::vector<std::string> strategies = {"ring", "ulysses", "allgather", "usp:2x2", "double-ring:2"};
  const std::vector<std::string> layouts = {"contiguous", "striped", "zigzag"};
  const std::vector<std::int64_t> sps = {2, 4, 8, 16};
  Drawn d;
  auto& s = d.spec;
  s.hardware = pick(hardware);
  s.model = pick(models);
  s.mp = pick(std::vector<std::int64_t>{1, 1, 2});
  s.sp = pick(sps);
  s.cp = Strategy::parse(pick(strategies));
  s.layout = LayoutSpec::parse(pick(layouts));
  s.n_seq = s.sp * 2 * std::int64_t{1024} * pick(std::vector<std::int64_t>{1, 2, 4, 8});
  auto& o = d.options;
  o.dp = pick(std::vector<std::int64_t>{1, 2, 4});
  o.zero = pick(std::vector<Sharding>{Sharding::None, Sharding::Zero1, Sharding::Zero3});
  o.pipeline.stages = pick(std::vector<std::int64_t>{1, 1, 2, 4});
  o.pipeline.micro_batches = pick(std::vector<std::int64_t>{1, 4, 8});
  if (o.pipeline.stages > 1 && pick(std::vector<int>{0, 1}) == 1) {
    o.pipeline.kind = PipelineKind::Interleaved;
    o.pipeline.virtual_stages = 2;
  }
  d.text = s.hardware + " " + s.model + " " + s.cp.text() + " " + s.layout.text() + " mp " + std::to_string(s.mp) +
           " sp " + std::to_string(s.sp) + " n_seq " + std::to_string(s.n_seq) + " dp " + std::to_string(o.dp) + " pp " +
           std::to_string(o.pipeline.stages) + " (" + o.pipeline.spec() + ") micro " +
           std::to_string(o.pipeline.micro_batches);
  return d;
}

// llama2-7b's zigzag ring over 8 H100 on ring-flash-attention.
ResolvedScenario ring_on_h100() {
  const Catalog catalog;
  ScenarioSpec spec;
  spec.hardware = "h100-sxm";
  spec.model = "llama2-7b";
  spec.sp = 8;
  spec.n_seq = 65536;
  spec.cp = Strategy::parse("ring");
  spec.layout = LayoutSpec::parse("zigzag");
  spec.impl = "ring-flash-attn";
  return resolve(spec, catalog);
}

}  // namespace

TEST_CASE("step parts: on random scenarios the parts add up to the step and the attention is exactly its parts", "[breakdown]") {
  const Catalog catalog;
  std::mt19937_64 rng(20261207);
  int checked = 0, refused = 0, pipelined = 0, with_wait = 0, with_collectives = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    auto d = draw(rng);
    INFO(d.text);
    ResolvedScenario s;
    Prediction p;
    TrainingStep t;
    try {
      const auto hw = catalog.hardware(d.spec.hardware);
      d.spec.impl = catalog.choose_implementation(d.spec, hw, {d.spec.layout});
      s = resolve(d.spec, catalog);
      p = predict(s);
      t = training_step(s, p, d.options);
    } catch (const InputError&) {
      ++refused;  // a strategy the implementation lacks, layers a pipeline cannot split: not a step
      continue;
    }
    ++checked;
    // One pass: the attention columns are their parts, so nothing is left to the simulator's part.
    const auto pass = pass_breakdown(p);
    const double attention_parts = pass[StepPart::AttentionFwd] + pass[StepPart::AttentionBwd] +
                                   pass[StepPart::BusiestWait] + pass[StepPart::AttentionOverhead] + pass.exposed_s();
    CHECK(attention_parts == Approx(p.attention_fwd_s + p.attention_bwd_s).epsilon(1e-9));
    CHECK(pass[StepPart::SimulatedDifference] == 0);
    CHECK(pass.total() == Approx(p.step_s).epsilon(1e-12));
    // The forward's parts are the forward column's.
    CHECK(pass[StepPart::AttentionFwd] <= p.attention_fwd_s * (1 + 1e-12));
    // The trained step.
    const auto& b = t.parts;
    CHECK(b.total() == Approx(t.step_s).epsilon(1e-9));
    CHECK(b[StepPart::GradientSync] == Approx(t.sync.exposed_s).epsilon(1e-12));
    CHECK(b[StepPart::SimulatedDifference] == Approx(0).margin(1e-12 * t.step_s));
    for (std::size_t i = 0; i < kStepParts; ++i) {
      INFO(part_info(step_part(i)).key);
      CHECK(b.s[i] >= -1e-9 * t.step_s);
      CHECK(std::isfinite(b.s[i]));
    }
    if (!d.options.pipeline.pipelined()) {
      CHECK(b[StepPart::PipelineIdle] == 0);
      // Micro-batches one after another: every part of the pass, that many times.
      const double m = static_cast<double>(d.options.pipeline.micro_batches);
      CHECK(b[StepPart::AttentionBwd] == Approx(m * pass[StepPart::AttentionBwd]).epsilon(1e-12));
    } else {
      ++pipelined;
      // The busiest rank idles least: its idle time is the step less its passes.
      const double busiest = *std::max_element(t.passes.busy_s.begin(), t.passes.busy_s.end());
      CHECK(b[StepPart::PipelineIdle] == Approx(t.passes.step_s - busiest).epsilon(1e-9).margin(1e-15));
      CHECK(b[StepPart::PipelineIdle] <= t.passes.bubble_fraction() * t.passes.step_s * (1 + 1e-9) + 1e-15);
    }
    // The why-line names the largest part that is not compute when it is over 5 % of the step.
    const auto cause = b.largest_cause();
    const std::string line = why(p, b);
    if (b[cause] > 0.06 * b.total()) CHECK(line.find("compute-bound") == std::string::npos);
    if (b[cause] < 0.04 * b.total()) CHECK(line.starts_with("compute-bound"));
    with_wait += pass[StepPart::BusiestWait] > 0;
    with_collectives += pass[StepPart::ExposedAllToAll] + pass[StepPart::ExposedAllGather] > 0;
  }
  // The draw reaches what the parts tell apart (otherwise the checks above prove little).
  CHECK(checked > 800);
  CHECK(pipelined > 150);
  CHECK(with_wait > 100);
  CHECK(with_collectives > 100);
  INFO("refused " << refused);
}

TEST_CASE("step parts: the simulator's step beyond the parts is its own part, and a part of its own in the sum", "[breakdown]") {
  const auto s = ring_on_h100();
  auto p = predict(s);
  const double columns = p.columns_s();
  p.step_s = 1.25 * columns;  // a simulated step a quarter longer than lock-step
  const auto pass = pass_breakdown(p, p.step_s);
  CHECK(pass[StepPart::SimulatedDifference] == Approx(0.25 * columns).epsilon(1e-12));
  TrainingOptions o;
  o.pipeline.stages = 2;
  o.pipeline.micro_batches = 4;
  const auto t = training_step(s, p, o);
  CHECK(t.parts.total() == Approx(t.step_s).epsilon(1e-9));
  // Spread over the passes in proportion: a fifth of the busiest rank's passes.
  const double busiest = *std::max_element(t.passes.busy_s.begin(), t.passes.busy_s.end());
  CHECK(t.parts[StepPart::SimulatedDifference] == Approx(0.2 * busiest).epsilon(1e-9));
}

TEST_CASE("step parts: a ring's fixed cost per round is its own part, rounds x layers x both passes", "[breakdown]") {
  auto s = ring_on_h100();
  const auto before = pass_breakdown(predict(s));
  s.profile.round_overhead_s = 1e-4;
  s.rebuild_cost();
  const auto p = predict(s);
  const auto after = pass_breakdown(p);
  CHECK(after[StepPart::AttentionOverhead] - before[StepPart::AttentionOverhead] ==
        Approx(2 * 8 * static_cast<double>(s.model.layers) * 1e-4).epsilon(1e-9));
  CHECK(after[StepPart::SimulatedDifference] == 0);
  CHECK(after.total() == Approx(p.step_s).epsilon(1e-12));
}

TEST_CASE("step parts: the why of a wait says imbalance, or balanced work in calls of unequal speed", "[breakdown]") {
  Prediction p;
  p.attention_mean_fwd_s = 1;
  p.attention_mean_s = 3;
  p.attention_busiest_s = 4;  // a second of every device's step waits for the slowest
  p.attention_fwd_s = 1.3;
  p.attention_bwd_s = 2.7;
  p.other_compute_s = 1;
  p.imbalance = 1.6;
  const auto b = pass_breakdown(p);
  REQUIRE(b.largest_cause() == StepPart::BusiestWait);
  CHECK(why(p, b) == "imbalance 1.60: each round waits for its busiest device (20% of the step waiting)");
  // Equal work per device, yet a wait: the calls' shapes, not the work, differ.
  p.imbalance = 1.0;
  const auto line = why(p, b);
  CHECK(line.find("the work is balanced (imbalance 1.00)") != std::string::npos);
  CHECK(line.find("20% of the step waiting") != std::string::npos);
}
