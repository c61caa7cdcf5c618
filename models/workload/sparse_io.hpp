#pragma once
// Files and specs for the index-based sparse masks.
//
// Kept-positions CSV (qkfile:PATH), one row per kept query or key:
//     head,kind,position
//     0,q,17
//     0,k,3
//   kind is q or k; per (head, kind) the positions are strictly increasing in file order and
//   lie in [0, n_seq); heads are in [0, heads) and every head has at least one row (a head
//   that keeps nothing cannot be written: it has no work, leave it out of the head count).
//
// Buckets CSV (hashfile:PATH), one row per (head, position), in any order:
//     head,position,q_bucket,k_bucket
//     0,0,5,2
//   every (head, position) with head in [0, heads) and position in [0, n_seq) appears exactly
//   once; bucket ids are integers >= 0 (any values: only equality matters).
//
// Both: the header row is optional, blank lines and '#' comments are ignored, fields are
// trimmed. Errors are InputError naming the file, the line (0 when about the file as a whole)
// and the column.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

#include "models/workload/mask.hpp"
#include "models/workload/sparse_mask.hpp"

namespace ringsim::models {

[[nodiscard]] KeptPositions load_kept_csv(const std::string& path, std::int64_t n_seq, std::int64_t heads);
[[nodiscard]] BucketIds load_buckets_csv(const std::string& path, std::int64_t n_seq, std::int64_t heads);
void write_kept_csv(std::ostream& out, const KeptPositions& kept);
void write_buckets_csv(std::ostream& out, const BucketIds& buckets);

// The index-based masks: qkdrop:P (drop rate P in [0, 1]) | hash:NB (NB >= 1 uniform random
// buckets) | hash:NB:zipf:S (Zipf exponent S >= 0) | lsh:NB[:D] (angular LSH of random D-dim
// vectors, NB even, D default 64) | qkfile:PATH | hashfile:PATH, one per head. Random masks draw
// from `seed`. Every error is an InputError with field "mask" (for files, also the file and
// line; the message names the column).
[[nodiscard]] std::unique_ptr<Mask> make_sparse_mask(const MaskSpec& spec, std::int64_t n_seq, std::int64_t heads,
                                                     std::uint64_t seed);

}  // namespace ringsim::models
