// The step as trained (models/analytic/training_step.hpp): micro-batches one after another or
// through a pipeline, the gradient synchronisation once per step, each pipeline rank's memory
// (models/pipeline/stage_split.hpp), and FP8 matmuls at the FP8 peak. Oracles: the prediction of
// one micro-batch repeated, the work conserved over the ranks, the pipeline's closed forms, the
// model's own parameter count.
#include <catch2/catch.hpp>

#include "models/analytic/analytic.hpp"
#include "models/analytic/training_step.hpp"
#include "models/io/error.hpp"
#include "models/memory/memory.hpp"
#include "models/pipeline/stage_split.hpp"
#include "models/workload/transformer.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim::models;
using ringsim::test::resolve_scenario;

namespace {

TrainingOptions options(std::int64_t dp, std::int64_t stages, std::int64_t micro, Sharding zero = Sharding::Zero1) {
  TrainingOptions o;
  o.dp = dp;
  o.zero = zero;
  o.recompute = Recompute::None;
  o.pipeline.stages = stages;
  o.pipeline.micro_batches = micro;
  return o;
}

double busy_sum(const TrainingStep& t) {
  double s = 0;
  for (const double b : t.passes.busy_s) s += b;
  return s;
}

}  // namespace

TEST_CASE("training step: micro-batches without a pipeline repeat the micro-batch and synchronise once") {
  const auto s = resolve_scenario("h100-sxm", "llama2-7b", 2, 2, 32768, "zigzag");
  const auto p = predict(s);
  for (const auto zero : {Sharding::Zero1, Sharding::Zero3}) {
    const auto one = training_step(s, p, options(8, 1, 1, zero));
    const auto many = training_step(s, p, options(8, 1, 16, zero));
    CHECK(one.passes.step_s == p.step_s);
    CHECK(many.passes.step_s == Approx(16 * p.step_s).epsilon(1e-12));
    // ZeRO-1 reduces once per step; ZeRO-3 gathers the weights for every micro-batch.
    CHECK(many.sync.reduce_s == Approx(one.sync.reduce_s).epsilon(1e-12));
    CHECK(many.sync.gather_s == Approx(16 * one.sync.gather_s).epsilon(1e-12));
    CHECK(many.step_s == Approx(many.passes.step_s + many.sync.exposed_s).epsilon(1e-12));
    // 16 times the tokens in (at most) 16 times the time, plus no more exposed synchronisation.
    CHECK(many.tokens_per_s >= one.tokens_per_s * (1 - 1e-12));
    CHECK(many.memory.total_bytes == Approx(one.memory.total_bytes).epsilon(1e-12));
  }
}

TEST_CASE("training step: a pipeline conserves the work, and one micro-batch crosses every stage in turn") {
  const auto s = resolve_scenario("h100-sxm", "llama2-7b", 1, 1, 8192, "zigzag");
  const auto p = predict(s);
  for (const std::int64_t stages : {2, 4, 8}) {
    for (const std::int64_t micro : {1, 8, 32}) {
      const auto t = training_step(s, p, options(4, stages, micro));
      INFO("pp " << stages << ", " << micro << " micro-batches");
      // Every rank's passes together are the micro-batches' whole-model passes.
      CHECK(busy_sum(t) == Approx(static_cast<double>(micro) * p.step_s).epsilon(1e-9));
      CHECK(t.hop_s > 0);
      // No faster than the busiest rank (the last: its layers and the LM head) runs its passes.
      const double last = static_cast<double>(micro) *
                          ((p.step_s - p.head_fwd_s - p.head_bwd_s) / static_cast<double>(stages) + p.head_fwd_s + p.head_bwd_s);
      CHECK(t.passes.step_s >= last * (1 - 1e-12));
      // One micro-batch goes through every stage and back: its whole-model passes plus a hop at
      // each of the 2 (p - 1) stage boundaries it crosses.
      if (micro == 1) CHECK(t.passes.step_s == Approx(p.step_s + 2.0 * static_cast<double>(stages - 1) * t.hop_s).epsilon(1e-12));
      // Each device runs 1 / pp of the layers: tokens/s per device as without the pipeline
      // (up to the bubble), the step's tokens over the step.
      CHECK(t.tokens_per_s == Approx(4.0 * static_cast<double>(micro) * 8192 / t.step_s).epsilon(1e-12));
    }
  }
  // The bubble falls as micro-batches are added.
  CHECK(training_step(s, p, options(4, 4, 64)).passes.bubble_fraction() <
        training_step(s, p, options(4, 4, 8)).passes.bubble_fraction());
}

