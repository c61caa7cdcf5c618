#pragma once
// The tile rule of Sparse Causal Flash Attention (SCFA, see
// shared/background/sparse-flash-attention.md) on one device's rows, independent of where the
// rows came from. Both index-based masks reduce to it: query/key dropping is the one-group case
// (rows = kept positions), hash buckets the many-group case (rows = all positions, stably
// sorted by bucket). A query row attends a key row iff they share a group and key position <=
// query position.
#include <cstdint>
#include <vector>

#include "models/mask.hpp"

namespace ringsim::models {

// Rows of Q or of K/V after SCFA's per-device preprocessing: sorted by (group, position),
// positions distinct. `group` empty means every row is in group 0 (query/key dropping), which
// lets the counting skip the group comparisons.
struct SortedRows {
  std::vector<std::int32_t> group;
  std::vector<std::int64_t> pos;
  [[nodiscard]] std::int64_t size() const noexcept { return static_cast<std::int64_t>(pos.size()); }
  [[nodiscard]] bool grouped() const noexcept { return !group.empty(); }
};

// Visits every tile of the (q rows) x (k rows) grid cut into tile.q x tile.k pieces, row-major;
// nothing when either side has no rows. `allowed` is exact; `visited` follows the kernel's range
// rule: the key tiles whose group range overlaps the query tile's (a contiguous run, since keys
// are sorted by group), then trimmed to end after the last of them whose smallest key position
// is <= the query tile's largest query position (empty if there is none). With one group that
// is the QK-sparse rule "key tiles [0, end)". O(rows + tiles).
void visit_sorted_tiles(const SortedRows& q, const SortedRows& k, TileShape tile, TileVisitor visit);

// Allowed (query row, key row) pairs in total, O(rows) by a merge.
[[nodiscard]] std::int64_t count_sorted_pairs(const SortedRows& q, const SortedRows& k);

// Sorts rows by (group, position) in place: a stable counting sort by group when positions are
// already increasing and groups are few, a comparison sort otherwise. n_groups bounds the group
// ids (0 <= group < n_groups); ignored for ungrouped rows.
void sort_rows(SortedRows& rows, std::int64_t n_groups);

}  // namespace ringsim::models
