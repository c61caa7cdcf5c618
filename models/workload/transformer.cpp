#include "models/workload/transformer.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"
#include "models/io/names.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {

std::int64_t ModelConfig::parameters() const noexcept {
  if (attention_only) return 0;
  const std::int64_t attn = d_model * (heads + 2 * kv_heads) * head_dim + heads * head_dim * d_model;
  const std::int64_t mlp_p = mlp_matrices() * d_model * d_ff;
  return layers * (attn + mlp_p + 2 * d_model) + (tied_embeddings ? 1 : 2) * vocab * d_model + d_model;
}

ModelConfig ModelConfig::from_json(const nlohmann::json& j, const std::string& file) {
  JsonFields f(j, file);
  ModelConfig m;
  m.name = f.string("name");
  try {
    check_catalog_name(m.name, "name", "model");
  } catch (const InputError& e) {
    throw e.located(file, 0);
  }
  m.description = f.string_or("description", "");
  // Counts: integers, in ranges far beyond any real model (see kMaxModelParameters).
  m.vocab = f.count_sourced("vocab", 1, std::int64_t{1} << 26);
  m.d_model = f.count_sourced("d_model", 1, std::int64_t{1} << 20);
  m.d_ff = f.count_sourced("d_ff", 1, std::int64_t{1} << 22);
  m.layers = f.count_sourced("layers", 1, std::int64_t{1} << 14);
  m.heads = f.count_sourced("heads", 1, std::int64_t{1} << 16);
  m.kv_heads = f.find("kv_heads") ? f.count_sourced("kv_heads", 1, m.heads) : m.heads;
  if (f.find("head_dim")) {
    m.head_dim = f.count_sourced("head_dim", 1, std::int64_t{1} << 16);
  } else {
    if (m.d_model % m.heads != 0)
      throw InputError(file, 0, "head_dim",
                       "absent, and d_model (" + std::to_string(m.d_model) + ") is not a multiple of heads (" +
                           std::to_string(m.heads) + "): give head_dim");
    m.head_dim = m.d_model / m.heads;
  }
  m.mlp = f.one_of_or("mlp", {"swiglu", "gelu"}, "swiglu");
  m.tied_embeddings = f.boolean_or("tied_embeddings", false);
  if (m.heads % m.kv_heads != 0)
    throw InputError(file, 0, "kv_heads", "heads (" + std::to_string(m.heads) + ") must be a multiple of kv_heads");
  // The same sum as parameters(), in doubles: it must stay exact in 64-bit integers.
  const double d = static_cast<double>(m.d_model), hd = static_cast<double>(m.head_dim);
  const double per_layer = d * static_cast<double>(m.heads + 2 * m.kv_heads) * hd +
                           static_cast<double>(m.heads) * hd * d +
                           static_cast<double>(m.mlp_matrices()) * d * static_cast<double>(m.d_ff) + 2 * d;
  const double params = static_cast<double>(m.layers) * per_layer + 2 * static_cast<double>(m.vocab) * d + d;
  if (!(params <= kMaxModelParameters)) {
    char text[96];
    std::snprintf(text, sizeof text, "the model would have %.3g parameters, more than the %.3g ringsim models", params,
                  kMaxModelParameters);
    throw InputError(file, 0, "layers", text);
  }
  if (j.contains("sources") && j["sources"].is_array())
    for (const auto& s : j["sources"])
      if (s.is_string()) m.sources.push_back(s.get<std::string>());
  f.reject_unread("model file");
  return m;
}

ModelConfig ModelConfig::load_file(const std::string& path) { return from_json(read_json_file(path), path); }

ModelConfig ModelConfig::attention_pseudo(std::string_view spec) {
  const auto parts = split(spec, ':');
  if (parts.size() != 4 || parts[0] != "attn")
    throw InputError({}, 0, "model", "expected attn:HQ:HKV:D (e.g. attn:32:8:128), got '" + std::string(spec) + "'");
  ModelConfig m;
  m.name = std::string(spec);
  m.description = "one attention layer (no projections, MLP or LM head)";
  m.heads = parse_positive_int(parts[1], "model");
  m.kv_heads = parse_positive_int(parts[2], "model");
  m.head_dim = parse_positive_int(parts[3], "model");
  // The same ranges as a model file's heads and head_dim.
  if (m.heads > (std::int64_t{1} << 16) || m.head_dim > (std::int64_t{1} << 16))
    throw InputError({}, 0, "model",
                     "heads and head_dim of " + std::string(spec.substr(0, 60)) + " must be at most 65536");
  if (m.heads % m.kv_heads != 0)
    throw InputError({}, 0, "model", "query heads (" + parts[1] + ") must be a multiple of kv heads (" + parts[2] + ")");
  m.d_model = m.heads * m.head_dim;
  m.layers = 1;
  m.attention_only = true;
  return m;
}

