#pragma once
// The cost model: a Profile (the implementation's calibrated or assumed parameters) applied to
// a Hardware spec gives seconds for a block of attention tiles, a transfer, and every other op.
//   tile time     = tile_overhead_s + FLOPs x (1 + masked_tile_penalty if masked) / (peak[attention precision] x attention_efficiency)
//   transfer time = latency + bytes / (link bandwidth x link_efficiency)
//   overlapped    = max(compute, transfer) + (1 - overlap) x min(compute, transfer)
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/hardware/hardware.hpp"
#include "models/transport/scenario_transport.hpp"
#include "models/workload/mask.hpp"
#include "models/workload/transformer.hpp"
#include "models/workload/workload.hpp"

namespace ringsim::models {

struct Provenance {
  bool calibrated = false;
  std::string method;       // "spec defaults", "fit to published speedups", "fit to kernel timings"
  std::string fitted_from;  // data file(s)
  std::string date;
  std::string notes;
  std::optional<double> residual;  // fit residual (mean absolute error of what was fitted)
};

struct Profile {
  std::string name;
  std::string hardware;
  std::string implementation;  // configs/implementations/NAME.json this profile was fitted for
  std::int64_t version = 1;
  Provenance provenance;
  Precision attention_precision = Precision::BF16;
  Precision matmul_precision = Precision::BF16;
  double matmul_efficiency = 0.6;     // fraction of dense peak reached by projection/MLP matmuls
  double attention_efficiency = 0.5;  // fraction of peak reached inside computed attention tiles
  double memory_efficiency = 0.7;     // fraction of HBM bandwidth for element-wise ops
  // Fraction of HBM bandwidth a streaming read reaches (a decode step reads its cache and the
  // weights once, nothing written back): 0.91, fitted on FlashAttention-2's decode calls on an
  // H100 (data/measurements/h100-2026-11-28, docs/gpu-campaign.md) and assumed on other GPUs.
  double stream_read_efficiency = 0.91;
  double tile_overhead_s = 0;         // fixed cost per computed tile (launch, softmax bookkeeping)
  // Extra cost of a visited tile that holds masked pairs, as a fraction of its compute: the
  // mask is built and applied element-wise (not on the matrix units). Ring pays it on the
  // diagonal only; striped on every tile of every round.
  double masked_tile_penalty = 0;
  // Fraction of a computed tile's cost that a skipped (fully masked) tile still costs: a skip
  // that is not free (both branches of a conditional evaluated, tiles still loaded).
  double skipped_tile_cost = 0;
  double round_overhead_s = 0;        // fixed cost per ring round (sync, buffer swap)
  // Head-independent costs of one tile of the blockwise loop, seconds: a tile that holds masked
  // pairs (its mask is built once per tile, whatever the number of heads), and a skipped tile (a
  // loop step that only tests and skips). Per-element costs of such tiles are the fractions above.
  double masked_tile_s = 0;
  double skipped_tile_s = 0;
  // Per ring round, memory-bound work over the device's whole block that does not depend on
  // which tiles are visited (the blockwise loop's reshapes and transposes of Q, K, V and the
  // running output, the output normalisation): HBM bytes per element of the Q block (tokens x
  // heads x head_dim), each pass. It amortises as blocks grow: O(c) against O(c^2) tiles.
  double round_bytes_per_element = 0;
  // Kernel-level timing (kernel family "flash", models/families/kernel_time.hpp): the matrix unit's
  // fraction of peak in the backward (0: attention_efficiency), and the fixed cost of one thread
  // block (prologue, epilogue), in SM-seconds.
  double attention_bwd_efficiency = 0;
  double cta_overhead_s = 0;
  // GPU time one kernel launch of the attention kernels adds to a call besides its CTAs (grid
  // launch and drain between dependent kernels): KernelSpec's launches per pass (the backward's
  // pre- and post-processing kernels, the split forward's combine) times this. 0: not modelled.
  double kernel_launch_s = 0;
  // How much faster than its 1/k share of a full SM a CTA runs when fewer CTAs than the SM holds
  // (k) share it: a lone CTA gets (1 + gain) / k of the SM (0: no faster; at most k - 1, the whole
  // SM). Fewer warps hide less latency, so a lone CTA rarely gets it all. Used for calls of at
  // most one wave and for the last wave's drain.
  double solo_cta_gain = 0;
  // Fraction of the hardware's shared-memory bandwidth (Hardware::shared_memory_bytes_per_clock_per_sm)
  // a forward tile's operand traffic reaches (KernelSpec::fwd_smem_bytes): a tile takes at least
  // its bytes at this rate. 0: no shared-memory bound.
  double shared_memory_efficiency = 0;
  // The same for a backward tile's traffic (KernelSpec::bwd_smem_bytes), whose loads include
  // transposed ldmatrix reads and whose P and dS stores leave the accumulators' register layout
  // (flash_bwd_kernel.h), so it need not reach the forward's rate. 0: the forward's.
  double bwd_shared_memory_efficiency = 0;
  // How much of a tile's softmax work (exponentials, fp32 operations) runs concurrently with its
  // matrix-unit work: the pipes are separate, and warps of the SM's CTAs interleave. 1: the shorter
  // one is hidden; 0: they add up.
  double softmax_overlap = 0.5;
  // The host's work to issue a ring step, per pass: the step itself (the library's Python loop, its
  // communicator's send/recv, commit and wait; the backward runs two communicators) and each
  // attention call with its merge or accumulation (the kernel's wrapper, the scripted merge). A
  // step lasts at least that long, a plain call at least its call's share: small blocks are
  // host-bound. Measured where the GPU's work is negligible (data/components/host/).
  double host_step_s = 0;
  double host_call_s = 0;
  double host_bwd_step_s = 0;
  double host_bwd_call_s = 0;
  // Host seconds per eager PyTorch operation the loop dispatches outside the kernel's wrapper,
  // where a library's code counts them (configs/ring_steps: a step's and a merge's `host_ops`;
  // UltraAttn's copy of the ring merges eagerly, op by op). 0 where the counts are not given:
  // host_step_s and host_call_s then hold that work as measured.
  double host_op_s = 0;
  // The host's work per collective call of the library's context-parallel code (all-to-all,
  // all-gather): the reshapes and transposing copies around it and the NCCL call, which enqueues
  // one send and one receive per peer and starts only when the group's last rank has issued it.
  // A call of a group of g ranks lasts at least host_collective_s + (g - 1) x
  // host_collective_peer_s (models/program/collective_cost.hpp). 0: not measured for the library.
  double host_collective_s = 0;
  double host_collective_peer_s = 0;
  double overlap = 1.0;               // 1: transfers fully hide behind compute; 0: serialised
  double link_efficiency = 0.8;       // fraction of the link's bandwidth a transfer reaches
  // The most one point-to-point transfer of the library reaches whatever the link, bytes/s (0: no
  // such limit): NCCL send/recv moves data with a few thread blocks (channels), so a ring hop can
  // stay far below a fast link's bandwidth.
  double p2p_bandwidth_bytes_per_s = 0;
  // Extra latency of one point-to-point transfer of the library, on top of the link's (launching
  // the communication kernels, the send/receive handshake), seconds.
  double p2p_latency_s = 0;
  std::optional<double> link_latency_s;  // overrides the hardware's per-hop latency
  std::int64_t kv_wire_bytes = 2;     // dtype bytes of K/V on the wire
  std::int64_t dkv_wire_bytes = 4;    // dtype bytes of the travelling dK/dV accumulators
  double attention_bwd_factor = 2.5;  // backward attention FLOPs / forward (flash: 5 vs 2 matmuls)
  // Index-based sparse masks (qkdrop, hash) run SCFA's kernel, not the dense/causal one: its
  // efficiency relative to attention_efficiency (a less tuned Triton kernel is below 1).
  double sparse_kernel_efficiency = 1.0;
  // Work outside the sparse kernel, memory-bound at memory_efficiency of HBM bandwidth and
  // linear in tokens x heads (x head_dim): HBM bytes per token x head x head_dim element that
  // the gathers and the scatter move, in the forward and again in the backward. 16 = read +
  // write of four bf16 tensors (forward: gather Q, K, V, scatter O; backward: gather dO,
  // scatter dQ, dK, dV).
  double sparse_prep_bytes_per_element = 16;
  // Hash masks only, forward: HBM bytes per token x head of the stable sort by bucket. 256 =
  // Q and K sides x (8-byte key + 8-byte index) x read + write x 4 radix passes (an assumption).
  double hash_sort_bytes_per_token = 256;
  // Activation rematerialisation of whole transformer blocks (JAX remat with the
  // 'nothing_saveable' policy, as the Ring Attention code's documented training command sets
  // remat_block / remat_attention / remat_mlp): the backward pass first recomputes the block's
  // forward, the attention ring's forward included, then runs the backward. Only the block
  // input is kept per layer (see models::predict's memory estimate).
  bool recompute = false;
  // Attention-only recomputation (Megatron's --recompute-modules core_attn, TE's checkpointed
  // core attention): the backward re-runs the attention forward, nothing else. A training
  // policy (models/memory: apply_recompute), not a calibrated property: never read from or
  // written to a profile file.
  bool recompute_attention = false;
  // FP8 training (TransformerEngine's recipes): the layers' matmuls on FP8 tensor cores with their
  // casts (models/workload/transformer.hpp StepShape::fp8). A training policy like the one above
  // (models/memory: apply_precision), never read from or written to a profile file.
  bool fp8_matmuls = false;
  [[nodiscard]] bool recomputes_attention() const noexcept { return recompute || recompute_attention; }
  TileShape default_tile{128, 128};

