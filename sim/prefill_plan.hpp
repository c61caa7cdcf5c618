#pragma once
// What the prefill simulation (sim/prefill_sim.hpp) runs, taken from the analytic prediction
// (models/inference/prefill.hpp) so that both charge the same work: each device's attention
// calls per round, timed by the kernel-time model, and the projections, MLP and pass-Q's merge;
// only the transfers come from the simulator's links (sim/ring_hop.hpp), hop by hop, and only the
// order in which things wait for each other is the simulator's own.
#include <cstdint>
#include <string>
#include <vector>

#include "models/inference/prefill.hpp"
#include "sim/ring_hop.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

struct PrefillRingPlan {
  models::PrefillVariant variant = models::PrefillVariant::PassKV;
  std::int64_t devices = 1;  // the ring's N; also its rounds per layer
  std::int64_t layers = 1;
  // [device][round]: the round's attention calls (pass-KV with their running merges), summed
  // in issue order as the analytic model sums them.
  std::vector<std::vector<double>> compute_s;
  std::vector<HopLink> hops;  // [device]: the hop to its successor on the ring
  double message_bytes = 0;   // sent over each hop in every round but the last
  double return_bytes = 0;    // pass-Q: partial outputs each device returns, one all-to-all per layer (0: none)
  // pass-Q: the all-to-all's seconds where the analytic model priced it as NCCL's all-to-all over
  // the scenario's transport (the step simulator's collectives on such machines likewise last
  // what the transport says: it shares the machine's resources, which the topology graph does not
  // describe); negative: each device's hop time of return_bytes, the slowest ending it.
  double exchange_s = -1;
  double merge_s = 0;         // pass-Q: merging them, after the all-to-all
  // One layer's projections, MLP and element-wise ops on a device, and its tensor-parallel
  // all-reduces, which the layer waits for (the same on every device).
  double other_layer_s = 0;
  std::string topology;       // canonical spec of the topology the hops run over
};

// Throws models::InputError (field "sp") when simulating a prefill over `n` devices (N x N
// rounds per layer) would not fit this machine's memory or would take more engine events than
// kDefaultMaxEvents: checked by plan_prefill before anything N x N is allocated.
void check_prefill_sim_size(const models::ResolvedScenario& s, std::int64_t n);

// The mp rings of a mesh are identical and, on GPUs with a NIC each, on links of their own: the
// first ring is planned (its hops: RingEmbedding's ring 0). Throws models::InputError for a
// topology that does not fit the mesh (field "topology").
[[nodiscard]] PrefillRingPlan plan_prefill(const models::ResolvedScenario& s, const models::PrefillPrediction& p,
                                           const std::string& topology = {}, MeshOrder placement = MeshOrder::MpInner);

}  // namespace ringsim::sim
