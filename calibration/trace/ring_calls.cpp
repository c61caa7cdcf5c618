#include "calibration/trace/ring_calls.hpp"

#include "models/io/error.hpp"

namespace ringsim::calibration {

std::vector<std::vector<RingCall>> ring_kernel_calls(const models::ResolvedScenario& s) {
  using models::InputError;
  if (s.strategy.kind != models::StrategyKind::Ring || s.ring_part)
    throw InputError({}, 0, "cp", "a trace is matched to a ring's kernel calls: use --cp ring (got " + s.strategy.spec + ")");
  const auto& proto = s.impl.protocol.ring_steps;
  const models::StepCalls* plan = proto.plan(models::effective_mask_family(s.spec), s.spec.layout.family_name());
  if (!s.impl.kernel_model || !plan)
    throw InputError({}, 0, "impl",
                     "implementation " + s.impl.name + " has no per-step kernel shapes for this mask and layout "
                     "(configs/ring_steps/); a trace is matched to a flash ring's calls (ring-flash-attn, te-p2p, ...)");
  const auto rates = models::KernelRates::of(s.hardware, s.profile);
  const std::int64_t n = s.spec.sp, c = s.layout->block();
  std::vector<std::vector<RingCall>> out(static_cast<std::size_t>(n));
  for (std::int64_t d = 0; d < n; ++d)
    for (std::int64_t r = 0; r < n; ++r) {
      const std::int64_t k_device = ((d - r) % n + n) % n;
      for (const models::StepCall& sc : plan->of(models::step_class(d, k_device))) {
        const std::int64_t q = sc.q.of(c), k = sc.k.of(c);
        if (!sc.kernel || q <= 0 || k <= 0) continue;
        RingCall rc;
        rc.round = r;
        // FlashAttention >= 2.1 aligns a causal call's diagonal bottom-right when q and k differ.
        rc.call = models::KernelCall{q, k, sc.causal, k - q, s.cost->heads_per_device(), s.cost->kv_heads_per_device(),
                                     s.spec.batch, s.model.head_dim};
        rc.time = models::flash_call_time(*s.impl.kernel_model, rates, rc.call);
        out[static_cast<std::size_t>(d)].push_back(rc);
      }
    }
  return out;
}

}  // namespace ringsim::calibration