  // What the fit left uncertain: the covariance of the fitted parameters and the spread of the
  // held-out (leave-one-group-out) residuals of log time, from which predictions get intervals
  // (models/analytic/interval.hpp). Empty when nothing was fitted.
  struct Uncertainty {
    std::vector<std::string> parameters;
    std::vector<std::vector<double>> covariance;  // of `parameters`, in their units
    // Standard deviation of held-out log(predicted / measured), per predicted quantity: "time"
    // (absolute seconds) and "ratio" (a layout's speedup over another); absent: not calibrated.
    // "time_derived" and "ratio_derived": the same when this fit's per-GPU parameters predict
    // another fitted GPU (calibration::derived_from_other_gpus), which a profile derived from
    // this one takes as its own spread (calibrate --derive-from).
    std::map<std::string, double> residual_log_sd;
    std::int64_t held_out_points = 0;
    [[nodiscard]] bool empty() const noexcept { return parameters.empty() && residual_log_sd.empty(); }
  } uncertainty;

  // The kernel family of the implementation this profile is for, and the family parameters it
  // reads (models/cost/profile_params.hpp): set by Catalog::profile. Empty family: a profile
  // read outside a catalog, which keeps and writes every parameter.
  std::string kernel_family;
  std::vector<std::string> family_parameters;
  // Whether the profile's kernel family reads parameter `name` (every common one does; a
  // profile without a family reads them all); false for a name that is no parameter.
  [[nodiscard]] bool reads(std::string_view name) const noexcept;

