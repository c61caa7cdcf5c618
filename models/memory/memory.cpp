#include "models/memory/memory.hpp"

#include "models/program/program.hpp"

#include <algorithm>

#include "models/io/error.hpp"

namespace ringsim::models {

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
  }
  return "none";
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
  throw InputError({}, 0, "recompute", "expected none, selective or full, got '" + std::string(t) + "'");
}

MemoryOptions MemoryOptions::from_profile(const ResolvedScenario& s) {
  MemoryOptions o;
  o.recompute = s.profile.recompute ? Recompute::Full : Recompute::None;
  o.sharding = Sharding::Zero3;
  return o;
}

std::vector<MemoryTerm> MemoryEstimate::terms() const {
  return {{"parameters", parameters_bytes}, {"gradients", gradients_bytes}, {"optimizer", optimizer_bytes},
          {"activations", activations_bytes}, {"workspace", workspace_bytes}, strategy};
}

MemoryTerm MemoryEstimate::largest_term() const {
  const auto all = terms();
  return *std::max_element(all.begin(), all.end(),
                           [](const MemoryTerm& a, const MemoryTerm& b) { return a.bytes < b.bytes; });
}

namespace {
constexpr double kActivationBytes = 2;  // bf16
}

double activation_bytes_per_token_layer(const ModelConfig& m, std::int64_t mp, Recompute r) noexcept {
  const double d = static_cast<double>(m.d_model);
  const double p = static_cast<double>(mp);
  const double q = static_cast<double>(m.heads * m.head_dim) / p;
  const double kv = static_cast<double>(m.kv_heads * m.head_dim) / p;
  const double f = static_cast<double>(m.d_ff) / p;
  // The attention kernel's backward needs Q, K, V (after RoPE), its output O and the fp32
  // log-sum-exp per query row and head; nothing of size c x c is kept (tiled kernels recompute
  // the scores in the backward).
  const double attention = kActivationBytes * (q + 2 * kv) + kActivationBytes * q +
                           4.0 * static_cast<double>(m.heads) / p;
  if (m.attention_only) return r == Recompute::Full ? kActivationBytes * (q + 2 * kv) : attention;
  switch (r) {
    case Recompute::Full:
      return kActivationBytes * d;  // the layer's input (its residual stream) only
    case Recompute::Selective: {
      // Matmul outputs kept, norms and element-wise ops recomputed: the layer input, Q/K/V/O,
      // the attention projection's output (to rebuild the residual), and the MLP's first
      // matmul outputs (gate and up for SwiGLU, fc1 for GELU).
      const double mlp = kActivationBytes * f * (m.mlp_matrices() == 3 ? 2.0 : 1.0);
      return 2 * kActivationBytes * d + attention + mlp;
    }
    case Recompute::None: {
      // Two norms' inputs and outputs (the outputs are the QKV and MLP matmul inputs), not
      // split by tensor parallelism; the attention tensors; the MLP's intermediates (SwiGLU:
      // gate, up and their product, the down matmul's input; GELU: fc1 output and GELU output).
      const double mlp = kActivationBytes * f * (m.mlp_matrices() == 3 ? 3.0 : 2.0);
      return 4 * kActivationBytes * d + attention + mlp;
    }
  }
  return 0;
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

MemoryEstimate estimate_memory(const ResolvedScenario& s, const MemoryOptions& o) {
  if (o.dp <= 0) throw InputError({}, 0, "dp", "data-parallel degree must be a positive integer");
  if (o.kv_buffers <= 0) throw InputError({}, 0, "kv_buffers", "K/V buffer count must be a positive integer");
  const auto& m = s.model;
  const double mp = static_cast<double>(s.spec.mp);
  MemoryEstimate e;
  e.capacity_bytes = s.hardware.hbm_bytes;

  // Model states in mixed precision with Adam: bf16 weights (2 B), bf16 gradients (2 B), fp32
  // master weights, momentum and variance (12 B) per parameter of this tensor-parallel rank.
  const double params = static_cast<double>(m.parameters()) / mp;
  const double group = static_cast<double>(o.dp) * (o.shard_over_cp ? static_cast<double>(s.spec.sp) : 1.0);
  const auto shard = [&](Sharding from) { return o.sharding >= from ? group : 1.0; };
  e.optimizer_bytes = 12 * params / shard(Sharding::Zero1);
  e.gradients_bytes = 2 * params / shard(Sharding::Zero2);
  e.parameters_bytes = 2 * params / shard(Sharding::Zero3);
  if (o.sharding == Sharding::Zero3 && group > 1 && m.layers > 0) {
    // ZeRO-3 / FSDP gather one layer's weights before using it and prefetch the next one.
    const double embeddings = 2.0 * static_cast<double>(m.vocab * m.d_model) / mp;
    const double layer = (params - embeddings) / static_cast<double>(m.layers);
    e.parameters_bytes += 2 * 2 * layer;
  }

  // Tokens this device holds: its block of the sequence, times the sequences of a step.
  const double tokens = static_cast<double>(s.layout->block()) * static_cast<double>(s.spec.batch);
  const double layers = static_cast<double>(m.layers);
  e.activations_bytes = tokens * layers * activation_bytes_per_token_layer(m, s.spec.mp, o.recompute);
  // The layer being recomputed holds all its activations during its backward.
  if (o.recompute == Recompute::Full)
    e.activations_bytes += tokens * activation_bytes_per_token_layer(m, s.spec.mp, Recompute::None);
  // Logits of the vocabulary-parallel LM head, upcast to fp32 for the cross-entropy, which keeps
  // them (its softmax) for the backward: 4 bytes per token and vocabulary entry of this rank. A
  // fused, chunked loss (logits never materialised) would save this term.
  if (!m.attention_only) e.activations_bytes += tokens * static_cast<double>(m.vocab) / mp * 4;

  // The attention kernel: fp32 output (forward) or dQ (backward) accumulator and the running
  // max and sum per row, plus one tile of fp32 scores and probabilities (an upper bound for
  // kernels that keep the tile on chip).
  const double heads = static_cast<double>(s.cost->heads_per_device());
  const double q_width = heads * static_cast<double>(m.head_dim);
  e.workspace_bytes = tokens * (4 * q_width + 8 * heads) +
                      2 * 4 * static_cast<double>(s.tile.q) * static_cast<double>(s.tile.k) * heads *
                          static_cast<double>(s.spec.batch);

  e.strategy = strategy_memory(s, o.kv_buffers);
  e.total_bytes = e.parameters_bytes + e.gradients_bytes + e.optimizer_bytes + e.activations_bytes + e.workspace_bytes +
                  e.strategy.bytes;
  e.fits = e.total_bytes <= e.capacity_bytes;
  return e;
}

}  // namespace ringsim::models
