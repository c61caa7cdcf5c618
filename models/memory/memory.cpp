#include "models/memory/memory.hpp"

#include "models/program/program.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/pipeline/stage_split.hpp"

namespace ringsim::models {

namespace {
// Defaults of FixedCosts, sources in docs/memory.md ("Fixed costs and headroom").
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kMB = 1e6;
constexpr double kCudaContextBytes = 300 * kMiB;
constexpr double kNcclBytesTwoRanks = 544 * kMB;
constexpr double kNcclBytesMoreRanks = 688 * kMB;
constexpr double kFragmentation = 0.05;

double nccl_bytes(const FixedCosts& f, const std::vector<std::int64_t>& groups) {
  double b = 0;
  for (const auto n : groups) b += n == 2 ? f.nccl_bytes_two_ranks : f.nccl_bytes_more_ranks;
  return b;
}
}  // namespace

std::string_view to_string(Sharding s) noexcept {
  switch (s) {
    case Sharding::None: return "none";
    case Sharding::Zero1: return "zero1";
    case Sharding::Zero2: return "zero2";
    case Sharding::Zero3: return "zero3";
  }
  return "none";
}

std::string_view to_string(Recompute r) noexcept {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
    case Recompute::Attention: return "attention";
  }
  return "none";
}

std::string_view to_string(TrainingPrecision p) noexcept {
  switch (p) {
    case TrainingPrecision::Bf16: return "bf16";
    case TrainingPrecision::Fp32: return "fp32";
    case TrainingPrecision::Fp8: return "fp8";
  }
  return "bf16";
}

TrainingPrecision parse_training_precision(std::string_view t) {
  if (t == "bf16" || t == "fp16") return TrainingPrecision::Bf16;
  if (t == "fp32") return TrainingPrecision::Fp32;
  if (t == "fp8") return TrainingPrecision::Fp8;
  throw InputError({}, 0, "precision", "expected bf16, fp16, fp32 or fp8, got '" + std::string(t) + "'");
}

PrecisionBytes PrecisionBytes::of(TrainingPrecision p) noexcept {
  PrecisionBytes b;
  switch (p) {
    case TrainingPrecision::Bf16: break;
    case TrainingPrecision::Fp32:
      // fp32 weights are their own master copy: Adam's m and v only (8 B).
      b = {4, 4, 8, 4, 4, 4};
      break;
    case TrainingPrecision::Fp8:
      // Model states stay bf16 mixed; the backward's matmul inputs and the attention's Q, K, V
      // and O are kept as fp8 copies (TransformerEngine's Linear and fp8 DotProductAttention).
      b.matmul_input = 1;
      b.attention = 1;
      break;
  }
  return b;
}

std::string MemorySettings::text() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s, %s, %.1f GiB headroom%s", std::string(to_string(precision)).c_str(),
                sequence_parallel ? "sequence parallel" : "no sequence parallelism",
                headroom_bytes / kBytesPerGiB, offload_optimizer ? ", optimizer offloaded to host" : "");
  return buf;
}

bool MemorySettings::read_field(const std::string& key, const nlohmann::json& v, const std::string& file) {
  const auto boolean = [&]() {
    if (!v.is_boolean()) throw InputError(file, 0, key, "expected true or false, got " + v.dump());
    return v.get<bool>();
  };
  if (key == "precision") {
    if (!v.is_string()) throw InputError(file, 0, key, "expected bf16, fp16, fp32 or fp8, got " + v.dump());
    try {
      precision = parse_training_precision(v.get<std::string>());
    } catch (const InputError& e) {
      throw InputError(file, 0, key, e.message());
    }
  } else if (key == "sequence_parallel") {
    sequence_parallel = boolean();
  } else if (key == "offload_optimizer") {
    offload_optimizer = boolean();
  } else if (key == "headroom_gib") {
    if (!v.is_number()) throw InputError(file, 0, key, "expected GiB between 0 and 1e6, got " + v.dump());
    try {
      set_headroom_gib(v.get<double>());
    } catch (const InputError& e) {
      throw InputError(file, 0, key, e.message());
    }
  } else {
    return false;
  }
  return true;
}

