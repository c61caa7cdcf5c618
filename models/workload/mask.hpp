#pragma once
// Which (query, key) pairs may interact, in global token positions. Structured masks count
// allowed pairs between two sets of positions given as arithmetic progressions in closed form;
// index-based sparse masks (query/key dropping, hash buckets) override visit_block to work on
// their compacted / sorted per-head index lists, so callers never change.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/io/function_ref.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/mask_spec.hpp"

namespace ringsim::models {

struct TileShape {
  std::int64_t q = 0;  // queries per tile
  std::int64_t k = 0;  // keys per tile
  friend bool operator==(const TileShape&, const TileShape&) = default;
};

// One tile of a (Q block, K/V block) pair, over local indices.
struct TileCount {
  std::int64_t q_tile = 0;  // tile row
  std::int64_t k_tile = 0;  // tile column
  std::int64_t rows = 0;    // queries in this tile (the last row of tiles may be short)
  std::int64_t cols = 0;    // keys in this tile
  std::int64_t allowed = 0; // allowed (query, key) pairs
  bool visited = false;     // the kernel runs this tile (== allowed > 0 for structured masks)
};

using TileVisitor = FunctionRef<void(const TileCount&)>;

// Totals of one (Q block, K/V block) pair's tiles, summed over mask heads.
struct BlockStats {
  std::int64_t tiles_total = 0;
  std::int64_t tiles_computed = 0;
  std::int64_t tiles_visited = 0;
  std::int64_t allowed_pairs = 0;
  std::int64_t visited_area = 0;
  std::int64_t masked_area = 0;   // visited area in tiles that also hold masked pairs
  std::int64_t tiles_masked = 0;  // visited tiles that also hold masked pairs (the tiles of masked_area)
  std::int64_t skipped_area = 0;  // area of tiles not visited
  // Adds `count` copies of `s` (every field): totals over blocks, calls or devices.
  void add(const BlockStats& s, std::int64_t count = 1) noexcept {
    tiles_total += s.tiles_total * count;
    tiles_computed += s.tiles_computed * count;
    tiles_visited += s.tiles_visited * count;
    allowed_pairs += s.allowed_pairs * count;
    visited_area += s.visited_area * count;
    masked_area += s.masked_area * count;
    tiles_masked += s.tiles_masked * count;
    skipped_area += s.skipped_area * count;
  }
  friend bool operator==(const BlockStats&, const BlockStats&) = default;
};

enum class MaskKind { Causal, Full, Window, Documents, QKDrop, Hash };

class Mask {
 public:
  virtual ~Mask() = default;
  [[nodiscard]] virtual MaskKind kind() const noexcept = 0;
  [[nodiscard]] virtual std::string name() const = 0;

  // Element predicate in global positions: the brute-force oracle and CPU kernels use it.
  [[nodiscard]] virtual bool allowed(std::int64_t q, std::int64_t p, std::int64_t head) const noexcept = 0;

  // Heads with distinct masks: 1 means "the same mask for every head" (structured masks);
  // index-based masks have one per head and the workload sums their tiles.
  [[nodiscard]] virtual std::int64_t heads() const noexcept { return 1; }

  // Allowed pairs between query positions `q` and key positions `k` (structured masks).
  [[nodiscard]] virtual std::int64_t count(std::span<const Progression> q, std::span<const Progression> k) const = 0;

  // Visits every tile of the block (Q of q_device) x (K/V of k_device) in row-major tile order.
  virtual void visit_block(const Layout& layout, std::int64_t q_device, std::int64_t k_device, TileShape tile,
                           std::int64_t head, TileVisitor visit) const;

  // Whole-block statistics without visiting every tile, where the mask knows a shortcut for
  // this layout; returns false to fall back on visit_block. (Declared here, BlockStats is
  // models/workload/workload.hpp's; the default has no shortcut.)
  [[nodiscard]] virtual bool block_shortcut(const Layout& layout, std::int64_t q_device, std::int64_t k_device,
                                            TileShape tile, BlockStats& out) const;

  // Estimated loop iterations of counting one block's tiles (block_shortcut or visit_block, all
  // heads), an upper bound up to a constant: the size checks (models/scenario/size_checks.hpp) refuse a
  // scenario whose counting would run for hours before they start it.
  [[nodiscard]] virtual double count_steps(const Layout& layout, TileShape tile) const noexcept;

  // Counts depend only on q - p (causal, full, window): blocks of shift-invariant layouts then
  // depend only on the device difference.
  [[nodiscard]] virtual bool shift_invariant() const noexcept { return false; }
  // Counts depend only on whether p <= q (causal, full): blocks of order-class layouts then
  // depend only on sign(q device - k device).
  [[nodiscard]] virtual bool order_only() const noexcept { return false; }
  // Start positions of the documents of a per-document causal mask (null for other masks): the
  // non-ring strategies issue one kernel call per document.
  [[nodiscard]] virtual const std::vector<std::int64_t>* document_starts() const noexcept { return nullptr; }
  // A sliding window's width (keys q - W < p <= q), else none.
  [[nodiscard]] virtual std::optional<std::int64_t> window() const noexcept { return std::nullopt; }

 protected:
  // Exact answer from the positions' ranges alone, when the ranges decide it (all allowed or
  // none); lets visit_block skip the closed-form count for tiles off the mask's boundary.
  [[nodiscard]] virtual std::optional<std::int64_t> decided_by_range(std::int64_t q_min, std::int64_t q_max,
                                                                     std::int64_t k_min, std::int64_t k_max,
                                                                     std::int64_t n_pairs) const noexcept;
};

// The dense masks: causal | full | window:W | docs:FILE. FILE lists document start positions
// (whitespace separated, strictly increasing, in [0, n_seq); 0 may be omitted); '#' starts a
// comment. The sparse families are built by make_sparse_mask (sparse_io.hpp).
[[nodiscard]] std::unique_ptr<Mask> make_mask(const MaskSpec& spec, std::int64_t n_seq);

[[nodiscard]] std::unique_ptr<Mask> make_causal();
[[nodiscard]] std::unique_ptr<Mask> make_full();
[[nodiscard]] std::unique_ptr<Mask> make_window(std::int64_t window);
[[nodiscard]] std::unique_ptr<Mask> make_documents(std::vector<std::int64_t> starts, std::int64_t n_seq);

// Pairs (q in a, p in b) with p <= q + offset, exactly, in O(log) (floor-sum).
[[nodiscard]] std::int64_t count_pairs_le(const Progression& a, const Progression& b, std::int64_t offset) noexcept;

}  // namespace ringsim::models
