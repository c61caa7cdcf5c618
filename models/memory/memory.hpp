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

#include <nlohmann/json_fwd.hpp>

#include "models/pipeline/schedule.hpp"
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
// Attention: the attention core only (Megatron --recompute-modules core_attn): its inputs Q, K, V
// and its output (the projection's input) stay, the kernel's log-sum-exp goes; the backward
// re-runs the attention forward. With a tiled kernel it saves little memory (nothing of size
// c x c is kept to begin with).
enum class Recompute { None, Selective, Full, Attention };

// The precision a step trains in, which sets what each model state and each kept activation
// costs: bf16 mixed precision (bf16 weights, gradients and activations, fp32 master weights and
// Adam moments; fp16 costs the same), fp32 throughout (the Ring Attention paper's runs), or fp8
// (bf16 model states, fp8 copies of the matmul and attention inputs kept for the backward, as
// TransformerEngine's fp8 recipes keep them). Implementations list what they run
// (Implementation::precisions).
enum class TrainingPrecision { Bf16, Fp32, Fp8 };

[[nodiscard]] std::string_view to_string(Sharding s) noexcept;
[[nodiscard]] std::string_view to_string(Recompute r) noexcept;
[[nodiscard]] std::string_view to_string(TrainingPrecision p) noexcept;
// "bf16", "fp16" (= bf16's bytes), "fp32", "fp8"; InputError (field "precision") otherwise.
[[nodiscard]] TrainingPrecision parse_training_precision(std::string_view text);

// Bytes per element of what a step keeps, by role: model states, the activations that only
// element-wise ops read (norm and residual inputs, the MLP's gate), those a matmul or the
// attention kernel reads again in the backward (fp8 copies under fp8).
struct PrecisionBytes {
  double weight = 2, gradient = 2, optimizer = 12;  // optimizer: per parameter (master + Adam m, v)
  double element = 2, matmul_input = 2, attention = 2;
  [[nodiscard]] static PrecisionBytes of(TrainingPrecision p) noexcept;
};

// Per-device memory the step's tensors do not account for, each from a public source (docs/
// memory.md): the CUDA context, NCCL's buffers for each communicator the device is in, and the
// caching allocator's fragmentation (a fraction of the memory allocated and freed every step:
// activations, workspace, strategy buffers).
struct FixedCosts {
  double cuda_context_bytes = 0;
  double nccl_bytes_two_ranks = 0;   // a communicator of two ranks
  double nccl_bytes_more_ranks = 0;  // of three or more
  double fragmentation = 0;
  [[nodiscard]] static FixedCosts published() noexcept;  // the defaults, sources in docs/memory.md
};
// "0".."3", "zero1".."zero3", "none", "fsdp" (= zero3); InputError (field "zero") otherwise.
[[nodiscard]] Sharding parse_sharding(std::string_view text);
// "none", "selective", "full", "attention"; InputError (field "recompute") otherwise.
[[nodiscard]] Recompute parse_recompute(std::string_view text);
// What the time model repeats under a policy: full, one more forward of every layer; attention,
// the attention forward in the backward; none and selective, nothing (selective's element-wise
// repeats are left out).
void apply_recompute(Profile& profile, Recompute r) noexcept;
// What the time model changes under a training precision: fp8 runs the layers' matmuls on FP8
// tensor cores with TransformerEngine's casts (Profile::fp8_matmuls); the others nothing.
void apply_precision(Profile& profile, TrainingPrecision p) noexcept;

inline constexpr double kBytesPerGiB = 1024.0 * 1024 * 1024;

// The memory choices a user states once for a whole prediction, sweep or plan (the mesh, the
// ZeRO stage and the recomputation are searched per point instead).
struct MemorySettings {
  TrainingPrecision precision = TrainingPrecision::Bf16;
  // Megatron sequence parallelism: the activations tensor parallelism would replicate (norms,
  // residual, the layer input) are split over the mp ranks too (Korthikanti et al., arXiv
  // 2205.05198, section 4.2.2; Megatron-LM --sequence-parallel). Only matters with mp > 1.
  bool sequence_parallel = true;
  // The optimizer state (fp32 master weights and Adam moments) lives in host memory (ZeRO-Offload,
  // DeepSpeed offload_optimizer; FSDP CPUOffload): off the device, reported as host bytes. Its
  // PCIe transfers and the CPU's Adam step are not in the step time.
  bool offload_optimizer = false;
  // A plan fits when its total plus this much stays within the device's memory: what the
  // estimate cannot see (allocator spikes, library workspaces, a framework's own caches).
  double headroom_bytes = kDefaultHeadroomBytes;
  static constexpr double kDefaultHeadroomBytes = 2 * kBytesPerGiB;
  // InputError (field "headroom") outside [0, 1e6] GiB, NaN included.
  void set_headroom_gib(double gib);
  friend bool operator==(const MemorySettings&, const MemorySettings&) = default;
  // "bf16, sequence parallel, 2.0 GiB headroom" (+ ", optimizer offloaded")
  [[nodiscard]] std::string text() const;
  // Reads one JSON field of a sweep or plan file (precision, sequence_parallel,
  // offload_optimizer, headroom_gib); false when `key` is not one of them. InputError naming
  // `file` and the field for a wrong value.
  bool read_field(const std::string& key, const nlohmann::json& value, const std::string& file);
  // The fields that differ from the defaults (so that files written before they existed keep
  // their fingerprint).
  void write_fields(nlohmann::json& j) const;
};