  // A numeric field by its JSON name (models/cost/profile_params.hpp: efficiencies, overheads,
  // penalties, byte counts); nullptr for any other name.
  [[nodiscard]] double* parameter(std::string_view name) noexcept;
  // What a transfer reaches on a link of `link_bytes_per_s`: link_efficiency of it. The cost
  // model's collectives and the simulator's links use it.
  [[nodiscard]] double link_bytes_per_s(double link_bytes_per_s) const noexcept;
  // A transfer's latency on a link of latency `link_latency_s`: the profile's override of the link's.
  [[nodiscard]] double link_latency(double link_latency_s) const noexcept;
  // A ring hop, the library's point-to-point send/recv: at most p2p_bandwidth_bytes_per_s of the
  // link (NCCL's few channels per peer), and p2p_latency_s more latency. Collectives are not
  // limited by it.
  [[nodiscard]] double p2p_bytes_per_s(double link_bytes_per_s) const noexcept;
  // What a point-to-point transfer reaches over a path of `bytes_per_s`: at most the p2p limit.
  [[nodiscard]] double p2p_limit(double bytes_per_s) const noexcept;
  [[nodiscard]] double p2p_latency(double link_latency_s) const noexcept;
  // A ring hop of one type on `hw`: the hardware's measured point-to-point figures when it has
  // them (configs/links: a measured property of the hop type, models/hardware/point_to_point.hpp), else
  // p2p_bytes_per_s and p2p_latency of the link spec. The profile's p2p limit and extra latency
  // apply to both (shipped profiles set neither).
  struct Hop {
    double bandwidth_bytes_per_s = 0;
    double latency_s = 0;
    bool measured = false;
  };
  [[nodiscard]] Hop ring_hop(const Hardware& hw, bool inter_node) const noexcept;
  [[nodiscard]] const double* parameter(std::string_view name) const noexcept;

