#pragma once
// A pipeline-parallel schedule as Megatron-LM runs it (NVIDIA/Megatron-LM @ d98e8a6,
// megatron/core/pipeline_parallel/schedules.py): the model's layers split over `stages` ranks
// (with `virtual_stages` > 1, each rank holds that many chunks, chunk c of rank r being model
// stage c x stages + r), `micro_batches` micro-batches per step, and each rank's order of
// forward and backward passes:
// - 1F1B (forward_backward_pipelining_without_interleaving): stages - rank - 1 warm-up
//   forwards, then one forward and one backward in turn, then the remaining backwards;
// - interleaved 1F1B (forward_backward_pipelining_with_interleaving): 2 (stages - rank - 1) +
//   (virtual_stages - 1) x stages warm-up forwards (get_pp_rank_microbatches), micro-batches
//   taken in groups of `stages` per chunk (get_schedule_table with the default
//   microbatch_group_size_per_vp_stage = pipeline_model_parallel_size, model_parallel_config.py),
//   backwards over the chunks in reverse.
// The closed forms here are for stages in lock-step (every pass of a chunk equally long); the
// simulator (sim/pipeline_sim) executes the orders with any durations and transfer times.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringsim::models {

enum class PipelineKind { OneFOneB, Interleaved };

// One pass of a rank's order: the forward or backward of micro-batch `micro_batch` through the
// rank's chunk `chunk` (0 without interleaving).
struct PipelinePass {
  bool backward = false;
  std::int64_t micro_batch = 0;
  std::int64_t chunk = 0;
  friend bool operator==(const PipelinePass&, const PipelinePass&) = default;
};

struct PipelineSchedule {
  PipelineKind kind = PipelineKind::OneFOneB;
  std::int64_t stages = 1;          // pipeline-parallel ranks (pp)
  std::int64_t virtual_stages = 1;  // chunks per rank (Megatron's virtual pipeline size; 1 for 1F1B)
  std::int64_t micro_batches = 1;   // per data-parallel replica and step

  // "1f1b" or "interleaved:V" (V >= 2 chunks per rank); InputError (field "pp-schedule").
  [[nodiscard]] static PipelineSchedule parse(std::string_view kind, std::int64_t stages, std::int64_t micro_batches);
  // "1f1b" / "interleaved:V", as parse reads it.
  [[nodiscard]] std::string spec() const;
  // "1F1B over 4 stages, 8 micro-batches" (or "no pipeline, 8 micro-batches").
  [[nodiscard]] std::string text() const;
  // Refuses what Megatron refuses, naming the field: layers not divisible by stages x
  // virtual_stages ("pp"), an interleaved schedule whose micro-batches are not a multiple of
  // the stages ("micro-batches": the remainder of the micro-batch groups would stall it,
  // schedules.py), counts below 1. Sizes whose passes would not fit in memory are refused too.
  void check(std::int64_t layers) const;

  [[nodiscard]] bool pipelined() const noexcept { return stages > 1; }
  [[nodiscard]] std::int64_t chunks() const noexcept { return stages * virtual_stages; }
  // Forward passes `rank` runs before its first backward.
  [[nodiscard]] std::int64_t warmup(std::int64_t rank) const noexcept;
  // The rank's passes in the order it runs them: micro_batches x virtual_stages forwards and as
  // many backwards.
  [[nodiscard]] std::vector<PipelinePass> order(std::int64_t rank) const;
  // Chunks' activations `rank` holds at its peak: the forwards run before the first backward
  // frees one (warm-up plus the first steady forward), at most every pass of the step.
  [[nodiscard]] std::int64_t peak_in_flight(std::int64_t rank) const noexcept;

  // Lock-step, transfers free: the step takes (virtual_stages x micro_batches + stages - 1)
  // chunk passes (forward plus backward) on every rank, of which stages - 1 idle: the bubble's
  // share of the step is (p - 1) / (v m + p - 1) (Narayanan et al., SC'21, arXiv 2104.04473,
  // section 2.2: bubble over ideal time (p - 1) / (v m)).
  [[nodiscard]] double bubble_fraction() const noexcept;
  // The step in lock-step with each chunk's forward plus backward taking `chunk_s` and free
  // transfers: (v m + p - 1) chunk_s (bubble_fraction's count). With transfer time the steady
  // state waits on cycles of hops whose length depends on p and m (a rank's next forward needs
  // the activation its neighbour sends after a backward that needed this rank's gradient):
  // pipeline_step (models/pipeline/step.hpp) counts them.
  [[nodiscard]] double lockstep_step_s(double chunk_s) const noexcept;
};

}  // namespace ringsim::models
