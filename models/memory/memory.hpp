#pragma once
// Bytes one device holds at the peak of a training step (the backward of the first layer):
// model states (parameters, gradients, optimizer state) split by tensor parallelism and sharded
// over data- and context-parallel ranks as ZeRO-1/2/3 and FSDP do; activations kept for the
// backward under a recomputation policy; the attention kernel's workspace; and the context-
// parallel strategy's own buffers (the ring's K/V and dK/dV blocks in flight).
//
// Every token-proportional term counts the tokens this device holds (n_seq / sp x batch), never
// the global sequence: charging each rank the global token count is the error OpenPipe/ART fixed
// in its PR #922 (117 GiB estimated against 62.9 GiB observed). Formulas and their sources are in
// docs/memory.md.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace ringsim::models {

// Which model states are sharded over the sharding group (dp x sp ranks, or dp only):
// ZeRO stage 1 the optimizer state, stage 2 also the gradients, stage 3 (= FSDP full shard) also
// the parameters (Rajbhandari et al., "ZeRO", arXiv 1910.02054, section 5).
enum class Sharding { None, Zero1, Zero2, Zero3 };
// What the backward needs kept: everything (none); matmul outputs only, element-wise ops and
// norms recomputed (selective: JAX's checkpoint_dots policy, PyTorch's selective activation
// checkpointing of ops other than matmuls); only each layer's input, the layer recomputed in
// the backward (full: JAX remat 'nothing_saveable', Megatron --recompute-granularity full).
enum class Recompute { None, Selective, Full };

[[nodiscard]] std::string_view to_string(Sharding s) noexcept;
[[nodiscard]] std::string_view to_string(Recompute r) noexcept;
// "0".."3", "zero1".."zero3", "none", "fsdp" (= zero3); InputError (field "zero") otherwise.
[[nodiscard]] Sharding parse_sharding(std::string_view text);
// "none", "selective", "full"; InputError (field "recompute") otherwise.
[[nodiscard]] Recompute parse_recompute(std::string_view text);

struct MemoryOptions {
  std::int64_t dp = 1;                 // data-parallel replicas of the mp x sp mesh
  Sharding sharding = Sharding::None;
  // Shard over dp x sp (Megatron's distributed optimizer puts the context-parallel ranks in the
  // gradient-reduction group; the Striped paper's JAX code shards weights and optimizer state
  // over sp) rather than over dp alone.
  bool shard_over_cp = true;
  Recompute recompute = Recompute::None;
  std::int64_t kv_buffers = 2;          // K/V blocks a device holds at once (double buffering)
  // The options `predict` uses: the profile's recompute flag (full, else none) and model states
  // sharded over the context-parallel group (ZeRO-3 / FSDP over sp: the Striped paper's code
  // shards weights and optimizer state over sp; Megatron's distributed optimizer shards over
  // dp x cp). Sweeps and plans search the stage and the policy instead.
  [[nodiscard]] static MemoryOptions from_profile(const ResolvedScenario& s);
};

struct MemoryTerm {
  const char* name = "";  // static: parameters, gradients, optimizer, activations, workspace, kv_ring_buffers, ...
  double bytes = 0;
};

struct MemoryEstimate {
  double parameters_bytes = 0;   // bf16 weights held (with ZeRO-3: the shard plus the gathered layers)
  double gradients_bytes = 0;    // bf16 gradients
  double optimizer_bytes = 0;    // fp32 master weights + Adam m and v
  double activations_bytes = 0;  // kept for the backward, the recomputed layer and the logits included
  double workspace_bytes = 0;    // the attention kernel's accumulators and score tiles
  MemoryTerm strategy;           // the context-parallel strategy's buffers (strategy_memory)
  double total_bytes = 0;
  double capacity_bytes = 0;     // the device's HBM
  bool fits = true;
  [[nodiscard]] double headroom_bytes() const noexcept { return capacity_bytes - total_bytes; }
  // The terms in a fixed order, and the largest one: what breaks a plan that does not fit.
  [[nodiscard]] std::vector<MemoryTerm> terms() const;
  [[nodiscard]] MemoryTerm largest_term() const;
};

// Throws InputError (field "dp", "kv_buffers") for a non-positive count.
[[nodiscard]] MemoryEstimate estimate_memory(const ResolvedScenario& s, const MemoryOptions& options);

// Activation bytes one layer keeps per token on one device under a policy (bf16 activations,
// tensor-parallel parts divided by mp; docs/memory.md lists the tensors). No recompute keeps
// everything; full keeps the layer input only.
[[nodiscard]] double activation_bytes_per_token_layer(const ModelConfig& m, std::int64_t mp, Recompute r) noexcept;

// The strategy's own buffers on one device: where it has a ring, `kv_buffers` K/V blocks and as
// many travelling dK/dV blocks (the backward's peak), plus its program's buffers
// (Program::buffer_bytes: gathered K/V and dK/dV, Ulysses' full-sequence tensors). Formulas in
// docs/memory.md.
[[nodiscard]] MemoryTerm strategy_memory(const ResolvedScenario& s, std::int64_t kv_buffers);

}  // namespace ringsim::models