TEST_CASE("training step: a pipeline the model cannot be split over is refused, naming the field") {
  const auto s = resolve_scenario("h100-sxm", "llama2-7b", 1, 1, 8192, "zigzag");
  const auto p = predict(s);
  const auto field = [&](const TrainingOptions& o) {
    try {
      (void)training_step(s, p, o);
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  CHECK(field(options(1, 3, 4)) == "pp");  // 32 layers over 3 stages
  auto o = options(1, 4, 6);
  o.pipeline.kind = PipelineKind::Interleaved;
  o.pipeline.virtual_stages = 2;
  CHECK(field(o) == "micro-batches");  // not a multiple of 4
  o.pipeline.micro_batches = 8;
  CHECK(field(o) == "none");
}

TEST_CASE("pipeline memory: the stages' parameters add up to the model's, each rank's activations as its schedule keeps them") {
  for (const char* name : {"llama2-7b", "llama3-8b", "llama2-70b"}) {
    const auto s = resolve_scenario("h100-sxm", name, 1, 1, 8192, "zigzag");
    const auto& m = s.model;
    for (const std::int64_t stages : {2, 4, 8}) {
      PipelineSchedule pl;
      pl.stages = stages;
      double sum = 0;
      for (std::int64_t r = 0; r < stages; ++r) sum += stage_parameters(m, pl, r);
      // Tied embeddings keep a copy on the last stage.
      const double copies = m.tied_embeddings ? static_cast<double>(m.vocab * m.d_model) : 0.0;
      CHECK(sum == Approx(static_cast<double>(m.parameters()) + copies).epsilon(1e-12));
    }
  }
  const auto s = resolve_scenario("h100-sxm", "llama2-7b", 1, 1, 8192, "zigzag");
  MemoryOptions o;
  o.dp = 4;
  o.sharding = Sharding::Zero1;
  o.recompute = Recompute::None;
  const auto whole = estimate_memory(s, o);
  const double logits = 8192.0 * static_cast<double>(s.model.vocab) * 4;
  for (const std::int64_t micro : {2, 16}) {
    o.pipeline.stages = 2;
    o.pipeline.micro_batches = micro;
    const auto e = estimate_memory(s, o);
    // The first rank of 1F1B holds two micro-batches of half the layers: every layer once, as
    // without the pipeline, less the logits (the last rank's).
    REQUIRE(e.pipeline_rank == 0);
    CHECK(e.activations_bytes == Approx(whole.activations_bytes - logits).epsilon(1e-12));
    CHECK(e.optimizer_bytes < whole.optimizer_bytes);
  }
  // Interleaved over 4 stages x 2 chunks holds (1 + (p - 1) / (p v)) = 1.375 times that.
  o.pipeline.stages = 4;
  o.pipeline.micro_batches = 8;
  o.pipeline.kind = PipelineKind::Interleaved;
  o.pipeline.virtual_stages = 2;
  const auto e = estimate_memory(s, o);
  REQUIRE(e.pipeline_rank == 0);
  CHECK(e.activations_bytes == Approx(1.375 * (whole.activations_bytes - logits)).epsilon(1e-12));
}

TEST_CASE("fp8 training: the layers' matmuls take the calibrated FP8/BF16 ratio of their time, the LM head does not") {
  auto s = resolve_scenario("h100-sxm", "llama2-7b", 2, 2, 32768, "zigzag");
  const auto& hw = s.hardware;
  // The peaks' ratio over the FP8 GEMMs' relative efficiency (0.952 on Hopper, from
  // TransformerEngine's GEMM timings: configs/hardware): FP8 GEMMs reach a smaller share of
  // their peak than BF16 GEMMs of theirs.
  REQUIRE(hw.fp8_gemm_relative_efficiency == Approx(0.952));
  const double ratio = *hw.peak_bf16_per_s / (*hw.peak_fp8_per_s * hw.fp8_gemm_relative_efficiency);
  CHECK(ratio == Approx(0.5 / 0.952).epsilon(1e-3));
  StepShape shape;
  shape.tokens = 16384;
  shape.mp = 2;
  const auto bf16 = step_ops(s.model, shape);
  shape.fp8 = true;
  const auto fp8 = step_ops(s.model, shape);
  double t16 = 0, t8 = 0, head16 = 0, head8 = 0, casts = 0;
  for (const auto& op : bf16)
    if (op.kind == OpKind::Matmul) (op.per_layer ? t16 : head16) += s.cost->op_s(op, false);
  for (const auto& op : fp8) {
    if (op.kind == OpKind::Matmul) (op.per_layer ? t8 : head8) += s.cost->op_s(op, false);
    if (std::string(op.name) == "fp8_casts" && op.phase == Phase::Forward) casts += op.bytes;
  }
  CHECK(t8 == Approx(ratio * t16).epsilon(1e-12));
  CHECK(head8 == Approx(head16).epsilon(1e-12));
  // The casts: 4 bytes (read 2, write the FP8 copy and its transpose) per element of each GEMM
  // input: the normed input twice (QKV, MLP), the attention output, the MLP product.
  const double d = 4096, q = 4096, ff = 11008;
  CHECK(casts == Approx(4 * 16384 * (2 * d / 2 + q / 2 + ff / 2)).epsilon(1e-12));
  // Through the training options: the prediction's other compute falls, the attention does not.
  const auto before = predict(s);
  apply_precision(s.profile, TrainingPrecision::Fp8);
  s.rebuild_cost();
  const auto after = predict(s);
  CHECK(after.other_compute_s < before.other_compute_s);
  CHECK(after.attention_fwd_s == before.attention_fwd_s);
}