struct MemoryOptions {
  std::int64_t dp = 1;                 // data-parallel replicas of the mp x sp mesh
  Sharding sharding = Sharding::None;
  // Shard over dp x sp (Megatron's distributed optimizer puts the context-parallel ranks in the
  // gradient-reduction group; the Striped paper's JAX code shards weights and optimizer state
  // over sp) rather than over dp alone.
  bool shard_over_cp = true;
  Recompute recompute = Recompute::None;
  std::int64_t kv_buffers = 2;          // K/V blocks a device holds at once (double buffering)
  FixedCosts fixed = FixedCosts::published();
  MemorySettings settings;
  // Pipeline parallelism (models/pipeline/): each rank holds its stage's weights (the embedding
  // on the first, the output layer on the last: stage_split.hpp) and the activations of the
  // chunks its schedule keeps in flight (PipelineSchedule::peak_in_flight: the first rank of
  // 1F1B holds p micro-batches of its L / p layers); the logits live on the last rank. The
  // estimate is the rank that needs the most (MemoryEstimate::pipeline_rank).
  PipelineSchedule pipeline;
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
  double fixed_bytes = 0;        // CUDA context, NCCL buffers, allocator fragmentation (FixedCosts)
  double total_bytes = 0;
  double capacity_bytes = 0;     // the device's HBM
  double headroom_bytes = 0;     // asked for (MemoryOptions::headroom_bytes)
  double host_bytes = 0;         // offloaded to host memory (the optimizer state with offload_optimizer)
  std::int64_t pipeline_rank = 0;  // the pipeline rank these bytes are of (the fullest; 0 without a pipeline)
  bool fits = true;              // total + headroom <= capacity
  [[nodiscard]] double spare_bytes() const noexcept { return capacity_bytes - total_bytes; }
  // Fits in the device but not with the headroom asked for.
  [[nodiscard]] bool tight() const noexcept { return !fits && total_bytes <= capacity_bytes; }
  // The terms in a fixed order, and the largest one: what breaks a plan that does not fit.
  [[nodiscard]] std::vector<MemoryTerm> terms() const;
  [[nodiscard]] MemoryTerm largest_term() const;
};

// One contribution to a device's total, under its term of MemoryEstimate::terms (the weights and
// the gathered layers under parameters; the kept layers, the recomputed layer and the logits under
// activations; the CUDA context, NCCL's buffers and the allocator's fragmentation under fixed),
// with where its formula comes from (docs/memory.md gives the formulas).
struct MemoryPart {
  const char* term = "";
  const char* name = "";
  double bytes = 0;
  const char* source = "";
};
// The estimate of estimate_memory with every part that makes its total (`predict
// --memory-breakdown`); the parts of each term add up to it. Kept apart from the estimate so a
// sweep's millions of points allocate nothing for it.
struct MemoryBreakdown {
  MemoryEstimate estimate;
  std::vector<MemoryPart> parts;
};
[[nodiscard]] MemoryBreakdown memory_breakdown(const ResolvedScenario& s, const MemoryOptions& options);

// One phrase for every front-end: "fits with 12.3 GiB spare", "tight: 1.1 GiB spare, under the
// 2.0 GiB headroom", "does not fit: 3.2 GiB over".
[[nodiscard]] std::string fit_phrase(const MemoryEstimate& e);

// Throws InputError (field "dp", "kv_buffers") for a non-positive count, and the pipeline's
// (PipelineSchedule::check: "pp", "micro-batches", "pp-schedule").
[[nodiscard]] MemoryEstimate estimate_memory(const ResolvedScenario& s, const MemoryOptions& options);

// Activation bytes one layer keeps per token on one device under a policy (bf16 activations,
// tensor-parallel parts divided by mp; docs/memory.md lists the tensors). No recompute keeps
// everything; full keeps the layer input only.
// `sequence_parallel`: the replicated tensors are split over mp too (Megatron SP).
[[nodiscard]] double activation_bytes_per_token_layer(const ModelConfig& m, std::int64_t mp, Recompute r,
                                                      const PrecisionBytes& bytes = {},
                                                      bool sequence_parallel = false) noexcept;

// The sizes of the communicators one device holds NCCL buffers for: tensor parallelism, the
// strategy's groups (the ring's, Ulysses' all-to-all, USP's both, a double ring's inner and
// outer rings), the gradient group (dp x sp) and the pipeline's (pp ranks); groups of one rank
// are not created.
[[nodiscard]] std::vector<std::int64_t> communicator_sizes(const ResolvedScenario& s, std::int64_t dp, std::int64_t pp = 1);

// The strategy's own buffers on one device: where it has a ring, `kv_buffers` K/V blocks and as
// many travelling dK/dV blocks (the backward's peak), plus its program's buffers
// (Program::buffer_bytes: gathered K/V and dK/dV, Ulysses' full-sequence tensors). Formulas in
// docs/memory.md.
[[nodiscard]] MemoryTerm strategy_memory(const ResolvedScenario& s, std::int64_t kv_buffers);

}  // namespace ringsim::models
