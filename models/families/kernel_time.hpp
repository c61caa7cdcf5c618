#pragma once
// Time of one flash-attention kernel call from how the kernel runs on a GPU: the launch code
// picks a CTA tile (block_m queries x block_n keys) for the head dim and pass; the grid has one
// CTA per query block (forward) or key block (backward) of every (batch, head); an SM holds as
// many CTAs at once as its registers and shared memory allow; CTAs are dispatched in launch
// order to the first free slot, so the call lasts as long as the greedy list schedule of its CTAs
// (wave quantisation, and the tail of a causal call's uneven rows), except that an SM left with
// fewer CTAs than it holds (a partial wave, or the last wave once no CTA waits) runs them faster
// (drained_makespan). A CTA costs a fixed part
// (prologue, epilogue, loading its first tiles: "pipeline fill") plus, per tile it visits, a fixed
// part and per element of the tile: the matrix-unit FLOPs and the softmax's exponentials on the
// special-function unit and other fp32 operations (separate pipes, partly overlapped:
// max(matrix, softmax) + (1 - overlap) min(matrix, softmax)), and the element-wise mask on tiles
// that straddle the causal diagonal; a tile lasts at least as long as its shared-memory
// traffic takes (KernelSpec::fwd_smem_bytes, bwd_smem_bytes). Fully masked tiles are not visited (the loop bounds skip them).
// The backward adds its memory-bound pre- and post-processing kernels.
#include <cstdint>
#include <string>
#include <vector>

#include "models/implementations/kernel_spec.hpp"
#include "models/cost/cost.hpp"
#include "models/hardware/hardware.hpp"

