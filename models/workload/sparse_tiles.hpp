#pragma once
// The tile rule of Sparse Causal Flash Attention (SCFA, see
// shared/background/sparse-flash-attention.md) on one device's rows, independent of where the
// rows came from. Both index-based masks reduce to it: query/key dropping is the one-group case
// (rows = kept positions), hash buckets the many-group case (rows = all positions, stably
// sorted by bucket). A query row attends a key row iff they share a group and key position <=
// query position.
#include <cstdint>
#include <vector>

#include "models/workload/mask.hpp"

namespace ringsim::models {

// Rows of Q or of K/V after SCFA's per-device preprocessing, as one sorted array of keys
// (group << 32) | position: sorted by group, then position. One 64-bit compare orders rows,
// which keeps the merges branch-free. Query/key dropping uses group 0 throughout; positions
// are < 2^32 (the masks accept n_seq <= 2^30), groups < 2^31, positions distinct.
struct SortedRows {
  static constexpr int kPositionBits = 32;
  static constexpr std::uint64_t kPositionMask = (std::uint64_t{1} << kPositionBits) - 1;

  std::vector<std::uint64_t> key;

  [[nodiscard]] static std::uint64_t make_key(std::int64_t group, std::int64_t pos) noexcept {
    return (static_cast<std::uint64_t>(group) << kPositionBits) | static_cast<std::uint64_t>(pos);
  }
  [[nodiscard]] std::int64_t size() const noexcept { return static_cast<std::int64_t>(key.size()); }
  [[nodiscard]] std::int64_t group(std::int64_t i) const noexcept {
    return static_cast<std::int64_t>(key[static_cast<std::size_t>(i)] >> kPositionBits);
  }
  [[nodiscard]] std::int64_t pos(std::int64_t i) const noexcept {
    return static_cast<std::int64_t>(key[static_cast<std::size_t>(i)] & kPositionMask);
  }
};

// Visits every tile of the (q rows) x (k rows) grid cut into tile.q x tile.k pieces, row-major;
// nothing when either side has no rows. `allowed` is exact; `visited` follows the kernel's range
// rule: the key tiles whose group range overlaps the query tile's (a contiguous run, since keys
// are sorted by group), then trimmed to end after the last of them whose smallest key position
// is <= the query tile's largest query position (empty if there is none). With one group that
// is the QK-sparse rule "key tiles [0, end)". O(rows + tiles).
// Two deliberate differences from the public Triton code (epfml/dynamic-sparse-flash-attention):
// its hash kernel starts the trimmed end at the untrimmed one, so a query tile whose whole
// bucket overlap lies in its future visits all of it (a ring implementation skips such work,
// and so do we); and its hash kernel masks with q > k where the paper and ringsim use k <= q.
void visit_sorted_tiles(const SortedRows& q, const SortedRows& k, TileShape tile, TileVisitor visit);

// Allowed (query row, key row) pairs in total, O(rows) by a merge.
[[nodiscard]] std::int64_t count_sorted_pairs(const SortedRows& q, const SortedRows& k);

// Sorts keys in place: a stable counting sort by group when positions are already increasing
// and groups are few (O(rows + groups)), a comparison sort otherwise. n_groups bounds the
// group ids (0 <= group < n_groups). positions_increasing = true promises that positions
// already increase in the current order (callers that know it from the layout skip a pass);
// false means "unknown", and sort_rows checks.
void sort_rows(SortedRows& rows, std::int64_t n_groups, bool positions_increasing = false);

}  // namespace ringsim::models
