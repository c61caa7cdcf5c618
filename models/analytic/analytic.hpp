#pragma once
// Closed-form estimates over a resolved scenario: lock-step rounds (each round lasts as long as
// its slowest device, or its transfer when that is longer), attention forward + backward, the
// rest of the training step, tokens/s, MFU, memory, the paper's Theoretical Maximum Speedup,
// and the smallest block at which the K/V transfer hides behind compute.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/families/attention_cost.hpp"
#include "models/io/function_ref.hpp"
#include "models/program/program.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

struct RoundTime {
  std::int64_t round = 0;
  double compute_max_s = 0;   // slowest device's attention compute, one layer, forward
  double compute_mean_s = 0;
  double transfer_s = 0;      // K/V to the next device
  double round_s = 0;         // with overlap and per-round overhead
};

struct Prediction {
  // One layer's forward ring, round by round.
  std::vector<RoundTime> rounds_fwd;
  double attention_fwd_s = 0;     // whole step (all layers)
  double attention_bwd_s = 0;
  double other_compute_s = 0;     // projections, MLP, LM head, element-wise, recompute
  double collective_s = 0;        // tensor-parallel all-reduces
  // Of other_compute_s and collective_s, what a pipeline splits by pass and stage: the per-layer
  // ops' forward (all layers; the rest is their backward and recomputation) and the once-per-step
  // ops (the LM head, on the last stage) forward and backward.
  double layer_other_fwd_s = 0, layer_collective_fwd_s = 0, head_fwd_s = 0, head_bwd_s = 0;
  double exposed_transfer_s = 0;  // ring transfer time not hidden behind compute
  // Collectives of non-ring strategies not hidden behind compute (whole step), by kind:
  // all-gather, reduce-scatter, all-to-all.
  double exposed_allgather_s = 0, exposed_reduce_scatter_s = 0, exposed_all_to_all_s = 0;
  // Of the exposed ring transfers and collectives above, the forward pass's (the rest is the
  // backward's): a breakdown of the step takes each pass's exposure out of its attention time.
  double exposed_fwd_s = 0;
  // Attention compute of the whole step: the busiest device's (what lock-step waits for) and
  // the mean device's; their difference is what imbalance costs.
  double attention_busiest_s = 0, attention_mean_s = 0;
  double attention_mean_fwd_s = 0;  // of attention_mean_s, the forward's
  // Of the attention times, what is neither compute nor exposed communication: each ring round's
  // fixed cost (the profile's round_overhead_s) and sparse preparation, both passes.
  double attention_overhead_s = 0;
  double step_s = 0;
  double tokens_per_s = 0;
  double model_flops = 0;         // useful FLOPs of the step on one device (allowed pairs only)
  double mfu = 0;                 // model_flops / (step_s x dense peak at the matmul precision)
  double imbalance = 0;           // mean over rounds of (max / mean) device attention work
  double memory_bytes = 0;        // estimated peak per device (models/memory/memory.hpp: MemoryOptions::from_profile)
  bool fits_memory = true;
  double hide_threshold_tokens = 0;  // smallest block c at which the forward transfer hides (rings; 0 otherwise)
  // What bounds the ring's hops and the slowest collective stage, in words (the resource and how
  // many transfers share it, models/transport/); empty where nothing is transferred.
  std::string ring_bound, collective_bound;
  [[nodiscard]] double exposed_collectives_s() const noexcept {
    return exposed_allgather_s + exposed_reduce_scatter_s + exposed_all_to_all_s;
  }
  // The columns' sum: one micro-batch's pass through the model as the cost model times it (its
  // step_s; the simulator's and a training step's differ: models/analytic/breakdown.hpp).
  [[nodiscard]] double columns_s() const noexcept { return attention_fwd_s + attention_bwd_s + other_compute_s + collective_s; }
};

[[nodiscard]] Prediction predict(const ResolvedScenario& s);

// The same model with the attention's work supplied by the caller (planning over many packed
// batches of one configuration counts it per document: models/workload/document_work.hpp), in two
// parts: what the attention's work changes, and the rest of the step, computed once.
//
// One round of the program's ring stage over its positions: the busiest position's compute
// (what a lock-step round waits for), the sum over positions, and the counts behind the
// imbalance and MFU figures (visited area, allowed pairs).
struct RingRoundWork {
  double fwd_max_s = 0, bwd_max_s = 0;
  double fwd_sum_s = 0, bwd_sum_s = 0;
  std::int64_t max_area = 0, sum_area = 0, sum_allowed = 0;
  // The busiest GPU-bound and host-bound positions apart (the max of the two is fwd_max_s /
  // bwd_max_s): NCCL's kernel beside a step slows the GPU-bound ones only.
  double fwd_gpu_max_s = 0, bwd_gpu_max_s = 0, fwd_host_max_s = 0, bwd_host_max_s = 0;

  // Counts one position's block in the round's maxima (not in the sums).
  void add_busiest(const RoundCost& c) noexcept {
    fwd_max_s = std::max(fwd_max_s, c.fwd_s);
    bwd_max_s = std::max(bwd_max_s, c.bwd_s);
    double& f = c.fwd_host_bound ? fwd_host_max_s : fwd_gpu_max_s;
    double& b = c.bwd_host_bound ? bwd_host_max_s : bwd_gpu_max_s;
    f = std::max(f, c.fwd_s);
    b = std::max(b, c.bwd_s);
  }
};
// The work of one layer: each round of the ring stage (when the program has one), each compute
// table's seconds per rank (in Program::compute's order), and the allowed pairs of the first
// compute table summed over its ranks (one head and sequence; the useful FLOPs without a ring).
struct AttentionWork {
  FunctionRef<RingRoundWork(std::int64_t round)> ring_round;
  const std::vector<TableCost>* tables = nullptr;
  std::int64_t table_pairs = 0;
};
// What the step spends outside attention (projections, MLP, LM head, element-wise ops,
// recomputation; tensor-parallel all-reduces) and the memory estimate: the same for any work.
struct StepRest {
  double other_compute_s = 0;
  double collective_s = 0;
  double layer_other_fwd_s = 0, layer_collective_fwd_s = 0, head_fwd_s = 0, head_bwd_s = 0;  // as in Prediction
  double matmul_flops = 0;  // useful matmul FLOPs of the step on one device
  double memory_bytes = 0;
  bool fits_memory = true;
};
[[nodiscard]] StepRest step_rest(const ResolvedScenario& s);
// The work's round-by-round ring detail (Prediction::rounds_fwd) only when per_round is set.
[[nodiscard]] Prediction predict(const ResolvedScenario& s, const AttentionWork& work, const StepRest& rest,
                                 bool per_round = true);

// The Striped Attention paper's Theoretical Maximum Speedup of striped over ring: all matmul
// FLOPs of a training step on one device, transfers free, element-level skipping, attention
// FLOPs weighted by `attention_cost_ratio` (2 on A100, where attention runs in TF32 and the rest
// in bf16; 1 on TPU). The paper's accounting counts the MLP as two d_model x d_ff matmuls (a
// SwiGLU's three give values 0.02-0.03 lower than its published column); see docs/analytic.md.
[[nodiscard]] double theoretical_max_speedup(const ModelConfig& m, std::int64_t sp, std::int64_t n_seq,
                                             double attention_cost_ratio) noexcept;

// The same for a resolved scenario: the attention cost ratio is the profile's matmul peak over
// its attention peak (bf16 over TF32 = 2 on A100 with the paper's implementation).
[[nodiscard]] double theoretical_max_speedup(const ResolvedScenario& s);

}  // namespace ringsim::models
