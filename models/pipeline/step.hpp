#pragma once
// A pipeline-parallel step's time from its passes' durations: every rank runs its passes in the
// schedule's order (schedule.hpp), each when the rank has finished the one before and its input
// is there (a forward needs the previous model stage's output, a backward the next stage's
// gradient, each one stage-to-stage transfer after the pass that produced it; the send does not
// hold the sender, as Megatron's isend and its overlapped P2P communication do not). The step is
// the longest path through those dependencies, computed pass by pass: exact for any durations
// (stages need not be in lock-step: the last runs the LM head and the loss). The discrete-event
// simulator (sim/pipeline_sim) executes the same dependencies with its event queue; the tests
// hold the two and a brute-force search to one another and to the lock-step closed forms.
#include <cstdint>
#include <vector>

#include "models/pipeline/schedule.hpp"

namespace ringsim::models {

struct PipelineDurations {
  // Per model stage j = chunk x stages + rank (stages x virtual_stages entries): one
  // micro-batch's forward and backward through it.
  std::vector<double> fwd_s, bwd_s;
  double hop_s = 0;  // one stage-to-stage transfer (an activation forward, its gradient backward)
  // std::invalid_argument for the wrong number of entries, a negative or non-finite time.
  void check(const PipelineSchedule& s) const;
  // Every chunk's forward `fwd_s`, backward `bwd_s`.
  [[nodiscard]] static PipelineDurations lockstep(const PipelineSchedule& s, double fwd_s, double bwd_s, double hop_s = 0);
};

struct PipelineStep {
  double step_s = 0;
  std::vector<double> busy_s;  // per rank: time in passes (the rest of the step is its bubble)
  // The largest share of a step a rank spends idle.
  [[nodiscard]] double bubble_fraction() const noexcept;
};

// The schedule is checked (PipelineSchedule::check without a layer count); the durations too.
[[nodiscard]] PipelineStep pipeline_step(const PipelineSchedule& s, const PipelineDurations& d);

}  // namespace ringsim::models
