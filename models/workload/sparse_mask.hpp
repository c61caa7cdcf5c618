#pragma once
// Index-based sparse masks of Sparse Causal Flash Attention (SCFA): per-head query/key
// dropping and per-head hash buckets. Each device preprocesses its own Q block and each K/V
// block as SCFA does on one GPU (compaction of kept rows / stable sort by bucket), and the
// tile counts come from visit_sorted_tiles (models/workload/sparse_tiles.hpp): exact allowed pairs plus
// the kernel's visited-tile range rule. Each device's rows are built once per (layout, head,
// side) and memoised inside the mask (models/workload/sparse_rows_cache.hpp), so visiting all N x N
// blocks of a ring costs O(n_seq log) for the rows plus O(rows + tiles) per block.
// Generators, loaders and the spec parser live in models/workload/sparse_gen.hpp and models/workload/sparse_io.hpp.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"
#include "models/workload/sparse_rows_cache.hpp"
#include "models/workload/sparse_tiles.hpp"

namespace ringsim::models {

// Per head, the kept query positions and the kept key positions (global token positions).
struct KeptPositions {
  std::vector<std::vector<std::int64_t>> q;  // q[head]: strictly increasing, in [0, n_seq)
  std::vector<std::vector<std::int64_t>> k;  // k[head]: likewise
};

// Per head, a bucket id (>= 0) for the query and for the key at every position.
struct BucketIds {
  std::vector<std::vector<std::int64_t>> q;  // q[head][position], n_seq entries
  std::vector<std::vector<std::int64_t>> k;  // k[head][position], n_seq entries
};

// What SCFA's index-based masks share: each device's rows for a head are a SortedRows list
// (compacted or bucket-sorted), tiles are walked over those lists, and the rows are memoised
// per (layout, head, device). A derived mask only says how one side's rows are built.
class SortedRowsMask : public Mask {
 public:
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::int64_t heads() const noexcept override { return heads_; }
  // Summed over heads (the workload sums heads too); O((|q| + |k|) log) per head.
  [[nodiscard]] std::int64_t count(std::span<const Progression> q, std::span<const Progression> k) const override;
  void visit_block(const Layout& layout, std::int64_t q_device, std::int64_t k_device, TileShape tile,
                   std::int64_t head, TileVisitor visit) const override;
  // Per head: a walk over the block's rows (built once per device, then memoised) and tiles.
  [[nodiscard]] double count_steps(const Layout& layout, TileShape tile) const noexcept override;

  [[nodiscard]] std::int64_t n_seq() const noexcept { return n_seq_; }
  // One device's Q (or K/V) rows as SCFA lays them out before tiling.
  [[nodiscard]] SortedRows query_rows(const Layout& layout, std::int64_t device, std::int64_t head) const;
  [[nodiscard]] SortedRows key_rows(const Layout& layout, std::int64_t device, std::int64_t head) const;

 protected:
  SortedRowsMask(std::string name, std::int64_t n_seq) : name_(std::move(name)), n_seq_(n_seq) {}
  // The rows of the query (or key) side of `head` over `positions`, given in local order.
  [[nodiscard]] virtual SortedRows side_rows(bool query, std::span<const Progression> positions,
                                             std::int64_t head) const = 0;

  std::string name_;
  std::int64_t n_seq_ = 0;
  std::int64_t heads_ = 0;

 private:
  [[nodiscard]] SortedRows device_rows(bool query, const Layout& layout, std::int64_t device, std::int64_t head) const;
  std::unique_ptr<SparseRowsCache> cache_ = std::make_unique<SparseRowsCache>();
};

// Query/key dropping: a kept query attends the kept keys at positions <= its own.
class QKDropMask final : public SortedRowsMask {
 public:
  // Throws InputError (field "mask") unless there is at least one head, q and k have the same
  // head count, and every list is strictly increasing inside [0, n_seq).
  QKDropMask(const KeptPositions& kept, std::int64_t n_seq, std::string name = "qkdrop");

  [[nodiscard]] MaskKind kind() const noexcept override { return MaskKind::QKDrop; }
  [[nodiscard]] bool allowed(std::int64_t q, std::int64_t p, std::int64_t head) const noexcept override;

  [[nodiscard]] bool query_kept(std::int64_t pos, std::int64_t head) const noexcept;
  [[nodiscard]] bool key_kept(std::int64_t pos, std::int64_t head) const noexcept;
  [[nodiscard]] std::int64_t kept_query_count(std::int64_t head) const;
  [[nodiscard]] std::int64_t kept_key_count(std::int64_t head) const;
  [[nodiscard]] KeptPositions kept() const;

  // Rows after SCFA's compaction: the kept positions, in position order (query_rows/key_rows).

 private:
  [[nodiscard]] SortedRows side_rows(bool query, std::span<const Progression> positions,
                                     std::int64_t head) const override;
  [[nodiscard]] SortedRows rows(const std::vector<std::uint64_t>& bits, std::span<const Progression> positions,
                                std::int64_t head) const;

  std::int64_t words_ = 0;            // 64-bit words per head in the bitsets
  std::vector<std::uint64_t> q_bits_;  // head-major: bit p of head h = query p kept
  std::vector<std::uint64_t> k_bits_;
  std::vector<std::int64_t> q_kept_;   // kept queries per head
  std::vector<std::int64_t> k_kept_;
};

// Hash buckets: a query attends the keys of its own bucket at positions <= its own.
class HashMask final : public SortedRowsMask {
 public:
  // Throws InputError (field "mask") unless there is at least one head, q and k have the same
  // head count, every head lists n_seq ids per side, and every id is >= 0.
  HashMask(const BucketIds& buckets, std::int64_t n_seq, std::string name = "hash");

  [[nodiscard]] MaskKind kind() const noexcept override { return MaskKind::Hash; }
  [[nodiscard]] bool allowed(std::int64_t q, std::int64_t p, std::int64_t head) const noexcept override;

  [[nodiscard]] std::int64_t query_bucket(std::int64_t pos, std::int64_t head) const noexcept;
  [[nodiscard]] std::int64_t key_bucket(std::int64_t pos, std::int64_t head) const noexcept;
  // Distinct bucket ids used by the head's queries and keys together.
  [[nodiscard]] std::int64_t bucket_count(std::int64_t head) const;

  // Rows after SCFA's stable sort (query_rows/key_rows): group = the bucket's rank among the
  // head's bucket ids (same order as the ids), positions increasing inside a bucket.

 private:
  [[nodiscard]] SortedRows side_rows(bool query, std::span<const Progression> positions,
                                     std::int64_t head) const override;
  [[nodiscard]] SortedRows rows(const std::vector<std::int32_t>& rank, std::span<const Progression> positions,
                                std::int64_t head) const;

  // Buckets are stored as dense ranks so sorting a block costs O(rows + buckets) whatever the
  // ids are; ids_[h][rank] gives the id back.
  std::vector<std::int32_t> q_rank_;  // head-major, n_seq per head
  std::vector<std::int32_t> k_rank_;
  std::vector<std::vector<std::int64_t>> ids_;
};

}  // namespace ringsim::models