void MemorySettings::write_fields(nlohmann::json& j) const {
  const MemorySettings d;
  if (precision != d.precision) j["precision"] = std::string(to_string(precision));
  if (sequence_parallel != d.sequence_parallel) j["sequence_parallel"] = sequence_parallel;
  if (offload_optimizer != d.offload_optimizer) j["offload_optimizer"] = offload_optimizer;
  if (headroom_bytes != d.headroom_bytes) j["headroom_gib"] = headroom_bytes / kBytesPerGiB;
}

void MemorySettings::set_headroom_gib(double gib) {
  if (!(gib >= 0) || gib > 1e6)
    throw InputError({}, 0, "headroom", "expected GiB between 0 and 1e6, got " + std::to_string(gib));
  headroom_bytes = gib * kBytesPerGiB;
}

FixedCosts FixedCosts::published() noexcept {
  FixedCosts f;
  f.cuda_context_bytes = kCudaContextBytes;
  f.nccl_bytes_two_ranks = kNcclBytesTwoRanks;
  f.nccl_bytes_more_ranks = kNcclBytesMoreRanks;
  f.fragmentation = kFragmentation;
  return f;
}

Sharding parse_sharding(std::string_view t) {
  if (t == "0" || t == "none") return Sharding::None;
  if (t == "1" || t == "zero1") return Sharding::Zero1;
  if (t == "2" || t == "zero2") return Sharding::Zero2;
  if (t == "3" || t == "zero3" || t == "fsdp") return Sharding::Zero3;
  throw InputError({}, 0, "zero",
                   "expected a ZeRO stage 0, 1, 2 or 3 (or none, zero1, zero2, zero3, fsdp), got '" + std::string(t) + "'");
}

Recompute parse_recompute(std::string_view t) {
  if (t == "none") return Recompute::None;
  if (t == "selective") return Recompute::Selective;
  if (t == "full") return Recompute::Full;
  if (t == "attention") return Recompute::Attention;
  throw InputError({}, 0, "recompute", "expected none, selective, full or attention, got '" + std::string(t) + "'");
}

void apply_recompute(Profile& profile, Recompute r) noexcept {
  profile.recompute = r == Recompute::Full;
  profile.recompute_attention = r == Recompute::Attention;
}

void apply_precision(Profile& profile, TrainingPrecision p) noexcept { profile.fp8_matmuls = p == TrainingPrecision::Fp8; }

MemoryOptions MemoryOptions::from_profile(const ResolvedScenario& s) {
  MemoryOptions o;
  o.recompute = s.profile.recompute ? Recompute::Full : Recompute::None;
  o.sharding = Sharding::Zero3;
  return o;
}

std::vector<MemoryTerm> MemoryEstimate::terms() const {
  return {{"parameters", parameters_bytes}, {"gradients", gradients_bytes}, {"optimizer", optimizer_bytes},
          {"activations", activations_bytes}, {"workspace", workspace_bytes}, strategy, {"fixed", fixed_bytes}};
}

std::string fit_phrase(const MemoryEstimate& e) {
  constexpr double gib = kBytesPerGiB;
  char buf[160];
  if (e.fits) std::snprintf(buf, sizeof buf, "fits with %.1f GiB spare", e.spare_bytes() / gib);
  else if (e.tight())
    std::snprintf(buf, sizeof buf, "tight: %.1f GiB spare, under the %.1f GiB headroom", e.spare_bytes() / gib,
                  e.headroom_bytes / gib);
  else std::snprintf(buf, sizeof buf, "does not fit: %.1f GiB over", -e.spare_bytes() / gib);
  return buf;
}

MemoryTerm MemoryEstimate::largest_term() const {
  const auto all = terms();
  return *std::max_element(all.begin(), all.end(),
                           [](const MemoryTerm& a, const MemoryTerm& b) { return a.bytes < b.bytes; });
}

