#include "planning/emit.hpp"

#include <fmt/format.h>

#include "models/io/error.hpp"
#include "planning/plan.hpp"

namespace ringsim::planning {

using models::InputError;

Stack parse_stack(std::string_view text) {
  if (text == "megatron") return Stack::Megatron;
  throw InputError({}, 0, "emit", "expected megatron (Megatron-LM's flags for the plan), got '" + std::string(text) + "'");
}

namespace {

// Megatron-Core runs context parallelism through TransformerEngine's attention
// (NVIDIA/Megatron-LM @ d98e8a6, megatron/core/extensions/transformer_engine.py:2063:
// TEDotProductAttention's cp_comm_type): the four TE implementations of configs/implementations/.
const char* cp_comm_type(const std::string& impl) {
  if (impl == "te-p2p") return "p2p";
  if (impl == "te-all-gather") return "all_gather";
  if (impl == "te-a2a") return "a2a";
  if (impl == "te-a2a-p2p") return "a2a+p2p";
  return nullptr;
}

std::string megatron(const SweepResult& x, const PlanRequest& r) {
  const auto& p = x.point;
  const auto& spec = p.spec;
  const char* comm = cp_comm_type(x.impl);
  if (spec.sp > 1 && !comm)
    throw InputError({}, 0, "emit",
                     fmt::format("the plan runs its context parallelism on {}, which Megatron does not: Megatron-Core's is "
                                 "TransformerEngine's (plan with --impl te-p2p,te-a2a,te-a2a-p2p,te-all-gather)",
                                 x.impl));
  const std::int64_t world = x.devices();
  std::string out = fmt::format(
      "# ringsim plan: {} on {}, {} devices (dp {} x tp {} x cp {} x pp {}): {}, predicted step {:.4g} s, {:.4g} tokens/s\n"
      "# Megatron-LM flags (NVIDIA/Megatron-LM @ d98e8a6, each cited in ringsim's data/stacks/megatron_flags.csv);\n"
      "# launch on {} ranks: the data-parallel size is what is left, {}\n",
      x.model, x.hardware, world, p.dp, spec.mp, spec.sp, p.pipeline.stages, spec.cp.text(), x.step_s, x.tokens_per_s,
      world, p.dp);
  std::vector<std::string> flags;
  const auto add = [&](std::string f) { flags.push_back(std::move(f)); };
  add(fmt::format("--tensor-model-parallel-size {}", spec.mp));
  if (spec.mp > 1 && r.memory.sequence_parallel) add("--sequence-parallel");
  add(fmt::format("--context-parallel-size {}", spec.sp));
  if (spec.sp > 1) {
    add(fmt::format("--cp-comm-type {}", comm));
    // a2a+p2p: Ulysses over the inner group, the ring over the outer (usp:UxR).
    if (std::string_view(comm) == "a2a+p2p")
      add(fmt::format("--hierarchical-context-parallel-sizes {} {}", spec.cp.ulysses_degree(spec.sp), spec.cp.ring_degree(spec.sp)));
  }
  if (p.pipeline.pipelined()) {
    add(fmt::format("--pipeline-model-parallel-size {}", p.pipeline.stages));
    if (p.pipeline.kind == models::PipelineKind::Interleaved)
      add(fmt::format("--num-virtual-stages-per-pipeline-rank {}", p.pipeline.virtual_stages));
  }
  add(fmt::format("--seq-length {}", spec.n_seq));
  add(fmt::format("--max-position-embeddings {}", spec.n_seq));
  add(fmt::format("--micro-batch-size {}", spec.batch));
  add(fmt::format("--global-batch-size {}", spec.batch * p.pipeline.micro_batches * p.dp));
  switch (x.recompute) {
    case models::Recompute::None: break;
    case models::Recompute::Full:
      add("--recompute-granularity full");
      add("--recompute-method uniform");
      add("--recompute-num-layers 1");
      break;
    case models::Recompute::Attention: add("--recompute-granularity selective"); break;
    case models::Recompute::Selective:
      add("--recompute-granularity selective");
      out += "# recomputation: Megatron's selective recomputes the attention core (recompute_modules core_attn), ringsim's\n"
             "# 'attention' policy; the plan's memory was estimated for 'selective' (element-wise ops): re-plan with\n"
             "# --recompute attention for the memory Megatron will use\n";
      break;
  }
  if (p.zero != models::Sharding::None) add("--use-distributed-optimizer");
  if (p.zero == models::Sharding::Zero3)
    out += "# ZeRO-3: the distributed optimizer shards optimizer states and gradients; sharding the parameters too is\n"
           "# Megatron FSDP's, whose switch is not in data/stacks/megatron_flags.csv (not found among the parser's\n"
           "# definitions at the cited commit), so it is not printed\n";
  add("--bf16");
  if (r.memory.precision == models::TrainingPrecision::Fp8) add("--fp8-format hybrid");
  if (spec.sp > 1 && spec.layout.family_name() != "zigzag" && std::string_view(comm) != "a2a")
    out += fmt::format("# layout: Megatron splits each sequence in 2 x cp chunks, rank r holding r and 2cp-1-r (zigzag);"
                       " the plan's {} is what TE runs for its mask\n", spec.layout.text());
  for (std::size_t i = 0; i < flags.size(); ++i) out += flags[i] + (i + 1 < flags.size() ? " \\\n" : "\n");
  return out;
}

}  // namespace

std::string emit_launch(const SweepResult& plan, const PlanRequest& request, Stack stack) {
  switch (stack) {
    case Stack::Megatron: return megatron(plan, request);
  }
  return {};
}

}  // namespace ringsim::planning
