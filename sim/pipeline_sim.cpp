#include "sim/pipeline_sim.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/engine.hpp"

namespace ringsim::sim {

using models::PipelinePass;
using models::PipelineSchedule;

PipelineRun simulate_pipeline(const PipelineSchedule& schedule, const PipelineDurations& d, const PipelineOptions& options) {
  schedule.check(0);
  const std::int64_t p = schedule.stages, v = schedule.virtual_stages, m = schedule.micro_batches;
  const std::int64_t chunks = p * v;
  d.check(schedule);

  Engine engine(options.ticks_per_s);
  const auto P = static_cast<std::size_t>(p);
  const std::int64_t per_rank = 2 * v * m;  // passes of one rank
  std::vector<std::vector<PipelinePass>> order(P);
  // Where each (direction, chunk, micro-batch) sits in its rank's order.
  std::vector<std::vector<std::int64_t>> position(P, std::vector<std::int64_t>(static_cast<std::size_t>(per_rank)));
  const auto key = [&](const PipelinePass& x) {
    return static_cast<std::size_t>(((x.backward ? v : 0) + x.chunk) * m + x.micro_batch);
  };
  for (std::size_t r = 0; r < P; ++r) {
    order[r] = schedule.order(static_cast<std::int64_t>(r));
    for (std::size_t i = 0; i < order[r].size(); ++i) position[r][key(order[r][i])] = static_cast<std::int64_t>(i);
  }
  const auto model_stage = [&](std::int64_t rank, const PipelinePass& x) { return x.chunk * p + rank; };

  PipelineRun run;
  run.busy_s.assign(P, 0.0);
  run.peak_in_flight.assign(P, 0);
  if (options.timeline) run.timeline.assign(P, {});
  std::vector<std::int64_t> next(P, 0), in_flight(P, 0);
  std::vector<char> busy(P, 0);
  std::vector<std::vector<char>> arrived(P, std::vector<char>(static_cast<std::size_t>(per_rank), 0));
  std::vector<Tick> started(P, 0);
  // Passes with no input from another rank: the first model stage's forwards, the last one's
  // backwards (they follow the same rank's forward of the micro-batch, earlier in its order).
  for (std::size_t r = 0; r < P; ++r)
    for (std::size_t i = 0; i < order[r].size(); ++i) {
      const auto& x = order[r][i];
      const std::int64_t j = model_stage(static_cast<std::int64_t>(r), x);
      if ((!x.backward && j == 0) || (x.backward && j == chunks - 1)) arrived[r][i] = 1;
    }

  const Tick hop = engine.to_ticks(d.hop_s);
  Handler<std::int64_t> finish_handler, arrive_handler;
  const auto try_start = [&](std::size_t r) {
    if (busy[r] || next[r] >= per_rank || !arrived[r][static_cast<std::size_t>(next[r])]) return;
    const auto& x = order[r][static_cast<std::size_t>(next[r])];
    const auto j = static_cast<std::size_t>(model_stage(static_cast<std::int64_t>(r), x));
    const double s = x.backward ? d.bwd_s[j] : d.fwd_s[j];
    busy[r] = 1;
    started[r] = engine.now();
    if (!x.backward) run.peak_in_flight[r] = std::max(run.peak_in_flight[r], ++in_flight[r]);
    run.busy_s[r] += s;
    engine.schedule_after(engine.to_ticks(s), finish_handler, static_cast<std::int64_t>(r));
  };
  finish_handler = engine.add_handler<std::int64_t>([&](std::int64_t rank) {
    const auto r = static_cast<std::size_t>(rank);
    const auto& x = order[r][static_cast<std::size_t>(next[r])];
    if (options.timeline) run.timeline[r].push_back({x, engine.to_seconds(started[r]), engine.now_s()});
    if (x.backward) --in_flight[r];
    // The pass's output goes to the neighbouring model stage: activations forward, gradients back.
    const std::int64_t j = model_stage(rank, x);
    const std::int64_t to = x.backward ? j - 1 : j + 1;
    if (to >= 0 && to < chunks) {
      const PipelinePass target{x.backward, x.micro_batch, to / p};
      const auto tr = static_cast<std::size_t>(to % p);
      const std::int64_t tag = static_cast<std::int64_t>(tr) * per_rank + position[tr][key(target)];
      engine.schedule_after(hop, arrive_handler, tag);
    }
    busy[r] = 0;
    ++next[r];
    try_start(r);
  });
  arrive_handler = engine.add_handler<std::int64_t>([&](std::int64_t tag) {
    const auto r = static_cast<std::size_t>(tag / per_rank);
    arrived[r][static_cast<std::size_t>(tag % per_rank)] = 1;
    try_start(r);
  });
  for (std::size_t r = 0; r < P; ++r) try_start(r);
  run.events = engine.run();
  for (std::size_t r = 0; r < P; ++r)
    if (next[r] != per_rank)
      throw std::logic_error("pipeline schedule deadlocked at rank " + std::to_string(r) + " pass " + std::to_string(next[r]));
  run.step_s = engine.now_s();
  return run;
}

}  // namespace ringsim::sim
