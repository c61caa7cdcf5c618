#pragma once
// What one flash-attention kernel does, read from its code: its launch code's CTA tiles per head
// dim and pass, its registers, and its per-element work (configs/kernels/NAME.json). The flash
// family (models/families/kernel_time.hpp) times its calls from it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/io/code_source.hpp"

namespace ringsim::models {

// What a launch code asks of the GPU when it picks a tile: its compute capability and the
// shared memory a CTA may opt in to and an SM holds (cudaDevAttrMaxSharedMemoryPerBlockOptin,
// cudaDevAttrMaxSharedMemoryPerMultiprocessor). 0: unknown, which no condition on it meets.
struct TileDevice {
  std::int64_t compute_capability = 0;  // x 10 (89 for 8.9), as Hardware::compute_capability
  std::int64_t smem_per_block_bytes = 0;
  std::int64_t smem_per_sm_bytes = 0;
};

// The branch of the launch code a tile sits in ("when" of a tile in configs/kernels): the tile
// is picked where every condition given holds. FlashAttention-2's run_mha_fwd_hdim128 picks by
// is_sm8x (compute capability 8.1 to 8.9) and the mask, its backward by the shared memory a
// CTA may use. Unset fields (nullopt, 0) do not constrain.
struct TileWhen {
  std::optional<bool> causal;
  std::int64_t compute_capability_at_least = 0, compute_capability_below = 0;  // x 10
  std::int64_t smem_per_block_at_least = 0, smem_per_sm_below = 0;
  [[nodiscard]] bool any() const noexcept {
    return causal || compute_capability_at_least || compute_capability_below || smem_per_block_at_least ||
           smem_per_sm_below;
  }
  [[nodiscard]] bool holds(const TileDevice& d, bool is_causal) const noexcept;
};

// One CTA tile configuration of a kernel's launch code.
struct KernelTile {
  std::int64_t max_head_dim = 0;  // used for head dims up to this one (the first that fits)
  std::int64_t block_m = 0;       // query rows per CTA tile
  std::int64_t block_n = 0;       // keys per CTA tile
  std::int64_t warps = 4;
  std::int64_t smem_bytes = 0;    // shared memory of one CTA
  // A backward tile's warps in its matrix products (FlashAttention-2's Flash_bwd_kernel_traits):
  // along the query rows of S = Q K^T and dP = dO V^T (AtomLayoutMSdP, the rest along the keys),
  // along the keys of dV = P^T dO and dK = dS^T Q (AtomLayoutNdKV, the rest along the head dim),
  // along the query rows of dQ = dS K (AtomLayoutMdQ); and whether V stays in registers
  // (Is_V_in_regs, so dP reads no V from shared memory). 0: not given (no backward bound).
  std::int64_t atom_m_sdp = 0, atom_n_dkv = 0, atom_m_dq = 0;
  bool v_in_regs = false;
  TileWhen when{};  // on which GPUs and masks: the first tile of a head dim whose `when` holds
};

// A forward that splits the keys of a call over several CTAs per query block when the call alone
// would leave SMs idle (FlashAttention-2 >= 2.2, flash_api.cpp num_splits_heuristic; FlashAttention-3,
// hopper/heuristics.h): with W = batch x heads x query blocks of the split tile's block_m rows and S = slots_per_sm x
// SMs, no split when W >= fill_fraction x S or the call has at most unsplit_key_blocks key tiles;
// else, over the split counts n <= min(max_splits, S, key blocks) (FlashAttention-2: only those that
// change the keys per split), the smallest whose wave efficiency (W n / S) / ceil(W n / S) reaches
// efficiency_fraction of the best. Each split is one CTA of the split kernel's tile.
// FlashAttention-3 packs a K/V head's query heads into the rows of a split call (PackGQA): W counts
// batch x K/V heads x blocks of block_m (token, query head) rows.
struct SplitKv {
  std::vector<KernelTile> tiles;  // the split kernel's tiles (block_m x block_n per head dim)
  double fill_fraction = 0.8;
  std::int64_t slots_per_sm = 2;
  std::int64_t max_splits = 128;
  double efficiency_fraction = 0.85;
  bool pack_gqa = false;
  bool skip_equal_key_splits = true;
  std::int64_t unsplit_key_blocks = 0;
  // Splits of a call with `work` CTAs of block_m rows and `key_blocks` key tiles on `sm_count` SMs.
  [[nodiscard]] std::int64_t splits(std::int64_t work, std::int64_t key_blocks, std::int64_t sm_count) const;
};

// The first of `tiles` (in launch-code order) whose max_head_dim covers `head_dim` and whose
// `when` holds on `device` under the mask; nullptr if none.
[[nodiscard]] const KernelTile* tile_for(const std::vector<KernelTile>& tiles, std::int64_t head_dim, bool causal,
                                         const TileDevice& device) noexcept;

// What one flash-attention kernel does, read from its code (configs/kernels/NAME.json; an
// implementation names the kernel it calls in "kernel_model").
struct KernelSpec {
  std::string name;
  std::string description;
  std::vector<CodeSource> sources;  // where each figure was read
  std::string notes;
  // In the launch code's order; a head dim's branches (KernelTile::when) before its last tile,
  // which has none (the launch code's else).
  std::vector<KernelTile> fwd_tiles, bwd_tiles;
  std::int64_t registers_per_thread = 255;
  // Per element of a visited tile (one head): exponentials (special-function unit) and other fp32
  // operations (max, scale, sum, conversions; FMA counted once), forward and backward.
  double fwd_exp_per_element = 1, bwd_exp_per_element = 1;
  double fwd_alu_per_element = 0, bwd_alu_per_element = 0;
  double mask_alu_per_element = 0;  // extra, per element of a tile that straddles the diagonal
  // The forward's shared-memory traffic per head-dim element of a tile, in bytes: what every warp
  // reads of each key tile (K and V, when warps split the tile's queries and each multiplies by
  // the whole key tile), what each key tile costs to write once, and what re-reading the query
  // tile per key tile costs. Per element of a block_m x block_n tile at head dim d:
  // d x ((kv_read x warps + kv_write) / block_m + q_read / block_n) bytes (fwd_smem_bytes). 0: no
  // shared-memory bound.
  double fwd_smem_kv_read_bytes_per_warp = 0, fwd_smem_kv_write_bytes = 0, fwd_smem_q_read_bytes = 0;
  // The backward's shared-memory traffic follows from its tiles' warp layouts (KernelTile::atom_*)
  // and the bytes of one operand element (2: fp16/bf16): bwd_smem_bytes. 0: no backward bound.
  double bwd_smem_element_bytes = 0;
  double bwd_flops_factor = 2.5;    // backward matrix FLOPs / forward (5 products against 2)
  // Memory-bound kernels around the backward (HBM bytes per query element: rows x heads x head_dim).
  double bwd_pre_bytes_per_q_element = 0;
  double bwd_post_bytes_per_q_element = 0;
  std::int64_t fwd_launches = 1, bwd_launches = 1;
  std::optional<SplitKv> fwd_split_kv;  // none: the forward never splits the keys