  [[nodiscard]] static Profile spec_default(const Hardware& hw);
  // Fields absent from the JSON keep `base`'s values, so a profile file may override a few.
  // to_json writes the common parameters and those of kernel_family (all when it is empty).
  [[nodiscard]] static Profile from_json(const nlohmann::json& j, const std::string& file, Profile base);
  [[nodiscard]] nlohmann::json to_json() const;
  void validate(const std::string& file) const;
};

// The machine a scenario's transfers run on: the hardware's machine, its NVLink ports and NICs
// replaced by the measured hops where configs/links has them (a probe measures what a hop
// reaches, so it is the resource's capacity), and `scale` the capacity factor: the profile's
// link efficiency on a machine given by its link specs (no "machine" block), 1 on a described
// one, whose figures are what transfers reach. Latencies of the flat machine are the profile's
// (link_latency_s overrides the hardware's).
[[nodiscard]] MachineSpec transport_machine(const Hardware& hw, const Profile& profile, double& scale);
// A string that changes whenever the transport built from (machine, scale) would.
[[nodiscard]] std::string transport_signature_of(const MachineSpec& machine, double scale);

class CostModel {
 public:
  // mask_kind: index-based masks (QKDrop, Hash) run the sparse kernel and pay its preprocessing.
  CostModel(const Hardware& hw, const Profile& profile, const ModelConfig& model, std::int64_t mp, std::int64_t batch,
            std::int64_t mask_heads, MaskKind mask_kind = MaskKind::Causal);

  // Seconds a device spends on one block's attention tiles. The backward includes the
  // recomputed forward when the profile rematerialises blocks (recompute).
  [[nodiscard]] double attention_fwd_s(const BlockStats& b) const noexcept;
  [[nodiscard]] double attention_bwd_s(const BlockStats& b) const noexcept;
  // Visited area weighted for masked tiles, plus what skipped tiles still cost, over the
  // visited area: the factor on a block's compute time.
  [[nodiscard]] double masked_factor(const BlockStats& b) const noexcept;
  // The block's head-independent per-tile seconds: every visited tile's fixed cost (per sequence
  // of the batch), and masked and skipped tiles' fixed costs (Profile::masked_tile_s, skipped_tile_s).
  [[nodiscard]] double tile_constants_s(const BlockStats& b) const noexcept;
  // Profile::round_bytes_per_element over a block of `tokens` of the device's heads and batch.
  [[nodiscard]] double round_memory_s(std::int64_t tokens) const noexcept;
  // FLOPs the kernel executes for a block (visited tiles at full size, head_dim padded to the
  // matrix unit's width: every attention matmul has head_dim as its contraction or output
  // dimension), forward.
  [[nodiscard]] double attention_fwd_flops(const BlockStats& b) const noexcept;
  // Useful FLOPs (allowed pairs only), forward: what MFU counts.
  [[nodiscard]] double attention_useful_fwd_flops(const BlockStats& b) const noexcept;

  // Seconds one device spends per layer outside the sparse kernel on `tokens` local tokens of
  // all its heads (gather/scatter, and for hash masks the sort): 0 for masks that are not
  // index-based, which the kernel reads directly.
  [[nodiscard]] double sparse_prep_fwd_s(std::int64_t tokens) const noexcept;
  [[nodiscard]] double sparse_prep_bwd_s(std::int64_t tokens) const noexcept;
  [[nodiscard]] bool index_mask() const noexcept { return index_mask_; }

