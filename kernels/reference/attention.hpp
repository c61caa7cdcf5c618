#pragma once
// CPU attention for one sequence with the online ("lazy") softmax of Rabe & Staats and
// FlashAttention. A Partial keeps, per query row and head, the unnormalised output, the running
// max and the running sum of exponentials, so K/V blocks may arrive in any order (a ring) and
// partials computed against different blocks can be merged. The arithmetic runs in fp32 (what
// GPU kernels accumulate in) or in fp64 (the check); inputs are fp32 in both cases, so the two
// paths see exactly the same numbers and differ only in rounding.
//
// Tensors are row-major [token][head][dim]. GQA: query head h reads kv head h / (H / H_kv).
#include <cstdint>
#include <span>
#include <vector>

#include "models/workload/mask.hpp"

namespace ringsim::kernels {

struct AttentionShape {
  std::int64_t heads = 1;     // H: query heads
  std::int64_t kv_heads = 1;  // H_kv: key/value heads; divides H
  std::int64_t head_dim = 1;  // D

  [[nodiscard]] std::int64_t group() const noexcept { return heads / kv_heads; }
  [[nodiscard]] std::int64_t kv_head(std::int64_t head) const noexcept { return head / group(); }
  [[nodiscard]] std::int64_t q_stride() const noexcept { return heads * head_dim; }    // values per query token
  [[nodiscard]] std::int64_t kv_stride() const noexcept { return kv_heads * head_dim; }  // values per K or V token
  [[nodiscard]] double scale() const noexcept;  // softmax scale 1 / sqrt(D)
  // Throws std::invalid_argument unless all sizes are positive and H_kv divides H.
  void validate() const;
  friend bool operator==(const AttentionShape&, const AttentionShape&) = default;
};

// Query rows with their global positions (positions decide the mask, rows the arithmetic).
struct QBlock {
  std::span<const float> q;               // [row][head][dim]
  std::span<const std::int64_t> pos;      // one global position per row
};

struct KVBlock {
  std::span<const float> k;               // [key][kv head][dim]
  std::span<const float> v;               // [key][kv head][dim]
  std::span<const std::int64_t> pos;      // one global position per key
};

// Normalised attention output and each row's log-sum-exp of its (scaled) scores.
template <class T>
struct AttentionOutput {
  std::vector<T> out;  // [row][head][dim]; zeros for a row that has no allowed key
  std::vector<T> lse;  // [row][head]; -inf for a row that has no allowed key
};

// Work done on one (Q block, K/V block) pair. Tiles and pairs are summed over the mask's heads
// (Mask::heads(): 1 for structured masks), so they are directly comparable with what
// Mask::visit_block reports for the same blocks and tile shape.
struct BlockStats {
  std::int64_t tiles = 0;          // tiles in the block
  std::int64_t tiles_visited = 0;  // tiles with at least one allowed pair: the only ones computed
  std::int64_t pairs_allowed = 0;  // allowed (query, key) pairs
  BlockStats& operator+=(const BlockStats& o) noexcept {
    tiles += o.tiles;
    tiles_visited += o.tiles_visited;
    pairs_allowed += o.pairs_allowed;
    return *this;
  }
  friend bool operator==(const BlockStats&, const BlockStats&) = default;
};

// Online-softmax state of `rows` query rows x H heads. A fresh Partial has seen no key: its
// accumulators and sums are 0 and its maxima -inf, which is also what a row keeps when no key
// it meets is allowed.
template <class T>
class Partial {
 public:
  Partial(const AttentionShape& shape, std::int64_t rows);

  [[nodiscard]] const AttentionShape& shape() const noexcept { return shape_; }
  [[nodiscard]] std::int64_t rows() const noexcept { return rows_; }

  [[nodiscard]] std::span<T> acc(std::int64_t row, std::int64_t head) noexcept {
    return {acc_.data() + (row * shape_.heads + head) * shape_.head_dim, static_cast<std::size_t>(shape_.head_dim)};
  }
  [[nodiscard]] std::span<const T> acc(std::int64_t row, std::int64_t head) const noexcept {
    return {acc_.data() + (row * shape_.heads + head) * shape_.head_dim, static_cast<std::size_t>(shape_.head_dim)};
  }
  [[nodiscard]] T& row_max(std::int64_t row, std::int64_t head) noexcept { return max_[stat(row, head)]; }
  [[nodiscard]] T row_max(std::int64_t row, std::int64_t head) const noexcept { return max_[stat(row, head)]; }
  [[nodiscard]] T& row_sum(std::int64_t row, std::int64_t head) noexcept { return sum_[stat(row, head)]; }
  [[nodiscard]] T row_sum(std::int64_t row, std::int64_t head) const noexcept { return sum_[stat(row, head)]; }

  // Log-sum-exp merge: afterwards *this is the state of having seen the keys of both. Rows that
  // neither side has an allowed key for stay empty (no -inf - -inf). Throws std::invalid_argument
  // when shapes or row counts differ.
  void merge(const Partial& other);

  // out = acc / sum and lse = max + log(sum); a row with sum 0 gives exact zeros and -inf.
  [[nodiscard]] AttentionOutput<T> finalize() const;

 private:
  [[nodiscard]] std::size_t stat(std::int64_t row, std::int64_t head) const noexcept {
    return static_cast<std::size_t>(row * shape_.heads + head);
  }

  AttentionShape shape_;
  std::int64_t rows_ = 0;
  std::vector<T> acc_;  // [row][head][dim], unnormalised
  std::vector<T> max_;  // [row][head]
  std::vector<T> sum_;  // [row][head], relative to max_
};

// merge(a, b) without touching either.
template <class T>
[[nodiscard]] Partial<T> merge(const Partial<T>& a, const Partial<T>& b);

// Accumulates the rows of `q` against every key of `kv` that `mask` allows
// (mask.allowed(q_pos, k_pos, h) with h the query head), cutting the block into tiles of
// tile.q rows x tile.k keys in local order and skipping every tile without an allowed pair,
// as a block-sparse kernel would. Rows are the partial's rows. Throws std::invalid_argument on
// mismatched sizes, non-positive tiles, or a per-head mask whose head count is not H.
template <class T>
BlockStats accumulate_block(Partial<T>& partial, const QBlock& q, const KVBlock& kv, const models::Mask& mask,
                            models::TileShape tile);

extern template class Partial<float>;
extern template class Partial<double>;
extern template Partial<float> merge(const Partial<float>&, const Partial<float>&);
extern template Partial<double> merge(const Partial<double>&, const Partial<double>&);
extern template BlockStats accumulate_block(Partial<float>&, const QBlock&, const KVBlock&, const models::Mask&,
                                            models::TileShape);
extern template BlockStats accumulate_block(Partial<double>&, const QBlock&, const KVBlock&, const models::Mask&,
                                            models::TileShape);

}  // namespace ringsim::kernels
