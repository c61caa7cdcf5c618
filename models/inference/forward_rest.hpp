#pragma once
// The forward pass of an inference phase outside the attention core, on one device: the ops of
// models/workload/transformer.hpp's forward phase (the projections and MLP, the element-wise
// norms, RoPE and activation, and under tensor parallelism Megatron's two all-reduces per layer),
// each priced as the training step prices it (CostModel::op_s), so a prefill or decode on an
// mp x N mesh pays the same tensor-parallel collectives as a training step on it. The LM head is
// left out: an inference forward needs the logits of one position per sequence (the last), a
// matrix-vector product per sequence where training computes them for every token.
#include <cstdint>

#include "models/scenario/scenario.hpp"

namespace ringsim::models {

struct ForwardRest {
  double matmul_s = 0;         // projections and MLP, all layers
  double elementwise_s = 0;    // norms, residual adds, RoPE, the MLP activation, all layers
  double tp_collective_s = 0;  // the all-reduces over mp, all layers (0 at mp 1)
};

// `tokens` per sequence on the device, `batch` sequences (a prefill's T/N new tokens; decode's one).
[[nodiscard]] ForwardRest forward_rest(const ResolvedScenario& s, std::int64_t tokens, std::int64_t batch);

}  // namespace ringsim::models
