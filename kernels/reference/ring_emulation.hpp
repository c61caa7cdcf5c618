#pragma once
// An N-device ring on one machine, for any layout: the exactness check of the whole idea.
// Tokens are permuted into per-device blocks (Layout::positions), device j keeps its Q block
// and in round i meets K/V block (j - i) mod N, the partials are finalised and the result is
// un-permuted. Attention is permutation-equivariant, so this must equal plain single-device
// attention on the original order up to rounding, whatever the layout and the mask.
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/reference/attention.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"

namespace ringsim::kernels {

// How a device folds an arriving K/V block into its state.
enum class Accumulation {
  Online,       // straight into the running partial (Ring Attention's lazy softmax)
  MergeBlocks,  // a fresh partial per block, then a log-sum-exp merge (out + lse kernels)
};

struct RingOptions {
  models::TileShape tile{16, 16};
  Accumulation accumulation = Accumulation::Online;
};

template <class T>
struct RingResult {
  AttentionOutput<T> output;       // in original token order
  std::vector<BlockStats> stats;   // [round * N + device]: the work of that device in that round
};

// q: [n_seq][H][D], k and v: [n_seq][H_kv][D], all in original token order, n_seq = layout.n_seq().
// Throws std::invalid_argument on mismatched sizes.
template <class T>
[[nodiscard]] RingResult<T> ring_attention(const models::Layout& layout, const AttentionShape& shape,
                                           std::span<const float> q, std::span<const float> k,
                                           std::span<const float> v, const models::Mask& mask,
                                           const RingOptions& options = {});

// Plain softmax per row and head over every allowed key, in fp64, no tiles, no online
// rescaling: the reference the ring is checked against. Positions are token indices
// 0..n_seq-1; a row without an allowed key gives zeros and lse -inf.
[[nodiscard]] AttentionOutput<double> reference_attention(const AttentionShape& shape, std::span<const float> q,
                                                          std::span<const float> k, std::span<const float> v,
                                                          const models::Mask& mask);

// Rows tokens[0], tokens[1], ... of x (stride values per row), in that order.
[[nodiscard]] std::vector<float> gather_rows(std::span<const float> x, std::span<const std::int64_t> tokens,
                                             std::int64_t stride);

extern template RingResult<float> ring_attention(const models::Layout&, const AttentionShape&, std::span<const float>,
                                                 std::span<const float>, std::span<const float>, const models::Mask&,
                                                 const RingOptions&);
extern template RingResult<double> ring_attention(const models::Layout&, const AttentionShape&,
                                                  std::span<const float>, std::span<const float>,
                                                  std::span<const float>, const models::Mask&, const RingOptions&);

}  // namespace ringsim::kernels
