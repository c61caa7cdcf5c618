#pragma once
// Helpers shared by the kernel tests: seeded random tensors, error measures, and a per-head
// index-based mask (query/key dropping) that leaves some query rows with no allowed key.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kernels/reference/attention.hpp"
#include "models/workload/mask.hpp"

namespace ringsim::kernels::test {

// Standard normal values: scores q.k / sqrt(D) are then O(1), as in a trained model's range.
inline std::vector<float> random_tensor(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (float& e : x) e = dist(rng);
  return x;
}

struct Inputs {
  std::vector<float> q, k, v;
};

inline Inputs random_inputs(const AttentionShape& s, std::int64_t n_seq, std::uint64_t seed) {
  return {random_tensor(n_seq * s.q_stride(), seed), random_tensor(n_seq * s.kv_stride(), seed + 1),
          random_tensor(n_seq * s.kv_stride(), seed + 2)};
}

template <class A, class B>
double max_abs_diff(const std::vector<A>& a, const std::vector<B>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (!(d <= m)) m = d;  // a NaN difference wins and fails any tolerance check
  }
  return m;
}

// lse vectors: -inf must match -inf exactly (rows with no allowed key); others compare by value.
template <class A, class B>
double max_lse_diff(const std::vector<A>& a, const std::vector<B>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto x = static_cast<double>(a[i]);
    const auto y = static_cast<double>(b[i]);
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return std::numeric_limits<double>::infinity();
      continue;
    }
    const double d = std::abs(x - y);
    if (!(d <= m)) m = d;
  }
  return m;
}

template <class T>
bool all_finite(const std::vector<T>& x) {
  return std::all_of(x.begin(), x.end(), [](T e) { return std::isfinite(e); });
}

// Causal attention where, per head, each query and each key is kept with probability `keep`
// (seeded): like SCFA's QK-sparse masks, but on the uncompacted sequence. A dropped query,
// or one whose earlier keys are all dropped, has no allowed key.
class DropMask final : public models::Mask {
 public:
  DropMask(std::int64_t n_seq, std::int64_t heads, double keep, std::uint64_t seed)
      : n_seq_(n_seq), heads_(heads), keep_q_(static_cast<std::size_t>(n_seq * heads)),
        keep_k_(static_cast<std::size_t>(n_seq * heads)) {
    std::mt19937_64 rng(seed);
    std::bernoulli_distribution b(keep);
    for (auto& e : keep_q_) e = b(rng) ? 1 : 0;
    for (auto& e : keep_k_) e = b(rng) ? 1 : 0;
  }
  [[nodiscard]] models::MaskKind kind() const noexcept override { return models::MaskKind::QKDrop; }
  [[nodiscard]] std::string name() const override { return "test-drop"; }
  [[nodiscard]] std::int64_t heads() const noexcept override { return heads_; }
  [[nodiscard]] bool allowed(std::int64_t q, std::int64_t p, std::int64_t head) const noexcept override {
    return p <= q && keep_q_[idx(head, q)] && keep_k_[idx(head, p)];
  }
  // Not used by the kernels (they ask allowed() per head); head 0 by brute force, for completeness.
  [[nodiscard]] std::int64_t count(std::span<const models::Progression> q,
                                   std::span<const models::Progression> k) const override {
    std::int64_t n = 0;
    for (const auto& a : q)
      for (std::int64_t i = 0; i < a.count; ++i)
        for (const auto& b : k)
          for (std::int64_t j = 0; j < b.count; ++j) n += allowed(a.start + i * a.stride, b.start + j * b.stride, 0);
    return n;
  }

 private:
  [[nodiscard]] std::size_t idx(std::int64_t head, std::int64_t t) const noexcept {
    return static_cast<std::size_t>(head * n_seq_ + t);
  }
  std::int64_t n_seq_;
  std::int64_t heads_;
  std::vector<unsigned char> keep_q_;
  std::vector<unsigned char> keep_k_;
};

// Every pair masked: every row is empty.
class NoneMask final : public models::Mask {
 public:
  // MaskKind has no "nothing allowed" kind; the kernels never look at kind().
  [[nodiscard]] models::MaskKind kind() const noexcept override { return models::MaskKind::Full; }
  [[nodiscard]] std::string name() const override { return "test-none"; }
  [[nodiscard]] bool allowed(std::int64_t, std::int64_t, std::int64_t) const noexcept override { return false; }
  [[nodiscard]] std::int64_t count(std::span<const models::Progression>,
                                   std::span<const models::Progression>) const override {
    return 0;
  }
};

}  // namespace ringsim::kernels::test
