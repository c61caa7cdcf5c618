#pragma once
// The discrete-event execution of a pipeline-parallel step: every rank runs its passes in the
// schedule's order (models/pipeline/schedule.hpp), each pass when the rank is free and its input
// has arrived: a forward needs the previous model stage's output, a backward the next stage's
// input gradient, each sent over the stage-to-stage link after the pass that produced it (the
// send does not hold the sender: Megatron posts it with isend and, overlapping P2P
// communication, computes on). Any pass durations: stages need not be in lock-step (the last
// stage runs the LM head and the loss, the first the embedding), so the step, the idle time and
// the activations each rank holds are counted, not assumed.
#include <cstdint>
#include <vector>

#include "models/pipeline/step.hpp"

namespace ringsim::sim {

using models::PipelineDurations;

struct PipelinePassTime {
  models::PipelinePass pass;
  double start_s = 0, end_s = 0;
};

struct PipelineRun {
  double step_s = 0;                       // the last pass's end
  std::vector<double> busy_s;              // per rank: time spent in passes
  std::vector<std::int64_t> peak_in_flight;  // per rank: chunks whose activations it held at once, at most
  std::int64_t events = 0;
  // Per rank, each pass in order with its times (only with PipelineOptions::timeline).
  std::vector<std::vector<PipelinePassTime>> timeline;
  [[nodiscard]] double bubble_fraction(std::int64_t rank) const { return 1.0 - busy_s.at(static_cast<std::size_t>(rank)) / step_s; }
};

struct PipelineOptions {
  bool timeline = false;
  double ticks_per_s = 1e12;  // the engine's resolution (sim/engine.hpp)
};

// std::invalid_argument for durations of the wrong size or negative (PipelineDurations::check);
// the schedule is checked (PipelineSchedule::check with no layer count). Equals
// models::pipeline_step's step (tests), with the timeline and the activations held besides.
[[nodiscard]] PipelineRun simulate_pipeline(const models::PipelineSchedule& schedule, const PipelineDurations& d,
                                            const PipelineOptions& options = {});

}  // namespace ringsim::sim
