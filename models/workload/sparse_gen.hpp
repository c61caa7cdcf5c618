#pragma once
// Seeded, deterministic generators of the index lists behind the sparse masks: random query/key
// dropping, random (uniform or Zipf-skewed) buckets, and angular LSH buckets as in Reformer.
// Every head, and within it queries and keys, draws from its own stream derived from the seed,
// so a head's lists do not depend on how many heads there are. The engines are mt19937_64
// (output fixed by the standard) and the transforms are our own, not <random>'s distributions
// (implementation-defined): dropping and uniform buckets are bit-identical everywhere; Zipf
// and LSH also go through libm (pow, log, sin, cos), exact on one platform, and elsewhere a
// last-bit difference may move a rare token to a neighbouring bucket.
#include <cstdint>
#include <span>
#include <vector>

#include "models/workload/sparse_mask.hpp"

namespace ringsim::models {

// Drops every query and every key of every head independently with probability drop_rate
// (in [0, 1]). Throws InputError (field "mask") on bad arguments.
[[nodiscard]] KeptPositions random_kept(std::int64_t n_seq, std::int64_t heads, double drop_rate, std::uint64_t seed);

// Independent bucket ids for every query and key of every head, P(b) proportional to
// 1 / (b + 1)^zipf_s over b in [0, n_buckets): zipf_s = 0 is uniform, larger is more skewed.
[[nodiscard]] BucketIds random_buckets(std::int64_t n_seq, std::int64_t heads, std::int64_t n_buckets,
                                       double zipf_s, std::uint64_t seed);

// A dim x (n_buckets / 2) matrix of independent standard Gaussians, row-major.
[[nodiscard]] std::vector<double> lsh_rotation(std::int64_t dim, std::int64_t n_buckets, std::uint64_t seed);

// Angular LSH of each row of `vectors` (rows of `dim` values, row-major): bucket = argmax of
// [xR, -xR] (ties: the lower index), in [0, n_buckets). n_buckets must be even.
[[nodiscard]] std::vector<std::int64_t> lsh_buckets(std::span<const double> vectors, std::int64_t dim,
                                                    std::span<const double> rotation, std::int64_t n_buckets);

// LSH buckets of user-given vectors: q_vectors[h] and k_vectors[h] hold n_seq rows of `dim`
// values; queries and keys of a head share the head's rotation (seeded per head).
[[nodiscard]] BucketIds lsh_buckets(const std::vector<std::vector<double>>& q_vectors,
                                    const std::vector<std::vector<double>>& k_vectors, std::int64_t n_seq,
                                    std::int64_t dim, std::int64_t n_buckets, std::uint64_t seed);

// LSH buckets of independent standard Gaussian query and key vectors of `dim` values. Costs
// n_seq * heads * dim * n_buckets multiply-adds (1M tokens, dim 64, 64 buckets: seconds).
[[nodiscard]] BucketIds random_lsh_buckets(std::int64_t n_seq, std::int64_t heads, std::int64_t n_buckets,
                                           std::int64_t dim, std::uint64_t seed);

}  // namespace ringsim::models
