#include "models/analytic/training_step.hpp"

namespace ringsim::models {

TrainingStep training_step(const ResolvedScenario& s, const Prediction& p, const TrainingOptions& o) {
  TrainingStep t;
  t.recompute = o.policy(s.profile);
  MemoryOptions mo;
  mo.dp = o.dp;
  mo.sharding = o.zero;
  mo.recompute = t.recompute;
  mo.kv_buffers = o.kv_buffers;
  mo.settings = o.memory;
  t.memory = estimate_memory(s, mo);
  t.sync = gradient_sync(s, o.dp, o.zero, p.attention_bwd_s);
  t.step_s = p.step_s + t.sync.exposed_s;
  t.scale = t.step_s / p.step_s;
  t.tokens_per_s =
      static_cast<double>(o.dp) * static_cast<double>(s.spec.n_seq) * static_cast<double>(s.spec.batch) / t.step_s;
  t.mfu = p.mfu * p.step_s / t.step_s;
  return t;
}

}  // namespace ringsim::models
