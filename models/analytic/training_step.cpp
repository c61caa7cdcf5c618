#include "models/analytic/training_step.hpp"

#include <algorithm>

#include "models/pipeline/stage_split.hpp"

namespace ringsim::models {

namespace {

// One micro-batch's forward and backward through each model stage (chunk): the prediction's
// per-layer work split evenly over the chunks, the once-per-step ops (the LM head and the loss)
// on the last. `scale`: the prediction's step over its components' sum (1 for the cost model;
// the simulator's step spreads over the passes in the same proportions).
PipelineDurations stage_passes(const ResolvedScenario& s, const Prediction& p, const PipelineSchedule& pl, double scale) {
  const double layers = static_cast<double>(std::max<std::int64_t>(1, s.model.layers));
  const double share = static_cast<double>(layers_per_chunk(s.model, pl)) / layers;
  const double fwd = p.attention_fwd_s + p.layer_other_fwd_s + p.layer_collective_fwd_s;
  const double bwd = p.attention_bwd_s + (p.other_compute_s - p.layer_other_fwd_s - p.head_fwd_s - p.head_bwd_s) +
                     (p.collective_s - p.layer_collective_fwd_s);
  PipelineDurations d;
  const auto chunks = static_cast<std::size_t>(pl.chunks());
  d.fwd_s.assign(chunks, fwd * share * scale);
  d.bwd_s.assign(chunks, bwd * share * scale);
  d.fwd_s.back() += p.head_fwd_s * scale;
  d.bwd_s.back() += p.head_bwd_s * scale;
  return d;
}

// The parts of the passes rank `rank` runs, one micro-batch: its chunks' share of the per-layer
// parts, the LM head where the last chunk is, each scaled as stage_passes scales the passes (the
// simulator's difference from the parts, spread in proportion, is its own part).
StepBreakdown rank_parts(const ResolvedScenario& s, const Prediction& p, const PipelineSchedule& pl, std::int64_t rank) {
  const StepBreakdown pass = pass_breakdown(p, p.step_s);
  const double head = p.head_fwd_s + p.head_bwd_s;
  const double layers = static_cast<double>(std::max<std::int64_t>(1, s.model.layers));
  const double share = static_cast<double>(layers_per_chunk(s.model, pl) * pl.virtual_stages) / layers;
  StepBreakdown b = pass;
  b[StepPart::SimulatedDifference] = 0;
  b[StepPart::OtherCompute] -= head;
  b = b.scaled(share);
  if (rank == pl.stages - 1) b[StepPart::OtherCompute] += head;
  const double columns = p.columns_s();
  const double scale = columns > 0 ? p.step_s / columns : 1.0;
  b[StepPart::SimulatedDifference] = (scale - 1) * b.total();
  return b;
}

// A micro-batch's activations from one stage to the next, as Megatron sends them (schedules.py:
// tensor_shape = [seq / cp (/ tp under sequence parallelism), micro-batch, hidden], in the
// activations' 16-bit dtype) over the link between stages: the stages are the outermost
// dimension of Megatron's rank order (tp, cp, dp, pp), so neighbours are dp x mp x sp ranks
// apart, on another node once the pipeline spans nodes.
double hop_s(const ResolvedScenario& s, const TrainingOptions& o) {
  if (!o.pipeline.pipelined()) return 0;
  const auto& spec = s.spec;
  const double split = o.memory.sequence_parallel ? static_cast<double>(spec.mp) : 1.0;
  const double bytes = static_cast<double>(s.layout->block()) * static_cast<double>(spec.batch) *
                       static_cast<double>(s.model.d_model) * 2.0 / split;
  const bool inter = o.devices(spec) > s.hardware.devices_per_node;
  return s.cost->ring_transfer_s(bytes, inter);
}

}  // namespace

TrainingStep training_step(const ResolvedScenario& s, const Prediction& p, const TrainingOptions& o) {
  TrainingStep t;
  const auto& pl = o.pipeline;
  t.recompute = o.policy(s.profile);
  t.memory = estimate_memory(s, o.memory_options(s.profile));  // checks the pipeline against the model
  const double m = static_cast<double>(pl.micro_batches);
  if (pl.pipelined()) {
    const double columns = p.columns_s();
    auto d = stage_passes(s, p, pl, columns > 0 ? p.step_s / columns : 1.0);
    t.hop_s = d.hop_s = hop_s(s, o);
    t.passes = pipeline_step(pl, d);
    const auto busiest = std::max_element(t.passes.busy_s.begin(), t.passes.busy_s.end());
    t.parts = rank_parts(s, p, pl, busiest - t.passes.busy_s.begin()).scaled(m);
    t.parts[StepPart::PipelineIdle] = t.passes.step_s - *busiest;
  } else {
    t.passes.step_s = m * p.step_s;  // the micro-batches one after another
    t.passes.busy_s = {t.passes.step_s};
    t.parts = pass_breakdown(p, p.step_s).scaled(m);
  }
  // The gradients of the fullest stage's weights (the first's embedding or the last's output
  // layer), reduced once after the last micro-batch's backward, whose attention backward on the
  // stage hides it (Megatron's overlap_grad_reduce, DDP's buckets); ZeRO-3 gathers the weights
  // for every micro-batch's forward and backward, each hidden by its own.
  const double stages = static_cast<double>(pl.stages);
  const double weights = std::max(stage_parameters(s.model, pl, 0), stage_parameters(s.model, pl, pl.stages - 1));
  const double hiding = p.attention_bwd_s / stages;
  t.sync = gradient_sync(s, o.dp, o.zero, hiding, weights, pl.micro_batches);
  t.parts[StepPart::GradientSync] = t.sync.exposed_s;
  t.step_s = t.passes.step_s + t.sync.exposed_s;
  t.scale = t.step_s / p.step_s;
  t.tokens_per_s = static_cast<double>(o.dp) * m * static_cast<double>(s.spec.n_seq) * static_cast<double>(s.spec.batch) /
                   t.step_s;
  // Each device runs 1 / stages of the layers of every micro-batch.
  t.mfu = p.mfu * p.step_s * m / (stages * t.step_s);
  return t;
}

}  // namespace ringsim::models
