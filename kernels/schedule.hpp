#pragma once
// The tile schedule a flash-attention kernel executes for one (Q block, K/V block) pair, i.e.
// one device in one ring round. The kernel visits exactly the listed tiles (absent tiles are
// skipped, which is how causal and sparse masks save work) and applies each tile's element
// rule inside it. Plain C++ so the CPU side (workload, tests, reference kernels) can build and
// check schedules without CUDA; the few types the GPU reads are trivially copyable.
#include <cstdint>
#include <vector>

#if defined(__CUDACC__)
#define RINGSIM_HOST_DEVICE __host__ __device__
#else
#define RINGSIM_HOST_DEVICE
#endif

namespace ringsim::kernels {

// The element rule inside a visited tile. Full tiles skip the mask arithmetic altogether, which
// is why the builder tells them apart from boundary tiles.
enum class TileKind : std::int32_t {
  Full = 0,         // every pair allowed
  Causal = 1,       // k_pos <= q_pos
  Window = 2,       // q_pos - window < k_pos <= q_pos
  IndexRanges = 3,  // k_pos <= q_pos and equal buckets (no buckets: every token in one bucket)
};

// One visited tile. 16 bytes, read straight from device memory by the kernel.
struct TileItem {
  std::int32_t q_tile = 0;
  std::int32_t k_tile = 0;
  TileKind kind = TileKind::Full;
  std::int32_t window = 0;  // Window only (>= 1)
  // Spelled out: nvcc's device pass compiles this header as C++17 (CMake 3.25 knows no CUDA20).
  friend constexpr bool operator==(const TileItem& a, const TileItem& b) noexcept {
    return a.q_tile == b.q_tile && a.k_tile == b.k_tile && a.kind == b.kind && a.window == b.window;
  }
  friend constexpr bool operator!=(const TileItem& a, const TileItem& b) noexcept { return !(a == b); }
};
static_assert(sizeof(TileItem) == 16, "the kernel reads TileItem as four int32");

// The element rule, shared by the builder, the CPU checks and the GPU kernel so they cannot drift.
// Positions are >= 0 (validated), so q_pos - k_pos cannot overflow int32.
[[nodiscard]] RINGSIM_HOST_DEVICE constexpr bool pair_allowed(TileKind kind, std::int32_t window, std::int32_t q_pos,
                                                              std::int32_t k_pos, std::int32_t q_bucket,
                                                              std::int32_t k_bucket) noexcept {
  switch (kind) {
    case TileKind::Full: return true;
    case TileKind::Causal: return k_pos <= q_pos;
    case TileKind::Window: return k_pos <= q_pos && q_pos - k_pos < window;
    case TileKind::IndexRanges: return k_pos <= q_pos && q_bucket == k_bucket;
  }
  return false;
}

// Q rows and K/V rows are local indices 0..rows-1 / 0..cols-1 of the blocks the device holds;
// their global positions (and buckets) say what the mask sees. Tiles are tile_q x tile_k; the
// last tile row / column may be short. Items are grouped per q tile (CSR): one CTA (or a few,
// when tile_q exceeds the CTA's rows) walks one group's k tiles in increasing order.
struct TileSchedule {
  std::int32_t rows = 0;
  std::int32_t cols = 0;
  std::int32_t tile_q = 0;
  std::int32_t tile_k = 0;
  std::vector<std::int32_t> q_pos;           // size rows, >= 0
  std::vector<std::int32_t> k_pos;           // size cols, >= 0
  std::vector<std::int32_t> q_bucket;        // empty (one bucket) or size rows
  std::vector<std::int32_t> k_bucket;        // empty iff q_bucket is empty, else size cols
  std::vector<std::int32_t> q_tile_offsets;  // size q_tiles() + 1; group t = items[off[t], off[t+1])
  std::vector<TileItem> items;

  [[nodiscard]] std::int32_t q_tiles() const noexcept;
  [[nodiscard]] std::int32_t k_tiles() const noexcept;
  [[nodiscard]] std::int32_t q_tile_rows(std::int32_t q_tile) const noexcept;  // rows in that tile
  [[nodiscard]] std::int32_t k_tile_cols(std::int32_t k_tile) const noexcept;
  [[nodiscard]] bool has_buckets() const noexcept { return !q_bucket.empty(); }

  // Replaces the items with `items` in any order: sorts them by (q_tile, k_tile), rebuilds the
  // offsets and validates (duplicates are an error).
  void set_items(std::vector<TileItem> items);

  // Throws models::InputError naming the offending field when an invariant is broken: the GPU
  // kernel trusts a validated schedule and does no bounds checks of its own on it.
  void validate() const;

  // Whether the kernel treats (q_local, k_local) as allowed under `item`'s rule; both indices
  // must lie in the item's tile.
  [[nodiscard]] bool allowed(const TileItem& item, std::int32_t q_local, std::int32_t k_local) const noexcept;

  // Pairs the kernel computes (sum of visited tile areas): the cost that tile skipping leaves.
  [[nodiscard]] std::int64_t visited_pairs() const noexcept;
  // Pairs allowed inside visited tiles, counted element by element: O(visited pairs), meant for
  // tests and small blocks, not for the workload model.
  [[nodiscard]] std::int64_t allowed_pairs() const noexcept;
};

// What build_schedule needs: the blocks' positions, the tile shape and the block's mask.
struct ScheduleSpec {
  std::vector<std::int32_t> q_pos;
  std::vector<std::int32_t> k_pos;
  std::vector<std::int32_t> q_bucket;  // IndexRanges only; empty = one bucket
  std::vector<std::int32_t> k_bucket;
  std::int32_t tile_q = 64;
  std::int32_t tile_k = 64;
  TileKind rule = TileKind::Causal;  // the mask of the whole block, as an element rule
  std::int32_t window = 0;           // Window only
};

// Lists every tile that may hold an allowed pair, from per-tile position and bucket ranges in
// O(rows + cols + tiles): a tile is Full when its ranges prove every pair allowed, skipped when
// they prove none is (exact for Causal; conservative for Window and buckets on non-monotone
// positions, as in SCFA: a visited tile may then hold no allowed pair), and of `rule`'s kind
// otherwise. IndexRanges without buckets builds Causal items (the same rule, cheaper name).
[[nodiscard]] TileSchedule build_schedule(ScheduleSpec spec);

// Positions start, start + stride, ...: contiguous blocks (stride 1) and striped blocks
// (stride = ring size) without going through models::Layout.
[[nodiscard]] std::vector<std::int32_t> strided_positions(std::int32_t start, std::int32_t stride, std::int32_t count);

}  // namespace ringsim::kernels
