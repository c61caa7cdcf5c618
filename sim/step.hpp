#pragma once
// One training step of a transformer on mp rings of sp devices, as discrete events: per layer
// the non-attention ops, the attention forward ring and, in reverse layer order, the backward
// ring in which dK/dV accumulators travel with K/V. Every device has a compute stream and a
// copy engine; K/V moves over the topology's routes (max-min shared links through the Network
// where hops share links, closed-form hop times where they do not).
//
// Ring rules (per device j, successor j+1, round r of a ring pass of N rounds):
// - round r computes on the K/V block of round r; round r+1 starts when round r is done and
//   the block of round r+1 has arrived (round 0's block is the device's own);
// - buffers = 2: j forwards its round-r block while computing on it, as soon as j+1 has
//   started its round r (its other buffer is then free); buffers = 1: only once both have
//   finished computing round r (one buffer: no overlap);
// - backward: the dK/dV accumulator of a block leaves j once j has finished adding to it
//   (round complete), and a round completes only once the accumulator it adds to has arrived;
//   after the last round the accumulators travel one more hop, home;
// - no global barrier unless `sync = Barrier`, which makes every round lock-step (the
//   analytic model's assumption: the two then agree).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/catalog/resolve.hpp"
#include "sim/engine.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

enum class Sync { Async, Barrier };
enum class Granularity { Round, Tile };
// How the layers of a step go through the engine; all three give the same step (see
// simulate_step), so the choice is speed only. Where traffic kinds share links, Replay and
// PerLayer hold only while no link carries two layers' traffic at once (checked as they go);
// at the first overlap the step is simulated again as one pass.
// - Replay: a layer whose devices enter it at the same relative times as the previous
//   identical layer did repeats that layer's outcome, shifted: replayed, not simulated;
// - PerLayer: one engine pass per layer, each simulated;
// - Whole: the whole step as one engine pass.
enum class LayerPasses { Replay, PerLayer, Whole };

struct StepOptions {
  std::string topology;  // "node:G", "nodes:NxG", "torus:AxB[xC]"; empty: derived from the hardware
  std::int64_t buffers = 2;
  // Rank placement: tensor-parallel groups on consecutive devices (inside a node, as
  // practitioners place them), or rings on consecutive devices.
  MeshOrder placement = MeshOrder::MpInner;
  Sync sync = Sync::Async;
  Granularity granularity = Granularity::Round;
  double ticks_per_s = kPicosecondsPerSecond;
  bool record_trace = false;
  std::int64_t trace_event_limit = 2'000'000;  // events kept for the Chrome trace
  LayerPasses layer_passes = LayerPasses::Replay;
  // Called after each simulated engine pass with (passes done, passes planned), for progress
  // on a terminal; replayed layers are not reported (they take no time).
  std::function<void(std::int64_t, std::int64_t)> progress;
};

// One span of the Chrome trace: a lane (track) and a named interval.
struct TraceSpan {
  std::int64_t lane = 0;  // index into StepResult::lanes
  std::string name;
  double start_s = 0;
  double duration_s = 0;
  std::int64_t round = -1;  // the ring round of an attention span; -1 for every other span
};

struct LinkBytes {
  std::int64_t link = 0;
  std::string from, to;
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
};

struct StepResult {
  std::string topology;
  std::int64_t devices = 0;  // mp x sp
  std::int64_t rounds = 0;   // sp
  double step_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  // Per device: time its compute stream was busy, and the rest of the step (waiting for K/V,
  // for dK/dV, for a barrier, or for the end of the step).
  std::vector<double> busy_s, idle_s;
  // Device x round matrices (row-major, devices x rounds), summed over layers and both passes:
  // attention compute, waiting before the round could start, and the time the K/V block of the
  // round took to arrive (0 for round 0, whose block is local).
  std::vector<double> compute_s, wait_s, transfer_s;
  double exposed_communication_s = 0;  // step minus the busiest device's compute
  double imbalance = 0;                // mean over rounds of max / mean device attention compute
  std::vector<LinkBytes> link_bytes;   // links that carried anything
  std::int64_t events = 0;           // events the engine executed (replayed layers run none)
  std::int64_t passes_simulated = 0; // passes run through the engine (a pass: one layer, or the whole step)
  std::int64_t passes_reused = 0;    // layers replayed from an identical earlier one
  std::int64_t tiles_executed = 0;     // tile granularity: tiles run (= the workload's visited tiles)
  std::vector<std::string> lanes;      // trace lanes
  std::vector<TraceSpan> trace;        // empty unless record_trace
  bool trace_truncated = false;
};

// The topology a scenario runs on when none is given: one node when mp x sp fits in one
// (GPUs), several nodes of the hardware's size otherwise; a near-square torus for TPUs.
[[nodiscard]] std::string default_topology(const models::Hardware& hw, std::int64_t devices);

// Throws models::InputError for impossible options (buffers < 1, a topology that does not fit
// the mesh, zero bandwidth).
[[nodiscard]] StepResult simulate_step(const models::ResolvedScenario& s, const StepOptions& options);

}  // namespace ringsim::sim
