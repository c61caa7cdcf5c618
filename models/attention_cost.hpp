#pragma once
// The seam between what a device computes and how long it takes. An implementation's kernel
// family (Implementation::kernel) turns one device's attention work in one ring round, its Q
// block against one K/V block with that block's exact tile counts, into seconds, forward and
// backward. The analytic model and the simulator take every round's compute from here, so an
// implementation changes how work is timed in one place, and the two solvers stay in agreement.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario.hpp"

namespace ringsim::models {

// One device's attention in one round of one layer (no per-round ring overhead: that belongs
// to the ring protocol, Profile::round_overhead_s).
struct RoundCost {
  double fwd_s = 0;
  double bwd_s = 0;          // with the recomputed forward when the profile rematerialises blocks
  std::int64_t tiles = 0;    // tiles the kernel runs (the simulator's tile granularity)
};

class AttentionCost {
 public:
  virtual ~AttentionCost() = default;
  [[nodiscard]] virtual std::string_view family() const noexcept = 0;
  // The Q block of ring position q_device against the K/V block of position k_device, whose
  // counts (at the scenario's tile, over all mask heads) are `b`.
  [[nodiscard]] virtual RoundCost block(const ResolvedScenario& s, std::int64_t q_device, std::int64_t k_device,
                                        const BlockStats& b) const = 0;
};

// The kernel family named by an implementation; InputError (field "kernel") naming the known ones.
[[nodiscard]] std::shared_ptr<const AttentionCost> make_attention_cost(std::string_view family);
[[nodiscard]] std::vector<std::string> attention_cost_families();

// The cost of round `round` of the scenario's ring over its devices: the busiest device's forward
// and backward (a lock-step round lasts that long) and the means. Visits the workload's block
// classes, not every device, so it stays cheap at 65536 devices.
struct RoundCostSummary {
  double fwd_max_s = 0, bwd_max_s = 0;
  double fwd_mean_s = 0, bwd_mean_s = 0;
};
[[nodiscard]] RoundCostSummary round_cost(const ResolvedScenario& s, std::int64_t round);

}  // namespace ringsim::models