namespace ringsim::models {

// One kernel call (see AttentionCall): causal calls allow key j for query i iff j <= i + diagonal.
struct KernelCall {
  std::int64_t q_len = 0;
  std::int64_t k_len = 0;
  bool causal = false;
  std::int64_t diagonal = 0;
  std::int64_t heads = 1;
  std::int64_t kv_heads = 1;
  std::int64_t batch = 1;
  std::int64_t head_dim = 64;
  bool varlen = false;  // a packed-documents call: no split-KV forward
};

// The rates a kernel runs at on one GPU under one profile, per SM.
struct KernelRates {
  std::int64_t sm_count = 1;
  std::int64_t registers_per_sm = 65536;
  std::int64_t shared_memory_per_sm_bytes = 0;
  TileDevice device;            // what the launch code picks tiles by (KernelSpec::tile)
  double fwd_flops_per_s = 0;   // matrix unit, per SM, at the profile's efficiency
  double bwd_flops_per_s = 0;
  double exp_per_s = 0;         // special-function unit, per SM
  double alu_per_s = 0;         // fp32 operations, per SM
  double hbm_bytes_per_s = 0;   // the whole GPU, at the profile's memory efficiency
  double memory_latency_s = 0;  // one dependent global load (Hardware::memory_latency_s)
  double tile_overhead_s = 0;   // per visited tile (SM-seconds)
  double cta_overhead_s = 0;    // per CTA (SM-seconds)
  double launch_s = 0;          // per kernel launch (Profile::kernel_launch_s)
  double solo_gain = 0;         // Profile::solo_cta_gain
  double smem_bytes_per_s = 0;  // per SM, at Profile::shared_memory_efficiency; 0: no bound
  double bwd_smem_bytes_per_s = 0;  // per SM, at Profile::bwd_shared_memory_efficiency (0: the forward's)
  double softmax_overlap = 0;   // Profile::softmax_overlap
  // Throws InputError when the hardware has no compute units (kernel timing needs them).
  [[nodiscard]] static KernelRates of(const Hardware& hw, const Profile& p);
};

// The rates one pass of a call reads: `r` with the fields only the other pass reads cleared (the
// forward's matrix-unit and shared-memory rates for a backward; the backward's, and the HBM rate
// of its pre- and post-processing, for a forward). flash_fwd_s (flash_bwd_s) gives the same
// seconds under any two rates whose pass_rates(.., false) (true) are equal: a fit memoises kernel
// times on them (calibration/kernel_curves.cpp), and tests/models/test_kernel_time.cpp checks the
// claim by changing every cleared field.
[[nodiscard]] KernelRates pass_rates(const KernelRates& r, bool backward) noexcept;

// CTAs of one kernel that one SM holds at once: registers and shared memory decide.
[[nodiscard]] std::int64_t ctas_per_sm(const KernelSpec& spec, const KernelTile& tile, const KernelRates& r);

// Makespan of CTAs dispatched in order to the first free of `slots` slots (greedy list
// scheduling), the CTA sequence being `pattern` repeated `repeats` times. Exact up to
// `exact_limit` CTAs; beyond, the bulk is fluid (slots share the work evenly) and the last
// 8 x slots CTAs are scheduled exactly from slots spread over one mean CTA.
[[nodiscard]] double list_schedule_makespan(const std::vector<double>& pattern, std::int64_t repeats,
                                            std::int64_t slots, std::int64_t exact_limit = 0);
// A call of at most one wave (`pattern` repeated `repeats` times, CTA i on SM i mod sm_count, at
// most k per SM) whose SMs hold fewer than k CTAs: each SM shares its throughput among its CTAs
// (processor sharing), j CTAs getting (1 + gain (k - j) / (k - 1)) j / k of it (gain <= k - 1);
// `pattern` holds each CTA's wall time with k CTAs per SM (k x its SM-seconds). Negative when the
// call is larger than one wave or gain is 0 (drained_makespan then applies; with gain 0 the
// two agree).
[[nodiscard]] double partial_wave_makespan(const std::vector<double>& pattern, std::int64_t repeats,
                                           std::int64_t sm_count, std::int64_t k, double gain);
// Any call on `sm_count` SMs of k slots: partial_wave_makespan where it applies; otherwise the
// list schedule until the last CTA is dispatched (every SM holds k CTAs while any wait), after
// which each SM's remaining CTAs share it as partial_wave_makespan's do, so a last wave of fewer
// CTAs than slots runs faster (gain 0 or k = 1: list_schedule_makespan on sm_count x k slots).
[[nodiscard]] double drained_makespan(const std::vector<double>& pattern, std::int64_t repeats, std::int64_t sm_count,
                                      std::int64_t k, double gain, std::int64_t exact_limit = 0);
// The same schedule for `ctas` CTAs of one duration, in closed form (O(1); equal to
// list_schedule_makespan({duration}, ctas, slots) up to rounding).
[[nodiscard]] double uniform_makespan(double duration, std::int64_t ctas, std::int64_t slots,
                                      std::int64_t exact_limit = 0);

struct KernelTime {
  double fwd_s = 0;
  double bwd_s = 0;
  std::int64_t fwd_ctas = 0, bwd_ctas = 0;
};

[[nodiscard]] double flash_fwd_s(const KernelSpec& spec, const KernelRates& r, const KernelCall& c);
// The tile a call's forward runs: the split kernel's where the call splits its keys.
[[nodiscard]] const KernelTile& flash_fwd_tile(const KernelSpec& spec, const KernelRates& r, const KernelCall& c);
[[nodiscard]] double flash_bwd_s(const KernelSpec& spec, const KernelRates& r, const KernelCall& c);
[[nodiscard]] KernelTime flash_call_time(const KernelSpec& spec, const KernelRates& r, const KernelCall& c);

// A varlen call over a block whose mask has no closed-form call shapes (packed documents: one
// flash_attn_varlen call per step over every document the two blocks share). Its work is the
// block's: `visited_elements` and `masked_elements` (one head, one sequence: elements of the
// tiles that hold allowed pairs, and of those that also hold masked ones, at any tile shape),
// spread evenly over the CTAs of a `q_len` x `k_len` call and list-scheduled like a call's.
struct VarlenWork {
  std::int64_t q_len = 0, k_len = 0;
  double visited_elements = 0, masked_elements = 0;
  std::int64_t heads = 1, batch = 1, head_dim = 64;
};
[[nodiscard]] KernelTime flash_varlen_time(const KernelSpec& spec, const KernelRates& r, const VarlenWork& w);

}  // namespace ringsim::models