double activation_bytes_per_token_layer(const ModelConfig& m, std::int64_t mp, Recompute r, const PrecisionBytes& b,
                                        bool sequence_parallel) noexcept {
  const double p = static_cast<double>(mp);
  // What tensor parallelism replicates (norms, residual, the layer input) Megatron's sequence
  // parallelism splits over the same ranks.
  const double d = static_cast<double>(m.d_model) / (sequence_parallel ? p : 1.0);
  const double q = static_cast<double>(m.heads * m.head_dim) / p;
  const double kv = static_cast<double>(m.kv_heads * m.head_dim) / p;
  const double f = static_cast<double>(m.d_ff) / p;
  // The attention kernel's backward needs Q, K, V (after RoPE), its output O (also the output
  // projection's input) and the fp32 log-sum-exp per query row and head; nothing of size c x c
  // is kept (tiled kernels recompute the scores in the backward).
  const double attention = b.attention * (q + 2 * kv) + b.attention * q + 4.0 * static_cast<double>(m.heads) / p;
  if (m.attention_only) {
    if (r == Recompute::Full) return b.attention * (q + 2 * kv);
    return r == Recompute::Attention ? attention - 4.0 * static_cast<double>(m.heads) / p : attention;
  }
  const bool swiglu = m.mlp_matrices() == 3;
  switch (r) {
    case Recompute::Full:
      return b.element * d;  // the layer's input (its residual stream) only
    case Recompute::Attention:
      // Everything but the kernel's own log-sum-exp: Q, K, V are the checkpoint's inputs, the
      // output is the projection's input.
      return activation_bytes_per_token_layer(m, mp, Recompute::None, b, sequence_parallel) -
             4.0 * static_cast<double>(m.heads) / p;
    case Recompute::Selective: {
      // Matmul outputs kept, norms and element-wise ops recomputed: the layer input, Q/K/V/O,
      // the attention projection's output (to rebuild the residual), and the MLP's first
      // matmul outputs (gate and up for SwiGLU, fc1 for GELU).
      return 2 * b.element * d + attention + b.element * f * (swiglu ? 2.0 : 1.0);
    }
    case Recompute::None: {
      // Two norms' inputs and their outputs (the QKV and MLP matmul inputs); the attention
      // tensors; the MLP's intermediates (SwiGLU: gate and up, read by the element-wise
      // product, and the product, the down matmul's input; GELU: fc1's output and GELU's, the
      // second matmul's input).
      const double mlp = swiglu ? 2 * b.element * f + b.matmul_input * f : b.element * f + b.matmul_input * f;
      return 2 * (b.element + b.matmul_input) * d + attention + mlp;
    }
  }
  return 0;
}

std::vector<std::int64_t> communicator_sizes(const ResolvedScenario& s, std::int64_t dp, std::int64_t pp) {
  std::vector<std::int64_t> groups;
  const auto add = [&](std::int64_t n) {
    if (n > 1) groups.push_back(n);
  };
  add(s.spec.mp);
  const std::int64_t sp = s.spec.sp;
  switch (s.strategy.kind) {
    case StrategyKind::Hybrid: add(s.strategy.ulysses_degree(sp)), add(s.strategy.ring_degree(sp)); break;
    case StrategyKind::DoubleRing: add(s.strategy.window), add(sp / std::max<std::int64_t>(1, s.strategy.window)); break;
    default: add(sp); break;
  }
  add(dp * sp);
  add(pp);
  return groups;
}

