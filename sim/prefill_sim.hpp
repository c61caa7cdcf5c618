#pragma once
// A context-parallel prefill (models/inference/prefill.hpp: pass-KV or pass-Q over a ring of N
// devices) as discrete events, on the step simulator's engine and links. Per layer and device:
// the layer's projections and MLP, then N rounds; in round r the device runs its calls of that
// round and posts the block it holds (K/V or queries) to its successor. The transfer leaves once
// the successor has started round r too (its other buffer is free: the training ring's rule with
// two buffers, sim/pass_sim.hpp), so a hop carries one message at a time, and takes the hop's
// time over the topology (sim/ring_hop.hpp). Round r + 1 starts on a device when its round r is
// computed and the block of round r + 1 has arrived. pass-Q then returns the partial outputs in
// an all-to-all (a collective: it starts when every device has finished its ring and sent its
// last block, and all leave when the slowest device's partials are out) and merges them.
//
// Sync::Async lets every device go as soon as those rules allow; Sync::Barrier also holds every
// round until all devices are ready for it: lock-step rounds, the analytic model's assumption,
// under which the two agree (tests/sim/test_prefill_sim.cpp). Every rule is a maximum of sums of
// fixed durations, and the barrier only adds terms to the maxima: async is never slower.
#include <cstdint>
#include <string>
#include <vector>

#include "models/inference/prefill.hpp"
#include "sim/engine.hpp"
#include "sim/prefill_plan.hpp"
#include "sim/step.hpp"

namespace ringsim::sim {

// What one run of the plan gives.
struct PrefillRun {
  double end_s = 0;             // the last device done with the last layer
  std::vector<double> busy_s;   // per device: its compute stream busy (calls, merges, projections and MLP)
  std::int64_t events = 0;
};

// Runs `plan` through the engine; ticks_per_s sets the clock's resolution (engine.hpp).
[[nodiscard]] PrefillRun run_prefill_ring(const PrefillRingPlan& plan, Sync sync, double ticks_per_s = kPicosecondsPerSecond);

struct PrefillSimOptions {
  Sync sync = Sync::Async;
  double ticks_per_s = kPicosecondsPerSecond;
  std::string topology;  // empty: default_topology of the mesh
  MeshOrder placement = MeshOrder::MpInner;
};

struct PrefillSimResult {
  models::PrefillVariant variant = models::PrefillVariant::PassKV;
  std::string topology;
  std::int64_t devices = 0, layers = 0;
  double layer_s = 0;          // one layer's attention alone: the ring, pass-Q's all-to-all and merge
  double ttft_s = 0;           // the whole forward: every layer, with its projections and MLP
  double busiest_s = 0;        // the busiest device's compute over the forward
  double exposed_s = 0;        // ttft_s - busiest_s: waiting for blocks, the all-to-all, barriers
  std::int64_t events = 0;     // of the whole forward
  models::PrefillPrediction analytic;  // the lock-step closed form of the same prefill
};

// Throws models::InputError where predict_prefill does, and for a topology that does not fit.
[[nodiscard]] PrefillSimResult simulate_prefill(const models::ResolvedScenario& s, std::int64_t cached_tokens,
                                                models::PrefillVariant variant, const PrefillSimOptions& options = {});

}  // namespace ringsim::sim
