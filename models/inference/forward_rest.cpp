#include "models/inference/forward_rest.hpp"

#include <algorithm>
#include <vector>

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
  for (const Op& op : ops) {
    if (op.phase != Phase::Forward || !op.per_layer) continue;  // the LM head is per step (header)
    const double t = s.cost->op_s(op, mp_inter) * layers;
    switch (op.kind) {
      case OpKind::Matmul: r.matmul_s += t; break;
      case OpKind::Memory: r.elementwise_s += t; break;
      case OpKind::Collective: r.tp_collective_s += t; break;
    }
  }
  return r;
}

}  // namespace ringsim::models
