#pragma once
// A synthetic PyTorch-profiler trace of a ring run, one file per rank, written from ringsim's own
// model with planted parameters: every attention kernel lasts what the kernel-time model gives
// under the scenario's profile (set the planted efficiencies there), every point-to-point transfer
// latency + bytes / bandwidth of the planted link. Rounds are in lock-step over the ranks (a round
// ends when its busiest rank's kernels and its transfers end), as a ring waits for its slowest
// position. What a calibration must recover is known exactly: the profile, the link, and each
// rank's exposed communication per step. The tests' oracle, and `ringsim trace synthesize`: the
// traces the trace commands expect, to try them without a GPU.
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace ringsim::calibration {

struct PlantedLink {
  double latency_s = 0;
  double bandwidth_bytes_per_s = 0;
  [[nodiscard]] double seconds(double bytes) const { return latency_s + bytes / bandwidth_bytes_per_s; }
};

struct SyntheticRun {
  std::vector<std::string> traces;         // Kineto JSON, rank by rank
  std::vector<double> exposed_per_step;    // seconds, rank by rank (every step alike)
  std::vector<double> attention_per_step;  // seconds of attention kernels, rank by rank
};

// InputError as ring_kernel_calls (a ring with per-step kernel shapes), or for a link that is not
// positive, or for steps outside 1..1000, or (field "link", "efficiency" or "other_compute_s")
// when the planted figures would make a duration or a timestamp that the trace reader refuses
// (trace_limits.hpp): whatever this writes, read_kineto_trace accepts.
// `other_compute_s`: the step's work outside attention (models::StepRest::other_compute_s),
// written as one GEMM kernel per layer and pass (a third forward, two thirds backward) after the
// layer's ring, so a check of the whole step sees it; 0 for an attention-only trace.
[[nodiscard]] SyntheticRun synthetic_ring_run(const models::ResolvedScenario& s, const PlantedLink& link, int steps = 2,
                                              double other_compute_s = 0);

}  // namespace ringsim::calibration