void ModelConfig::check_parallelism(std::int64_t mp) const {
  if (mp <= 0) throw InputError({}, 0, "mp", "tensor-parallel degree must be positive");
  if (heads % mp != 0)
    throw InputError({}, 0, "mp",
                     "model " + name + " has " + std::to_string(heads) + " heads, not divisible by mp = " +
                         std::to_string(mp));
  // KV heads are replicated when mp exceeds them (as Megatron does), so no check there.
}

std::vector<Op> step_ops(const ModelConfig& m, const StepShape& s) {
  std::vector<Op> ops;
  step_ops(m, s, ops);
  return ops;
}

void step_ops(const ModelConfig& m, const StepShape& s, std::vector<Op>& ops) {
  ops.clear();
  if (m.attention_only) return;
  const double t = static_cast<double>(s.tokens) * static_cast<double>(s.batch);
  const double mp = static_cast<double>(s.mp);
  const double d = static_cast<double>(m.d_model);
  const double hd = static_cast<double>(m.head_dim);
  const double q_width = static_cast<double>(m.heads) * hd;
  const double kv_width = static_cast<double>(m.kv_heads) * hd;
  const double ff = static_cast<double>(m.d_ff);
  const double act = static_cast<double>(s.activation_bytes);

  ops.reserve(24);
  auto matmul = [&](const char* name, double flops_fwd, bool per_layer) {
    ops.push_back({name, Phase::Forward, OpKind::Matmul, per_layer, flops_fwd, 0});
    if (s.recompute && per_layer) ops.push_back({name, Phase::Recompute, OpKind::Matmul, per_layer, flops_fwd, 0});
    // Gradients w.r.t. inputs and weights: two matmuls of the forward's size.
    ops.push_back({name, Phase::Backward, OpKind::Matmul, per_layer, 2 * flops_fwd, 0});
  };
  auto memory = [&](const char* name, double bytes_fwd) {
    ops.push_back({name, Phase::Forward, OpKind::Memory, true, 0, bytes_fwd});
    if (s.recompute) ops.push_back({name, Phase::Recompute, OpKind::Memory, true, 0, bytes_fwd});
    ops.push_back({name, Phase::Backward, OpKind::Memory, true, 0, 2 * bytes_fwd});
  };

  matmul("qkv_proj", 2 * t * d * (q_width + 2 * kv_width) / mp, true);
  matmul("out_proj", 2 * t * q_width * d / mp, true);
  matmul("mlp", 2 * t * d * ff * static_cast<double>(m.mlp_matrices()) / mp, true);
  if (s.fp8) {
    for (auto& op : ops) op.fp8 = op.kind == OpKind::Matmul;
    // TransformerEngine's FP8 linear layers (NVIDIA/TransformerEngine @ d0067d0,
    // transformer_engine/pytorch/module/linear.py: input_quantizer with rowwise and columnwise
    // usage when the backward needs the input, grad_output_quantizer likewise): the forward casts
    // each GEMM input to FP8 and keeps a transposed FP8 copy for the weight-gradient GEMM (one
    // fused cast-transpose: read 2 bytes, write 1 + 1 per element); the backward does the same to
    // each output gradient. Inputs: the QKV and first MLP GEMMs' (the normed layer input, d per token;
    // gate and up share theirs), the output projection's (the attention output) and the last MLP
    // GEMM's (d_ff); output gradients: the same GEMMs' outputs. Weight casts (once per step) and
    // the amax reductions are left out: per-parameter, not per-token.
    const double inputs = t * (2 * d / mp + q_width / mp + ff / mp);
    const double outputs = t * ((q_width + 2 * kv_width) / mp + d + ff * static_cast<double>(m.mlp_matrices() - 1) / mp + d);
    ops.push_back({"fp8_casts", Phase::Forward, OpKind::Memory, true, 0, 4 * inputs});
    if (s.recompute) ops.push_back({"fp8_casts", Phase::Recompute, OpKind::Memory, true, 0, 4 * inputs});
    ops.push_back({"fp8_casts", Phase::Backward, OpKind::Memory, true, 0, 4 * outputs});
  }
  // Element-wise work (two RMSNorms, RoPE, two residual adds, the MLP activation): read and
  // write each tensor once; it is bandwidth-bound, so it costs bytes, not FLOPs.
  memory("norms_residuals", 4 * 2 * t * d * act);
  memory("rope", 2 * t * (q_width + kv_width) / mp * act);
  memory("mlp_activation", 3 * t * ff / mp * act);
  matmul("lm_head", 2 * t * d * static_cast<double>(m.vocab) / mp, false);

  if (s.mp > 1) {
    // Megatron tensor parallelism: one all-reduce of the layer's activations after the
    // attention block and one after the MLP, forward; the same two in backward. Separate ops:
    // each pays its own per-step latencies.
    const double bytes = t * d * act;
    for (const auto phase : {Phase::Forward, Phase::Backward}) {
      ops.push_back({"tp_allreduce_attn", phase, OpKind::Collective, true, 0, bytes});
      ops.push_back({"tp_allreduce_mlp", phase, OpKind::Collective, true, 0, bytes});
    }
  }
}

}  // namespace ringsim::models