  // The tile the launch code runs for `head_dim` on `device` under the mask; throws InputError
  // past the largest head dim.
  [[nodiscard]] const KernelTile& tile(bool backward, std::int64_t head_dim, bool causal,
                                       const TileDevice& device) const;
  // Shared-memory bytes per element of forward tile `t` (see fwd_smem_kv_read_bytes_per_warp).
  [[nodiscard]] double fwd_smem_bytes(const KernelTile& t) const noexcept;
  // Shared-memory bytes per element of backward tile `t`, one head: each of the five products
  // reads its operands through shared memory, every warp the rows or columns its place in the
  // warp layout needs; the Q and dO tiles and P and dS are written once. With M = block_m,
  // N = block_n, W warps, head dim d, e bytes an element and aM, aN, aQ the atoms:
  // e (2 d (1 + W/aM + aN) / N + d (aM + aQ + (V in registers ? 0 : aM)) / M + 2 + 2 W/aN + W/aQ).
  // 0 where the kernel or the tile gives no layout.
  [[nodiscard]] double bwd_smem_bytes(const KernelTile& t) const noexcept;
  [[nodiscard]] static KernelSpec from_json(const nlohmann::json& j, const std::string& file);
  [[nodiscard]] static KernelSpec load_file(const std::string& path);
  // The kernel NAME of configs/kernels/ (kernels_dir/NAME.json); a missing or malformed name is
  // the mistake of `file` at `field`, where the name was written.
  [[nodiscard]] static KernelSpec load_named(const std::string& kernels_dir, const std::string& name,
                                             const std::string& file, const std::string& field);
};

}  // namespace ringsim::models
