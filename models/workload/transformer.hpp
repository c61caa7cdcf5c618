#pragma once
// Model shapes (GQA aware) and the FLOPs and bytes of every op of one training step on one
// device, forward and backward, divided by the tensor-parallel degree mp. Attention's core
// (QK^T and PV) is not listed here: its work comes from the Workload (tiles and allowed pairs).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ringsim::models {

// Far beyond any real model; keeps every parameter and FLOP count exact in 64 bits and doubles.
inline constexpr double kMaxModelParameters = 1e15;

struct ModelConfig {
  std::string name;
  std::string description;
  std::int64_t vocab = 0;
  std::int64_t d_model = 0;
  std::int64_t d_ff = 0;
  std::int64_t layers = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::string mlp = "swiglu";    // "swiglu": 3 d_model x d_ff matrices; "gelu": 2
  bool attention_only = false;   // the `attn:HQ:HKV:D` pseudo-model: one attention layer, nothing else
  bool tied_embeddings = false;  // the LM head shares the input embedding's vocab x d_model matrix
  std::vector<std::string> sources;

  [[nodiscard]] std::int64_t mlp_matrices() const noexcept { return mlp == "swiglu" ? 3 : 2; }
  // Parameters, embeddings and LM head included (one matrix when tied_embeddings). Loading
  // checks that it fits (at most kMaxModelParameters).
  [[nodiscard]] std::int64_t parameters() const noexcept;

  [[nodiscard]] static ModelConfig from_json(const nlohmann::json& j, const std::string& file);
  [[nodiscard]] static ModelConfig load_file(const std::string& path);
  // "attn:HQ:HKV:D", e.g. attn:32:8:128.
  [[nodiscard]] static ModelConfig attention_pseudo(std::string_view spec);
  // Throws InputError when heads don't split over mp or kv heads don't divide heads.
  void check_parallelism(std::int64_t mp) const;
};

enum class Phase { Forward, Backward, Recompute };
enum class OpKind { Matmul, Memory, Collective };

// One op of a step on one device. Matmul ops carry FLOPs; memory-bound ops carry bytes moved
// through HBM; collectives carry the bytes each device contributes to an all-reduce over mp.
struct Op {
  const char* name = "";  // static names: building a step's op list allocates nothing per op
  Phase phase = Phase::Forward;
  OpKind kind = OpKind::Matmul;
  bool per_layer = true;  // repeated once per layer, else once per step
  double flops = 0;
  double bytes = 0;
  bool fp8 = false;  // a matmul on FP8 tensor cores (StepShape::fp8)
};

struct StepShape {
  std::int64_t tokens = 0;   // tokens per device per sequence (the block c)
  std::int64_t batch = 1;    // sequences per step
  std::int64_t mp = 1;       // tensor-parallel degree
  bool recompute = false;    // block rematerialisation: one more forward of every per-layer op (the
                             // attention core's recomputed forward is in CostModel::attention_bwd_s)
  std::int64_t activation_bytes = 2;  // bf16 activations
  // TransformerEngine's FP8 training (fp8_autocast around the transformer layers): the layers'
  // linear layers run in FP8, each preceded by the casts its recipe does (fp8_casts below); the
  // output layer stays in 16 bits (Megatron builds it outside TE's FP8 region), the attention
  // core too (TE's FP8 attention is a separate, off-by-default switch).
  bool fp8 = false;
};

// Every non-attention-core op of one training step on one device.
[[nodiscard]] std::vector<Op> step_ops(const ModelConfig& m, const StepShape& s);
// The same into `ops` (cleared first), so a sweep can keep one buffer.
void step_ops(const ModelConfig& m, const StepShape& s, std::vector<Op>& ops);

// Attention core FLOPs of one full (unmasked) q x k tile for all heads on one device, forward:
// QK^T and PV, 2 FLOPs per multiply-add each.
[[nodiscard]] constexpr double attention_tile_flops(std::int64_t rows, std::int64_t cols, std::int64_t head_dim,
                                                    std::int64_t heads_per_device) noexcept {
  return 4.0 * static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(head_dim) *
         static_cast<double>(heads_per_device);
}

}  // namespace ringsim::models
