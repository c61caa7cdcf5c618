#include "models/workload/sparse_gen.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <utility>

#include "models/io/error.hpp"

namespace ringsim::models {
namespace {

using Index = std::size_t;
Index idx(std::int64_t i) noexcept { return static_cast<Index>(i); }

[[noreturn]] void bad_mask(const std::string& message) { throw InputError({}, 0, "mask", message); }

// Streams of one generator call: each (head, stream) pair gets an independent engine.
enum class Stream : std::uint64_t { KeepQ, KeepK, BucketQ, BucketK, Rotation, VectorQ, VectorK };

std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// mt19937_64's output sequence is fixed by the standard, unlike the distributions.
std::mt19937_64 engine(std::uint64_t seed, std::int64_t head, Stream stream) {
  const std::uint64_t s =
      splitmix64(splitmix64(seed) ^ splitmix64(static_cast<std::uint64_t>(head) * 16 + static_cast<std::uint64_t>(stream)));
  return std::mt19937_64(s);
}

double uniform01(std::mt19937_64& rng) noexcept {  // [0, 1), 53 random bits
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

std::int64_t uniform_below(std::mt19937_64& rng, std::int64_t n) noexcept {  // [0, n), Lemire's multiply-shift
  __extension__ typedef unsigned __int128 u128;
  return static_cast<std::int64_t>((static_cast<u128>(rng()) * static_cast<u128>(n)) >> 64);
}

// Box-Muller, both outputs used.
class Gaussian {
 public:
  double operator()(std::mt19937_64& rng) {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform01(rng);  // (0, 1]: log stays finite
    const double u2 = uniform01(rng);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double t = 2.0 * std::numbers::pi * u2;
    spare_ = r * std::sin(t);
    has_spare_ = true;
    return r * std::cos(t);
  }

 private:
  double spare_ = 0;
  bool has_spare_ = false;
};

void check_sizes(std::int64_t n_seq, std::int64_t heads) {
  if (n_seq <= 0) bad_mask("sequence length must be positive, got " + std::to_string(n_seq));
  if (heads <= 0) bad_mask("the number of heads must be positive, got " + std::to_string(heads));
}

void check_lsh(std::int64_t dim, std::int64_t n_buckets) {
  if (n_buckets < 2 || n_buckets % 2 != 0)
    bad_mask("angular LSH needs an even number of buckets >= 2 (argmax over [xR, -xR]), got " +
             std::to_string(n_buckets));
  if (dim <= 0) bad_mask("LSH vector dimension must be positive, got " + std::to_string(dim));
}

// Bucket of one vector; `proj` is scratch of n_buckets / 2 values.
std::int64_t lsh_one(const double* x, std::int64_t dim, const double* rotation, std::int64_t half,
                     std::vector<double>& proj) {
  std::fill(proj.begin(), proj.end(), 0.0);
  // Row-major R: the inner loop runs over independent accumulators, so it vectorises.
  for (std::int64_t i = 0; i < dim; ++i) {
    const double xi = x[i];
    const double* row = rotation + i * half;
    for (std::int64_t j = 0; j < half; ++j) proj[idx(j)] += xi * row[j];
  }
  std::int64_t best = 0;
  double best_value = proj[0];
  for (std::int64_t j = 0; j < 2 * half; ++j) {
    const double v = j < half ? proj[idx(j)] : -proj[idx(j - half)];
    if (v > best_value) {
      best_value = v;
      best = j;
    }
  }
  return best;
}

}  // namespace

KeptPositions random_kept(std::int64_t n_seq, std::int64_t heads, double drop_rate, std::uint64_t seed) {
  check_sizes(n_seq, heads);
  if (!(drop_rate >= 0.0 && drop_rate <= 1.0))
    bad_mask("drop rate must be in [0, 1], got " + std::to_string(drop_rate));
  KeptPositions out;
  out.q.resize(idx(heads));
  out.k.resize(idx(heads));
  for (std::int64_t h = 0; h < heads; ++h) {
    for (auto [list, stream] : {std::pair{&out.q[idx(h)], Stream::KeepQ}, std::pair{&out.k[idx(h)], Stream::KeepK}}) {
      auto rng = engine(seed, h, stream);
      list->reserve(idx(static_cast<std::int64_t>(static_cast<double>(n_seq) * (1.0 - drop_rate)) + 16));
      for (std::int64_t p = 0; p < n_seq; ++p)
        if (uniform01(rng) >= drop_rate) list->push_back(p);
    }
  }
  return out;
}

BucketIds random_buckets(std::int64_t n_seq, std::int64_t heads, std::int64_t n_buckets, double zipf_s,
                         std::uint64_t seed) {
  check_sizes(n_seq, heads);
  if (n_buckets < 1) bad_mask("the number of buckets must be >= 1, got " + std::to_string(n_buckets));
  if (!(zipf_s >= 0.0) || !std::isfinite(zipf_s))
    bad_mask("Zipf exponent must be a finite number >= 0, got " + std::to_string(zipf_s));
  // Cumulative weights for the skewed case; uniform draws skip the search.
  std::vector<double> cdf;
  if (zipf_s > 0.0) {
    cdf.resize(idx(n_buckets));
    double sum = 0;
    for (std::int64_t b = 0; b < n_buckets; ++b) cdf[idx(b)] = sum += std::pow(static_cast<double>(b + 1), -zipf_s);
    for (auto& c : cdf) c /= sum;
  }
  BucketIds out;
  out.q.assign(idx(heads), std::vector<std::int64_t>(idx(n_seq)));
  out.k.assign(idx(heads), std::vector<std::int64_t>(idx(n_seq)));
  for (std::int64_t h = 0; h < heads; ++h) {
    for (auto [ids, stream] : {std::pair{&out.q[idx(h)], Stream::BucketQ}, std::pair{&out.k[idx(h)], Stream::BucketK}}) {
      auto rng = engine(seed, h, stream);
      for (auto& b : *ids) {
        if (cdf.empty()) {
          b = uniform_below(rng, n_buckets);
        } else {
          const double u = uniform01(rng);
          const auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
          b = std::min<std::int64_t>(it - cdf.begin(), n_buckets - 1);  // rounding may leave cdf.back() < 1
        }
      }
    }
  }
  return out;
}

std::vector<double> lsh_rotation(std::int64_t dim, std::int64_t n_buckets, std::uint64_t seed) {
  check_lsh(dim, n_buckets);
  auto rng = engine(seed, 0, Stream::Rotation);
  Gaussian gauss;
  std::vector<double> r(idx(dim * (n_buckets / 2)));
  for (auto& v : r) v = gauss(rng);
  return r;
}

std::vector<std::int64_t> lsh_buckets(std::span<const double> vectors, std::int64_t dim,
                                      std::span<const double> rotation, std::int64_t n_buckets) {
  check_lsh(dim, n_buckets);
  const std::int64_t half = n_buckets / 2;
  if (static_cast<std::int64_t>(rotation.size()) != dim * half)
    bad_mask("LSH rotation has " + std::to_string(rotation.size()) + " values, expected dim x n_buckets/2 = " +
             std::to_string(dim * half));
  if (static_cast<std::int64_t>(vectors.size()) % dim != 0)
    bad_mask("LSH vectors hold " + std::to_string(vectors.size()) + " values, not a multiple of dim = " +
             std::to_string(dim));
  const std::int64_t rows = static_cast<std::int64_t>(vectors.size()) / dim;
  std::vector<std::int64_t> out(idx(rows));
  std::vector<double> proj(idx(half));
  for (std::int64_t r = 0; r < rows; ++r)
    out[idx(r)] = lsh_one(vectors.data() + r * dim, dim, rotation.data(), half, proj);
  return out;
}

BucketIds lsh_buckets(const std::vector<std::vector<double>>& q_vectors,
                      const std::vector<std::vector<double>>& k_vectors, std::int64_t n_seq, std::int64_t dim,
                      std::int64_t n_buckets, std::uint64_t seed) {
  const auto heads = static_cast<std::int64_t>(q_vectors.size());
  check_sizes(n_seq, heads);
  check_lsh(dim, n_buckets);
  if (k_vectors.size() != q_vectors.size())
    bad_mask("query vectors describe " + std::to_string(q_vectors.size()) + " heads but key vectors " +
             std::to_string(k_vectors.size()));
  BucketIds out;
  out.q.resize(idx(heads));
  out.k.resize(idx(heads));
  for (std::int64_t h = 0; h < heads; ++h) {
    for (const auto* v : {&q_vectors[idx(h)], &k_vectors[idx(h)]})
      if (static_cast<std::int64_t>(v->size()) != n_seq * dim)
        bad_mask("head " + std::to_string(h) + ": expected n_seq x dim = " + std::to_string(n_seq * dim) +
                 " vector values, got " + std::to_string(v->size()));
    const auto rotation = lsh_rotation(dim, n_buckets, splitmix64(seed) + static_cast<std::uint64_t>(h));
    out.q[idx(h)] = lsh_buckets(q_vectors[idx(h)], dim, rotation, n_buckets);
    out.k[idx(h)] = lsh_buckets(k_vectors[idx(h)], dim, rotation, n_buckets);
  }
  return out;
}

BucketIds random_lsh_buckets(std::int64_t n_seq, std::int64_t heads, std::int64_t n_buckets, std::int64_t dim,
                             std::uint64_t seed) {
  check_sizes(n_seq, heads);
  check_lsh(dim, n_buckets);
  const std::int64_t half = n_buckets / 2;
  BucketIds out;
  out.q.assign(idx(heads), std::vector<std::int64_t>(idx(n_seq)));
  out.k.assign(idx(heads), std::vector<std::int64_t>(idx(n_seq)));
  std::vector<double> x(idx(dim));
  std::vector<double> proj(idx(half));
  for (std::int64_t h = 0; h < heads; ++h) {
    // Same per-head rotation as lsh_buckets(q_vectors, ...) uses for this seed.
    const auto rotation = lsh_rotation(dim, n_buckets, splitmix64(seed) + static_cast<std::uint64_t>(h));
    for (auto [ids, stream] : {std::pair{&out.q[idx(h)], Stream::VectorQ}, std::pair{&out.k[idx(h)], Stream::VectorK}}) {
      auto rng = engine(seed, h, stream);
      Gaussian gauss;
      // Vectors are drawn and hashed one at a time: n_seq x dim values never exist at once.
      for (auto& b : *ids) {
        for (auto& v : x) v = gauss(rng);
        b = lsh_one(x.data(), dim, rotation.data(), half, proj);
      }
    }
  }
  return out;
}

}  // namespace ringsim::models