  [[nodiscard]] double link_bandwidth_bytes_per_s(bool inter_node) const noexcept;
  [[nodiscard]] double link_latency_s(bool inter_node) const noexcept;
  [[nodiscard]] double transfer_s(double bytes, bool inter_node) const noexcept;
  // A ring hop's transfer (Profile::p2p_bytes_per_s and p2p_latency).
  [[nodiscard]] double ring_bandwidth_bytes_per_s(bool inter_node) const noexcept;
  [[nodiscard]] double ring_latency_s(bool inter_node) const noexcept;
  [[nodiscard]] double ring_transfer_s(double bytes, bool inter_node) const noexcept;
  [[nodiscard]] double overlapped_s(double compute_s, double transfer_s) const noexcept;
  // A ring step's compute while its transfer runs beside it: NCCL's send/receive kernel holds some
  // of the SMs (transport/nccl_ctas.hpp) for the transfer's duration, and the attention kernel runs
  // on the others meanwhile. `group_spans_nodes`: the ring's communicator reaches another node.
  [[nodiscard]] double beside_comm_s(double compute_s, double transfer_s, bool group_spans_nodes) const noexcept;
  // The share of the SMs NCCL's kernel holds during a ring step (0: none).
  [[nodiscard]] double comm_sm_share(bool group_spans_nodes) const noexcept {
    return group_spans_nodes ? comm_share_spanning_ : comm_share_local_;
  }
  // Sets those shares (construction takes them from the hardware: transport/nccl_ctas.hpp); a
  // test sets 0 to look at another effect alone.
  void set_comm_sm_share(double local, double spanning) noexcept {
    comm_share_local_ = local;
    comm_share_spanning_ = spanning;
  }
  [[nodiscard]] double op_s(const Op& op, bool collective_inter_node) const noexcept;

  // The scenario's fabric (models/transport/): set by resolve once the strategy's rings are known.
  // Ring hops then take the ring pattern's fair-share rates (the slowest hop of each kind; a ring
  // that leaves its node waits for its slowest hop, intra-node or not) under the profile's p2p
  // limit, and collectives run as NCCL runs them (collective_cost.hpp, op_s). Without one (a cost
  // model built alone) the hop types' figures above.
  void set_transport(std::shared_ptr<const transport::ScenarioTransport> t, const transport::HopRates& ring);
  [[nodiscard]] const transport::ScenarioTransport* transport() const noexcept { return transport_.get(); }
  // What bounds a ring hop of each kind, in words (empty without a transport).
  [[nodiscard]] const std::string& ring_bound(bool inter_node) const noexcept { return inter_node ? ring_bound_inter_ : ring_bound_intra_; }

  [[nodiscard]] std::int64_t heads_per_device() const noexcept { return heads_per_device_; }
  [[nodiscard]] std::int64_t kv_heads_per_device() const noexcept { return kv_heads_per_device_; }

 private:
  // The figures the formulas read, copied as numbers: a CostModel stays valid when the
  // scenario that built it is moved, and building one allocates nothing.
  double head_dim_;
  double padded_head_dim_;  // head_dim as the matrix unit computes it (Hardware::padded_to_matrix_unit)
  double tile_overhead_s_;
  double attention_bwd_factor_;
  bool recompute_attention_;  // the backward pass re-runs the attention forward first
  double masked_tile_penalty_;
  double skipped_tile_cost_;
  double masked_tile_s_;
  double skipped_tile_s_;
  double round_bytes_per_element_;
  double overlap_;
  double comm_share_local_ = 0, comm_share_spanning_ = 0;  // SMs NCCL's ring-step kernel holds, over all
  double memory_bytes_per_s_;                 // HBM bandwidth x memory efficiency
  double intra_bytes_per_s_, inter_bytes_per_s_;  // link bandwidth x link efficiency
  double intra_latency_s_, inter_latency_s_;  // the profile's override, else the hardware's
  Profile::Hop ring_intra_, ring_inter_;  // a ring hop of each type (Profile::ring_hop, or the transport's)
  double p2p_limit_bytes_per_s_ = 0;       // Profile::p2p_bandwidth_bytes_per_s (0: none)
  double p2p_extra_latency_s_ = 0;         // Profile::p2p_latency_s
  bool machine_described_ = false;         // the hardware has a "machine" block
  std::shared_ptr<const transport::ScenarioTransport> transport_;
  std::string ring_bound_intra_, ring_bound_inter_;
  std::int64_t mp_;
  std::int64_t batch_;
  std::int64_t heads_per_device_;
  std::int64_t kv_heads_per_device_;
  double head_multiplier_;  // heads each counted tile stands for
  double attn_flops_per_s_;
  double matmul_flops_per_s_;
  double fp8_matmul_flops_per_s_;  // FP8 tensor cores at the matmul efficiency (0: the hardware has none)
  bool index_mask_ = false;
  double prep_fwd_bytes_per_token_ = 0;  // per token of one device, all its heads and the batch
  double prep_bwd_bytes_per_token_ = 0;
};

}  // namespace ringsim::models
