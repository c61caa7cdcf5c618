#include "models/inference/forward_rest.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include "models/workload/inference_formats.hpp"
#include "models/workload/transformer.hpp"

namespace ringsim::models {

ForwardRest forward_rest(const ResolvedScenario& s, std::int64_t tokens, std::int64_t batch) {
  ForwardRest r;
  if (s.model.attention_only) return r;  // the attn:HQ:HKV:D pseudo-model has no layer around its attention
  StepShape shape;
  shape.tokens = tokens;
  shape.batch = batch;
  shape.mp = s.spec.mp;
  shape.recompute = false;  // inference keeps nothing for a backward
  const bool mp_inter = s.tp_crosses_nodes();
  const double layers = static_cast<double>(std::max<std::int64_t>(1, s.model.layers));
  thread_local std::vector<Op> ops;  // sweeps price many points: one buffer per thread, as step_rest
  step_ops(s.model, shape, ops);
  // Blocks whose feed-forward products run in FP8 (models/workload/inference_formats.hpp: fp8-ffn), each
  // quantizing its inputs per token first: read bf16, write FP8 (fc_dynamic's quantize_fp8_per_row
  // before every FP8 GEMM: the block input once per gate/up matrix, the activation once).
  const auto fp8_layers = static_cast<double>(fp8_ffn_layers(s.model, s.spec.formats.weights));
  if (fp8_layers > 0) {
    const double t = static_cast<double>(tokens) * static_cast<double>(batch);
    const double quantized = t * (static_cast<double>(s.model.mlp_matrices() - 1) * static_cast<double>(s.model.d_model) +
                                  static_cast<double>(s.model.d_ff) / static_cast<double>(s.spec.mp));
    r.elementwise_s += s.cost->op_s({"fp8_quantize", Phase::Forward, OpKind::Memory, true, 0, 3 * quantized}, mp_inter) * fp8_layers;
  }
  for (const Op& op : ops) {
    if (op.phase != Phase::Forward || !op.per_layer) continue;  // the LM head is per step (header)
    double t = s.cost->op_s(op, mp_inter) * layers;
    if (fp8_layers > 0 && op.kind == OpKind::Matmul && std::string_view(op.name) == "mlp") {
      Op fp8 = op;
      fp8.fp8 = true;
      t = s.cost->op_s(op, mp_inter) * (layers - fp8_layers) + s.cost->op_s(fp8, mp_inter) * fp8_layers;
    }
    switch (op.kind) {
      case OpKind::Matmul: r.matmul_s += t; break;
      case OpKind::Memory: r.elementwise_s += t; break;
      case OpKind::Collective: r.tp_collective_s += t; break;
    }
  }
  return r;
}

}  // namespace ringsim::models
