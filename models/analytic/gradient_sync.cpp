#include "models/analytic/gradient_sync.hpp"

#include <algorithm>

namespace ringsim::models {

GradientSync gradient_sync(const ResolvedScenario& s, std::int64_t dp, Sharding zero, double hiding_s) {
  GradientSync g;
  const auto& spec = s.spec;
  const double group = static_cast<double>(dp * spec.sp);
  if (group <= 1 || s.model.attention_only) return g;
  const bool inter = dp * spec.mp * spec.sp > s.hardware.devices_per_node;
  const double bytes = 2.0 * static_cast<double>(s.model.parameters()) / static_cast<double>(spec.mp);
  const double passes = zero == Sharding::Zero3 ? 3.0 : 2.0;
  g.total_s = passes * (group - 1) / group * bytes / s.cost->link_bandwidth_bytes_per_s(inter) +
              passes * (group - 1) * s.cost->link_latency_s(inter);
  g.exposed_s = std::max(0.0, g.total_s - hiding_s);
  return g;
}

}  // namespace ringsim::models