MemoryTerm strategy_memory(const ResolvedScenario& s, std::int64_t kv_buffers) {
  // A ring's buffers (ring, double ring, the ring of a hybrid): at the backward's peak each
  // buffer holds a K/V block and the dK/dV accumulator that travels with it (a ring of one
  // device receives nothing, its own block is an activation).
  double ring = 0;
  if (s.strategy.has_ring()) {
    const auto& rs = s.ring_scenario();
    const double kv = static_cast<double>(rs.workload->kv_block_bytes());
    // The accumulator in the dtype the implementation sends it (models/program/program.hpp).
    const double dkv = static_cast<double>(dkv_block_bytes(s, rs.workload->kv_block_bytes()));
    if (rs.spec.sp > 1) ring = static_cast<double>(kv_buffers) * (kv + dkv);
  }
  // The strategy's own buffers (models/program/program.cpp): gathered K/V and dK/dV of an all-gather,
  // the full-sequence tensors of Ulysses' heads.
  const double own = s.program ? s.program->buffer_bytes : 0.0;
  if (s.strategy.kind == StrategyKind::Ring) return {"kv_ring_buffers", ring};
  return {"strategy_buffers", ring + own};
}

namespace {

// Where each part's formula comes from (docs/memory.md's tables say the same).
constexpr const char* kSrcWeights =
    "the rank's parameters at the precision's weight bytes (bf16 mixed: 2), divided over dp x sp by ZeRO-3";
constexpr const char* kSrcGradients = "the rank's parameters at the precision's gradient bytes (bf16 mixed: 2), divided by ZeRO-2 and 3";
constexpr const char* kSrcOptimizer =
    "fp32 master weights and Adam's m and v: 12 bytes per parameter (the ZeRO paper's K = 12, Rajbhandari et al. "
    "arXiv 1910.02054), divided by ZeRO-1, 2 and 3";
constexpr const char* kSrcGathered =
    "ZeRO-3 / FSDP gathers the current layer's weights and prefetches the next: two layers' weights";
constexpr const char* kSrcLayers =
    "tokens held x layers in flight x bytes kept per token and layer under the recomputation policy (Korthikanti "
    "et al. arXiv 2205.05198 section 4, with the policy's kept tensors: docs/memory.md)";
constexpr const char* kSrcRecomputed = "full recomputation: the layer being recomputed holds all its activations during its backward";
constexpr const char* kSrcWorkspace =
    "the attention kernel's fp32 output / dQ accumulator and row statistics, one fp32 score tile and its "
    "probabilities (an upper bound for kernels that keep the tile on chip)";
constexpr const char* kSrcStrategy =
    "the ring's K/V and dK/dV blocks in flight and the strategy's own buffers (gathered K/V, Ulysses' full-sequence "
    "tensors), in the wire dtype of the training precision";
constexpr const char* kSrcContext =
    "PyTorch's CUDA context with lazy module loading: ~300 MiB (pytorch/pytorch#107667, PR #86509)";
constexpr const char* kSrcNccl =
    "NCCL's buffers per communicator (tensor-parallel, the strategy's, the gradient group's, the pipeline's): "
    "measured growth per process group (NVIDIA/nccl#964)";
constexpr const char* kSrcFragmentation =
    "the caching allocator's reserved-but-unallocated memory: 5 % of what is allocated and freed every step "
    "(vllm-project/compressed-tensors PR #587)";

// The estimate of one pipeline rank (rank 0 of a single stage without a pipeline); with `parts`,
// every contribution to its total too.
MemoryEstimate rank_memory(const ResolvedScenario& s, const MemoryOptions& o, std::int64_t rank,
                           std::vector<MemoryPart>* parts = nullptr) {
  const auto part = [&](const char* term, const char* name, double bytes, const char* source) {
    if (parts && bytes != 0) parts->push_back({term, name, bytes, source});
  };
  const auto& m = s.model;
  const auto& pl = o.pipeline;
  const PrecisionBytes b = PrecisionBytes::of(o.settings.precision);
  const double mp = static_cast<double>(s.spec.mp);
  MemoryEstimate e;
  e.pipeline_rank = rank;
  e.capacity_bytes = s.hardware.hbm_bytes;
  e.headroom_bytes = o.settings.headroom_bytes;
  // Model states (PrecisionBytes): bf16 mixed precision with Adam keeps 2 + 2 + 12 bytes per
  // parameter of this tensor-parallel rank (the ZeRO paper's K = 12), fp32 4 + 4 + 8.
  const double params = stage_parameters(m, pl, rank) / mp;
  const double group = static_cast<double>(o.dp) * (o.shard_over_cp ? static_cast<double>(s.spec.sp) : 1.0);
  const auto shard = [&](Sharding from) { return o.sharding >= from ? group : 1.0; };
  const double optimizer = b.optimizer * params / shard(Sharding::Zero1);
  if (o.settings.offload_optimizer) e.host_bytes = optimizer;
  else e.optimizer_bytes = optimizer;
  e.gradients_bytes = b.gradient * params / shard(Sharding::Zero2);
  e.parameters_bytes = b.weight * params / shard(Sharding::Zero3);
  part("parameters", "weights", e.parameters_bytes, kSrcWeights);
  if (o.sharding == Sharding::Zero3 && group > 1 && m.layers > 0) {
    // ZeRO-3 / FSDP gather one layer's weights before using it and prefetch the next one.
    const double embeddings = 2.0 * static_cast<double>(m.vocab * m.d_model) / mp;
    const double layer = (static_cast<double>(m.parameters()) / mp - embeddings) / static_cast<double>(m.layers);
    e.parameters_bytes += 2 * b.weight * layer;
    part("parameters", "gathered layers (ZeRO-3)", 2 * b.weight * layer, kSrcGathered);
  }
  part("gradients", "gradients", e.gradients_bytes, kSrcGradients);
  part("optimizer", "optimizer state", e.optimizer_bytes, kSrcOptimizer);

  // Tokens this device holds: its block of the sequence, times the sequences of a step.
  const double tokens = static_cast<double>(s.layout->block()) * static_cast<double>(s.spec.batch);
  // The layers whose activations the rank keeps at its peak: its chunks in flight (all the
  // model's layers, once, without a pipeline).
  const double layers = static_cast<double>(layers_per_chunk(m, pl) * pl.peak_in_flight(rank));
  const bool sp = o.settings.sequence_parallel;
  e.activations_bytes = tokens * layers * activation_bytes_per_token_layer(m, s.spec.mp, o.recompute, b, sp);
  part("activations", "layers kept", e.activations_bytes, kSrcLayers);
  // The layer being recomputed holds all its activations during its backward.
  if (o.recompute == Recompute::Full) {
    const double whole = tokens * activation_bytes_per_token_layer(m, s.spec.mp, Recompute::None, b, sp);
    e.activations_bytes += whole;
    part("activations", "layer being recomputed", whole, kSrcRecomputed);
  }
  // Logits of the vocabulary-parallel LM head, upcast to fp32 for the cross-entropy, which keeps
  // them (its softmax or log-probabilities) for the backward, and the loss's transients: the stack's
  // cross-entropy (models/implementations/loss_kernel.hpp). The loss runs at the activations' peak
  // (after the last layer's forward, before any backward), so both add to it. A fused, chunked loss
  // (logits never materialised) would save these terms.
  if (!m.attention_only && rank == pl.stages - 1) {
    const double logit_elements = tokens * static_cast<double>(m.vocab) / mp;
    const LossMemory loss =
        loss_memory(s.impl.loss, o.settings.precision == TrainingPrecision::Fp32 ? 4.0 : 2.0);
    e.activations_bytes += logit_elements * (loss.kept + loss.transient);
    part("activations", loss.kept == 4 ? "logits (fp32)" : "logits", logit_elements * loss.kept, loss.kept_source);
    part("activations", "loss transients", logit_elements * loss.transient, loss.transient_source);
  }

  // The attention kernel: fp32 output (forward) or dQ (backward) accumulator and the running
  // max and sum per row, plus one tile of fp32 scores and probabilities (an upper bound for
  // kernels that keep the tile on chip).
  const double heads = static_cast<double>(s.cost->heads_per_device());
  const double q_width = heads * static_cast<double>(m.head_dim);
  e.workspace_bytes = tokens * (4 * q_width + 8 * heads) +
                      2 * 4 * static_cast<double>(s.tile.q) * static_cast<double>(s.tile.k) * heads *
                          static_cast<double>(s.spec.batch);

  part("workspace", "attention workspace", e.workspace_bytes, kSrcWorkspace);

  e.strategy = strategy_memory(s, o.kv_buffers);
  // The strategy's buffers are sized in the profile's wire dtype; another training precision
  // sends K and V in its own (fp32 runs send fp32, TE's fp8 recipes send fp8).
  if (o.settings.precision != TrainingPrecision::Bf16 && s.profile.kv_wire_bytes > 0)
    e.strategy.bytes *= b.attention / static_cast<double>(s.profile.kv_wire_bytes);
  part(e.strategy.name, "strategy buffers", e.strategy.bytes, kSrcStrategy);

  const double dynamic = e.activations_bytes + e.workspace_bytes + e.strategy.bytes;
  // A CUDA context, NCCL communicators and PyTorch's caching allocator are GPU costs; XLA on a
  // TPU plans its buffers statically (what it reserves is in the hardware's capacity figure).
  if (s.hardware.kind == "gpu") {
    const double nccl = nccl_bytes(o.fixed, communicator_sizes(s, o.dp, pl.stages));
    e.fixed_bytes = o.fixed.cuda_context_bytes + nccl + o.fixed.fragmentation * dynamic;
    part("fixed", "CUDA context", o.fixed.cuda_context_bytes, kSrcContext);
    part("fixed", "NCCL buffers", nccl, kSrcNccl);
    part("fixed", "allocator fragmentation", o.fixed.fragmentation * dynamic, kSrcFragmentation);
  }
  e.total_bytes = e.parameters_bytes + e.gradients_bytes + e.optimizer_bytes + dynamic + e.fixed_bytes;
  e.fits = e.total_bytes + e.headroom_bytes <= e.capacity_bytes;
  return e;
}

}  // namespace

