#include "cli/validate_core.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "cli/gpu_common.hpp"
#include "kernels/workload_schedule.hpp"
#include "models/analytic/analytic.hpp"
#include "models/io/error.hpp"

namespace ringsim::cli {

using models::InputError;

void check_kernel_scenario(const models::ResolvedScenario& s) {
  // The kernel has no batch dimension, and the model's per-round time covers the whole batch.
  if (s.spec.batch != 1) throw InputError({}, 0, "batch", "validate runs one sequence per step (--batch 1)");
  const auto mp = s.spec.mp;
  if (s.model.heads % mp != 0 || s.model.kv_heads % mp != 0)
    throw InputError({}, 0, "mesh", "validate needs heads and kv heads divisible by mp (no replicated K/V heads)");
  if (s.model.head_dim != 64 && s.model.head_dim != 128)
    throw InputError({}, 0, "model", "the kernel supports head_dim 64 or 128, got " + std::to_string(s.model.head_dim));
  (void)kernels::mask_rule(s.workload->mask());
}

Validation run_validation(const models::ResolvedScenario& s, const ValidateOptions& o,
                          calibration::CuptiCollector& collector) {
  check_kernel_scenario(s);
  const auto mp = s.spec.mp;

  Validation v;
  v.q_heads = static_cast<std::int32_t>(s.model.heads / mp);
  v.kv_heads = static_cast<std::int32_t>(s.model.kv_heads / mp);
  v.head_dim = static_cast<std::int32_t>(s.model.head_dim);
  const auto& w = *s.workload;
  const auto block = s.layout->block();
  const auto prediction = models::predict(s);

  // Every device's blocks are the same size, so one set of buffers serves the whole ring.
  gpu::AttentionBuffers buffers(o.dtype, block, block, v.q_heads, v.kv_heads, v.head_dim, o.seed);
  for (std::int64_t r = 0; r < w.rounds(); ++r) {
    RoundValidation rv;
    rv.round = r;
    rv.predicted_max_s = static_cast<std::size_t>(r) < prediction.rounds_fwd.size()
                             ? prediction.rounds_fwd[static_cast<std::size_t>(r)].compute_max_s
                             : 0.0;
    double sum = 0;
    for (std::int64_t d = 0; d < w.devices(); ++d) {
      const auto schedule = kernels::schedule_from_workload(w, r, d);
      double t = 0;
      if (!schedule.items.empty()) {
        const kernels::cuda::ScheduleBuffer device_schedule(schedule);
        const calibration::LaunchTag tag{static_cast<std::int32_t>(r), static_cast<std::int32_t>(d), schedule.tile_q,
                                         schedule.tile_k, "validate " + s.layout->name() + " " + s.mask->name()};
        t = gpu::median(gpu::time_launches(collector, buffers.args(device_schedule), tag, o.warmup, o.repeats));
      }
      rv.device_s.push_back(t);
      sum += t;
      if (t > rv.measured_max_s) {
        rv.measured_max_s = t;
        rv.argmax_device = d;
      }
    }
    rv.measured_mean_s = sum / static_cast<double>(w.devices());
    v.measured_step_s += rv.measured_max_s;
    v.predicted_step_s += rv.predicted_max_s;
    v.rounds.push_back(std::move(rv));
  }
  return v;
}

double error_pct(double predicted_s, double measured_s) noexcept {
  if (!(measured_s > 0)) return std::numeric_limits<double>::quiet_NaN();
  return (predicted_s / measured_s - 1.0) * 100.0;
}

}  // namespace ringsim::cli
