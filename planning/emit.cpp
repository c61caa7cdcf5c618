#include "planning/emit.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "planning/plan.hpp"

namespace ringsim::planning {

using models::InputError;

Stack parse_stack(std::string_view text) {
  if (text == "megatron") return Stack::Megatron;
  if (text == "torchtitan") return Stack::Torchtitan;
  if (text == "ring-flash-attn") return Stack::RingFlashAttn;
  if (text == "deepspeed") return Stack::DeepSpeed;
  throw InputError({}, 0, "emit",
                   "expected megatron (Megatron-LM's flags for the plan), torchtitan (its configuration function), "
                   "ring-flash-attn (its attention call and sharding) or deepspeed (its configuration and Ulysses "
                   "attention), got '" + std::string(text) + "'");
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

// The first comment line of every emitted configuration: the plan it is, and its figures.
std::string plan_line(const SweepResult& x) {
  const auto& p = x.point;
  return fmt::format("# ringsim plan: {} on {}, {} devices (dp {} x tp {} x cp {} x pp {}): {}, predicted step {:.4g} s, "
                     "{:.4g} tokens/s\n",
                     x.model, x.hardware, x.devices(), p.dp, p.spec.mp, p.spec.sp, p.pipeline.stages, p.spec.cp.text(),
                     x.step_s, x.tokens_per_s);
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
  std::string out = plan_line(x) + fmt::format(
      "# Megatron-LM flags (NVIDIA/Megatron-LM @ d98e8a6, each cited in ringsim's data/stacks/megatron_flags.csv);\n"
      "# launch on {} ranks: the data-parallel size is what is left, {}\n",
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

// torchtitan runs context parallelism through PyTorch's context_parallel (configs/implementations/
// torch-cp.json): the SDPA ring with the head-tail (zigzag) load balancer, or FlexAttention's
// all-gather with the processing-time round-robin one.
std::string torchtitan(const SweepResult& x, const PlanRequest& r, const models::ModelConfig& model) {
  const auto& p = x.point;
  const auto& spec = p.spec;
  if (spec.sp > 1 && x.impl != "torch-cp")
    throw InputError({}, 0, "emit",
                     fmt::format("the plan runs its context parallelism on {}, which torchtitan does not: torchtitan's is "
                                 "PyTorch's context_parallel (plan with --impl torch-cp)",
                                 x.impl));
  const std::int64_t world = x.devices();
  const bool flex = spec.cp.family_name() == "allgather";
  std::string out = plan_line(x) + fmt::format(
      "# torchtitan (pytorch/torchtitan @ b5bcd76): a configuration function (torchtitan/config/README.md), each field\n"
      "# cited in ringsim's data/stacks/torchtitan_fields.csv; NGPU={} (the product of the degrees); the model built with\n"
      "# attn_backend=\"{}\" ({})\n",
      world, flex ? "flex" : "sdpa", flex ? "context parallelism all-gathers K/V for FlexAttention" : "the SDPA ring");
  out += "from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC\n\n\n"
         "def ringsim_plan(config):\n";
  const auto set = [&](const std::string& field, const std::string& value) { out += "    config." + field + " = " + value + "\n"; };
  // ZeRO-3 is FSDP over the data-parallel (and context-parallel) ranks; below it the replicas are
  // DDP's, except that FSDP2 without resharding after the forward keeps parameters gathered
  // through the step as ZeRO-1 and ZeRO-2 do (their gradient and optimizer sharding is FSDP's).
  const bool sharded = p.zero != models::Sharding::None;
  set("parallelism.data_parallel_replicate_degree", std::to_string(sharded ? 1 : p.dp));
  set("parallelism.data_parallel_shard_degree", std::to_string(sharded ? p.dp : 1));
  if (p.zero == models::Sharding::Zero1 || p.zero == models::Sharding::Zero2)
    set("parallelism.fsdp_reshard_after_forward", "\"never\"");
  set("parallelism.tensor_parallel_degree", std::to_string(spec.mp));
  if (spec.mp > 1) set("parallelism.enable_sequence_parallel", r.memory.sequence_parallel ? "True" : "False");
  set("parallelism.context_parallel_degree", std::to_string(spec.sp));
  if (spec.sp > 1) {
    const auto layout = spec.layout.family_name();
    set("parallelism.context_parallel_load_balancer",
        layout == "zigzag" || layout == "doc-zigzag" ? "\"headtail\"" : layout == "ptrr" ? "\"ptrr\"" : "None");
  }
  if (p.pipeline.pipelined()) {
    set("parallelism.pipeline_parallel_degree", std::to_string(p.pipeline.stages));
    const bool interleaved = p.pipeline.kind == models::PipelineKind::Interleaved;
    set("parallelism.pipeline_parallel_schedule", interleaved ? "\"Interleaved1F1B\"" : "\"1F1B\"");
    set("parallelism.pipeline_parallel_layers_per_stage", std::to_string(model.layers / p.pipeline.chunks()));
    set("parallelism.num_pp_microbatches", std::to_string(p.pipeline.micro_batches));
  }
  set("training.max_context_length", std::to_string(spec.n_seq));
  set("training.num_tokens_per_microbatch_per_dp_rank", std::to_string(spec.n_seq * spec.batch));
  switch (x.recompute) {
    case models::Recompute::None: set("activation_checkpoint", "None"); break;
    case models::Recompute::Full: set("activation_checkpoint", "FullAC.Config()"); break;
    case models::Recompute::Selective: set("activation_checkpoint", "SelectiveAC.Config()"); break;
    case models::Recompute::Attention:
      set("activation_checkpoint", "SelectiveAC.Config()");
      out += "    # ringsim's 'attention' policy recomputes the attention core only; torchtitan's selective\n"
             "    # checkpointing saves matmul outputs (ringsim's 'selective'): re-plan with --recompute selective\n";
      break;
  }
  if (r.memory.precision == models::TrainingPrecision::Fp8)
    out += "    # FP8: the plan's GEMMs are FP8 (TransformerEngine's recipe); torchtitan's own float8 training is a\n"
           "    # model converter this emitter does not configure\n";
  out += "    return config\n";
  return out;
}

// ring-flash-attention is an attention function, not a trainer: what it takes is the ring's process
// group, the sequence sharded as the function expects, and the call; the rest of the plan (tensor
// parallelism, ZeRO, recomputation, pipeline) is the training framework's, said in comments.
std::string ring_flash_attn(const SweepResult& x) {
  const auto& p = x.point;
  const auto& spec = p.spec;
  if (x.impl != "ring-flash-attn" || spec.cp.kind != models::StrategyKind::Ring)
    throw InputError({}, 0, "emit",
                     fmt::format("the plan runs {} on {}; ring-flash-attention runs rings (plan with --impl ring-flash-attn "
                                 "--cp ring)",
                                 spec.cp.text(), x.impl));
  const auto layout = spec.layout.family_name();
  const char* fn = layout == "zigzag" ? "zigzag_ring_flash_attn_func" : layout == "striped" ? "stripe_flash_attn_func" : "ring_flash_attn_func";
  const char* shard = layout == "zigzag"    ? "    c = x.chunk(2 * world, dim=1)  # chunks r and 2N-1-r of 2N\n"
                                              "    return torch.cat([c[rank], c[2 * world - 1 - rank]], dim=1)\n"
                      : layout == "striped" ? "    return x[:, rank::world]  # tokens r, r + N, r + 2N, ...\n"
                                            : "    return x.chunk(world, dim=1)[rank]  # the r-th of N equal chunks\n";
  std::string out = plan_line(x) + fmt::format(
      "# ring-flash-attention (zhuzilin/ring-flash-attention @ 8996282; data/stacks/ring_flash_attn_api.csv): each ring is\n"
      "# {} ranks, every TP-th of a block of RING x TP (tensor parallelism innermost, inside a node, as ringsim places\n"
      "# it); tensor parallelism {}, model-state sharding {}, recomputation '{}' and {} pipeline stage(s) are the\n"
      "# training framework's (the library shards only the sequence)\n"
      "import torch\n"
      "import torch.distributed as dist\n"
      "from ring_flash_attn import {}\n\n"
      "RING = {}  # sequence-parallel ranks per ring\n"
      "TP = {}\n"
      "SEQ_LEN = {}\n\n\n"
      "def ring_group():\n"
      "    # every rank creates every group (torch.distributed), then keeps its own\n"
      "    mine = None\n"
      "    for start in range(0, dist.get_world_size(), RING * TP):\n"
      "        for t in range(TP):\n"
      "            ranks = [start + t + j * TP for j in range(RING)]\n"
      "            g = dist.new_group(ranks)\n"
      "            if dist.get_rank() in ranks:\n"
      "                mine = g\n"
      "    return mine\n\n\n"
      "def shard(x, rank, world):  # x: [batch, SEQ_LEN, heads, head_dim]\n"
      "{}\n\n"
      "def attention(q, k, v, group):  # this rank's shards of q, k, v\n"
      "    return {}(q, k, v, causal=True, group=group)\n",
      spec.sp, spec.mp, models::to_string(p.zero), models::to_string(x.recompute), p.pipeline.stages, fn, spec.sp, spec.mp,
      spec.n_seq, shard, fn);
  return out;
}

// DeepSpeed: ZeRO over the data-parallel ranks and DeepSpeed-Ulysses (DistributedAttention: an
// all-to-all of the heads around the local attention the model passes in). No tensor or pipeline
// parallelism in this emitter: ZeRO's engine runs neither (Megatron-DeepSpeed does; emit megatron).
std::string deepspeed(const SweepResult& x) {
  const auto& p = x.point;
  const auto& spec = p.spec;
  if (spec.sp > 1 && spec.cp.kind != models::StrategyKind::Ulysses)
    throw InputError({}, 0, "emit",
                     fmt::format("the plan runs {}; DeepSpeed's sequence parallelism is Ulysses (plan with --cp ulysses)",
                                 spec.cp.text()));
  if (spec.mp > 1 || p.pipeline.pipelined())
    throw InputError({}, 0, "emit",
                     "the plan uses tensor or pipeline parallelism, which DeepSpeed's ZeRO engine does not run (plan with "
                     "--mp 1 --pp 1, or emit megatron)");
  std::string out = fmt::format(
      "# ringsim plan: {} on {}, {} devices (dp {} x sp {}): {}, predicted step {:.4g} s, {:.4g} tokens/s\n"
      "# DeepSpeed (deepspeedai/DeepSpeed @ edaa722; each key cited in ringsim's data/stacks/deepspeed_config.csv). The plan\n"
      "# was predicted with {}'s attention kernel: DistributedAttention wraps whatever local attention the model gives it.\n"
      "# ds_config.json:\n",
      x.model, x.hardware, x.devices(), p.dp, spec.sp, spec.cp.text(), x.step_s, x.tokens_per_s, x.impl);
  nlohmann::json j;
  j["train_micro_batch_size_per_gpu"] = spec.batch;
  j["gradient_accumulation_steps"] = p.pipeline.micro_batches;
  j["zero_optimization"] = {{"stage", static_cast<int>(p.zero)}};
  j["bf16"] = {{"enabled", true}};
  if (spec.sp > 1) j["sequence_parallel_size"] = spec.sp;
  out += j.dump(2) + "\n";
  if (spec.sp > 1)
    out += fmt::format(
        "# the attention of each layer, over a sequence-parallel group of {} ranks (q, k, v as [seq, batch, heads, dim]):\n"
        "# from deepspeed.sequence.layer import DistributedAttention\n"
        "# attention = DistributedAttention(local_attention, sequence_process_group, scatter_idx=2, gather_idx=0)\n",
        spec.sp);
  if (x.recompute == models::Recompute::Full)
    out += "# full recomputation: each layer through deepspeed.checkpointing.checkpoint (the model's code)\n";
  else if (x.recompute != models::Recompute::None)
    out += fmt::format("# recomputation '{}': the model's own checkpointing (not a DeepSpeed setting)\n", models::to_string(x.recompute));
  return out;
}

}  // namespace

std::string emit_launch(const SweepResult& plan, const PlanRequest& request, const models::ModelConfig& model, Stack stack) {
  switch (stack) {
    case Stack::Megatron: return megatron(plan, request);
    case Stack::Torchtitan: return torchtitan(plan, request, model);
    case Stack::RingFlashAttn: return ring_flash_attn(plan);
    case Stack::DeepSpeed: return deepspeed(plan);
  }
  return {};
}

}  // namespace ringsim::planning