MemoryEstimate estimate_memory(const ResolvedScenario& s, const MemoryOptions& o) {
  if (o.dp <= 0) throw InputError({}, 0, "dp", "data-parallel degree must be a positive integer");
  if (o.kv_buffers <= 0) throw InputError({}, 0, "kv_buffers", "K/V buffer count must be a positive integer");
  if (!(o.settings.headroom_bytes >= 0) || o.settings.headroom_bytes > 1e15)
    throw InputError({}, 0, "headroom", "headroom must be between 0 and 1e15 bytes");
  if (!s.impl.runs_precision(to_string(o.settings.precision)))
    throw InputError({}, 0, "precision",
                     "implementation '" + s.impl.name + "' does not train in " + std::string(to_string(o.settings.precision)) +
                         " (it runs " + s.impl.precisions_text() + ")");
  // fp8 needs fp8 tensor cores (Hopper and later): the hardware's peak names it or refuses.
  if (o.settings.precision == TrainingPrecision::Fp8) (void)s.hardware.peak_flops_per_s(Precision::FP8);
  const auto& pl = o.pipeline;
  pl.check(s.model.attention_only ? 0 : s.model.layers);
  if (pl.pipelined() && s.model.attention_only)
    throw InputError({}, 0, "pp", "pipeline parallelism splits a model's layers; '" + s.model.name + "' is one attention layer");
  // The first rank keeps the most activations and the embedding, the last the logits and the
  // output layer; a rank between them holds no more than the first (fewer chunks in flight, no
  // embedding).
  const MemoryEstimate first = rank_memory(s, o, 0);
  if (!pl.pipelined()) return first;
  const MemoryEstimate last = rank_memory(s, o, pl.stages - 1);
  return last.total_bytes > first.total_bytes ? last : first;
}

MemoryBreakdown memory_breakdown(const ResolvedScenario& s, const MemoryOptions& o) {
  MemoryBreakdown out;
  out.estimate = estimate_memory(s, o);  // its checks, and the rank whose bytes it reports
  (void)rank_memory(s, o, out.estimate.pipeline_rank, &out.parts);
  return out;
}

}  // namespace ringsim::models
