#pragma once
// Layouts derived from an index-based sparse mask, both token permutations (attention stays
// exact; the workload counts them like perm:FILE).
//
// `bucket-striped` is striped Attention's partition with each stripe row re-dealt so that every
// device holds as many tokens of every hash bucket (per head, queries and keys separately) as
// every other device. Why: under SCFA each device sorts its Q block and every arriving K/V
// block by bucket, and a (round, device) visits, per bucket, part of the (its queries of the
// bucket) x (the block's keys of the bucket) rectangle of tiles: the causal half where SCFA's
// trim works, all of it where a key tile straddles into the next bucket (see bucket_rotated).
// The round waits for the device with the largest sum of those rectangles, so the per-bucket
// counts have to be equal across devices, not just the token counts. Striped equalises them
// only in expectation; buckets that follow the sequence's period (or small buckets, where the
// sampling noise is a larger share) leave some device with more. Dealing row by row keeps
// striped's one-token-per-N-window property, so its causal (position) balance is kept too.
//
// `bucket-rotated` arranges one head's key buckets so that SCFA's causal trim works on most
// blocks (below).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"

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
// max_heads limits the heads listed (features 2h and 2h + 1 are head h's queries and keys).
[[nodiscard]] TokenGroups token_groups(const Mask& mask, std::int64_t n_seq,
                                       std::int64_t max_heads = std::numeric_limits<std::int64_t>::max());

// Stripe row r (positions r N .. r N + N - 1) gives one token to each device, at local index r;
// the tokens of the row, in position order, each go to the free device holding the fewest
// tokens of the token's groups so far, summed over features (greedy descent on the sum of
// squared per-device group counts), ties to the lowest device. With a single group everywhere
// this is striped exactly. O(n_seq x n_dev x features).
[[nodiscard]] Layout bucket_striped(const TokenGroups& groups, std::int64_t n_seq, std::int64_t n_dev);

// Under SCFA's range rule a query tile visits every key tile of its bucket up to the last one
// whose smallest position is <= its own largest; the key tile that straddles into the next
// bucket holds that bucket's earliest keys on the K/V device, so unless those come late the
// whole bucket run is visited (docs/sparse-ring-study.md). bucket-rotated makes them come late:
// the tokens of each bucket of `groups.groups[feature]`, in position order, are cut into N
// chunks of (almost) equal size, and chunk r of bucket b goes to device (r + b) mod N. Device
// k then holds an early chunk of only ~1/N of the buckets, whatever the round, so the causal
// trim works for the rest and every device's round is cut by about the same share. Block sizes
// are made exact by moving each overfull device's latest tokens to the underfull devices in
// device order. Local order is position order. Only one feature can be arranged this way: other
// heads' buckets see an interleaved layout. O(n_seq log n_seq).
[[nodiscard]] Layout bucket_rotated(const TokenGroups& groups, std::size_t feature, std::int64_t n_seq,
                                    std::int64_t n_dev);

// The layouts built from the mask (LayoutSpec::from_mask): bucket-striped (hash or qkdrop), and
// bucket-rotated (head 0's key buckets; hash masks only).
[[nodiscard]] Layout mask_layout(const LayoutSpec& spec, const Mask& mask, std::int64_t n_seq, std::int64_t n_dev);

}  // namespace ringsim::models
