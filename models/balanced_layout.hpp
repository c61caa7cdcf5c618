#pragma once
// Layouts derived from an index-based sparse mask. `bucket-striped` is striped Attention's
// partition with each stripe row re-dealt so that every device holds as many tokens of every
// hash bucket (per head, queries and keys separately) as every other device.
//
// Why: under SCFA each device sorts its Q block and every arriving K/V block by bucket, and a
// (round, device) visits roughly, per bucket, the causal half of a (its queries of the bucket) x
// (the block's keys of the bucket) rectangle of tiles. The round waits for the device with the
// largest sum of those rectangles, so what has to be equal across devices is the per-bucket
// count, not just the token count. Striped equalises it only in expectation; buckets whose
// tokens follow the sequence's period (or small buckets, where the sampling noise is a larger
// share) leave some device with more. Dealing row by row keeps striped's one-token-per-N-window
// property, so the causal (position) balance of striped is kept too.
//
// It is a token permutation: attention stays exact, and the workload counts it like perm:FILE.
#include <cstdint>
#include <string_view>
#include <vector>

#include "models/layout.hpp"
#include "models/mask.hpp"

namespace ringsim::models {

// Per token, its group under every balanced feature: groups[f][pos] is a dense id in
// [0, n_groups[f]). A feature is one (side, head) of a mask: the bucket for hash masks, kept or
// dropped for query/key dropping.
struct TokenGroups {
  std::vector<std::vector<std::int32_t>> groups;
  std::vector<std::int64_t> n_groups;
};

// The features of an index-based mask (hash: 2 x heads bucket features; qkdrop: 2 x heads kept
// flags). Throws InputError (field "layout") for a mask with no per-token groups.
[[nodiscard]] TokenGroups token_groups(const Mask& mask, std::int64_t n_seq);

// Stripe row r (positions r N .. r N + N - 1) gives one token to each device, at local index r;
// the tokens of the row, in position order, each go to the free device holding the fewest
// tokens of the token's groups so far, summed over features (greedy descent on the sum of
// squared per-device group counts), ties to the lowest device. With a single group everywhere
// this is striped exactly. O(n_seq x n_dev x features).
[[nodiscard]] Layout bucket_striped(const TokenGroups& groups, std::int64_t n_seq, std::int64_t n_dev);

// Layout specs that need the mask: bucket-striped.
[[nodiscard]] bool is_mask_layout_spec(std::string_view spec) noexcept;
[[nodiscard]] Layout parse_mask_layout(std::string_view spec, const Mask& mask, std::int64_t n_seq,
                                       std::int64_t n_dev);

}  // namespace ringsim::models
