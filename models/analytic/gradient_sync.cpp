#include "models/analytic/gradient_sync.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace ringsim::models {

GradientSync gradient_sync(const ResolvedScenario& s, std::int64_t dp, Sharding zero, double hiding_s, double parameters,
                           std::int64_t micro_batches) {
  GradientSync g;
  const double m = static_cast<double>(std::max<std::int64_t>(1, micro_batches));
  g.windows = zero == Sharding::Zero3 ? m : 1.0;
  const auto finish = [&] {
    g.gather_s *= m;
    g.total_s = g.gather_s + g.reduce_s;
    g.exposed_s = g.exposed_with(hiding_s);
    return g;
  };
  const auto& spec = s.spec;
  const double group = static_cast<double>(dp * spec.sp);
  if (group <= 1 || s.model.attention_only) return g;
  const bool inter = dp * spec.mp * spec.sp > s.hardware.devices_per_node;
  const double weights = parameters < 0 ? static_cast<double>(s.model.parameters()) : parameters;
  const double bytes = 2.0 * weights / static_cast<double>(spec.mp);
  if (const auto* t = s.cost->transport()) {
    // NCCL over the fabric of every replica's devices, each tensor-parallel rank's group of the
    // dp x sp ranks at once: an all-reduce (reduce-scatter and all-gather), or with ZeRO-3 the
    // parameters gathered twice (forward and backward) and the gradients reduce-scattered.
    const std::int64_t mp = spec.mp, ranks = dp * spec.sp, devices = dp * spec.mp * spec.sp;
    // Beyond three nodes a ring's and a tree's rates no longer depend on the node count
    // (CollectivePlan::resized): price the group on three nodes' worth of ranks and resize it.
    const std::int64_t per_node = std::max<std::int64_t>(1, t->fabric().machine().gpus);
    const std::int64_t nodes = (devices + per_node - 1) / per_node;
    std::int64_t priced = devices;
    if (nodes > 3) priced = std::min(devices, (3 * per_node + mp - 1) / mp * mp);
    const std::int64_t priced_ranks = priced / mp;
    const auto& wide = t->widened(priced);
    auto groups = [&] {
      std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(mp));
      for (std::int64_t k = 0; k < mp; ++k)
        for (std::int64_t r = 0; r < priced_ranks; ++r) out[static_cast<std::size_t>(k)].push_back(r * mp + k);
      return out;
    };
    std::string key = "|";
    key += std::to_string(priced_ranks);
    key += '|';
    key += std::to_string(mp);
    auto time = [&](const char* name, transport::Collective kind) {
      const auto& plan = wide.plan(name + key, kind, groups);
      return (nodes > 3 ? plan.resized(ranks, nodes) : plan).time(bytes).seconds;
    };
    if (zero == Sharding::Zero3) {
      g.gather_s = 2 * time("grad-ag", transport::Collective::AllGather);
      g.reduce_s = time("grad-rs", transport::Collective::ReduceScatter);
    } else {
      g.reduce_s = time("grad-ar", transport::Collective::AllReduce);
    }
    return finish();
  }
  const double pass = (group - 1) / group * bytes / s.cost->link_bandwidth_bytes_per_s(inter) +
                      (group - 1) * s.cost->link_latency_s(inter);
  // ZeRO-3: two all-gathers and a reduce-scatter, one pass each; else an all-reduce, two passes.
  g.gather_s = zero == Sharding::Zero3 ? 2 * pass : 0.0;
  g.reduce_s = zero == Sharding::Zero3 ? pass : 2 * pass;
  return finish();
}

}  // namespace ringsim::models
