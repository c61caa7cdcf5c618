#include "kernels/reference/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ringsim::kernels {
namespace {

template <class T>
constexpr T neg_inf = -std::numeric_limits<T>::infinity();

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("kernels::reference: " + what);
}

std::size_t sz(std::int64_t n) { return static_cast<std::size_t>(n); }

// Fills bits[(r - r0) * cols + (c - c0)] for the tile and returns its allowed count.
std::int64_t tile_bits(const models::Mask& mask, std::span<const std::int64_t> q_pos, std::span<const std::int64_t> k_pos,
                       std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1, std::int64_t head,
                       std::vector<unsigned char>& bits) {
  const std::int64_t cols = c1 - c0;
  std::int64_t n = 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t qp = q_pos[sz(r)];
    unsigned char* row = bits.data() + (r - r0) * cols;
    for (std::int64_t c = c0; c < c1; ++c) {
      const bool a = mask.allowed(qp, k_pos[sz(c)], head);
      row[c - c0] = a ? 1 : 0;
      n += a ? 1 : 0;
    }
  }
  return n;
}

}  // namespace

double AttentionShape::scale() const noexcept { return 1.0 / std::sqrt(static_cast<double>(head_dim)); }

void AttentionShape::validate() const {
  require(heads > 0 && kv_heads > 0 && head_dim > 0,
          "attention sizes must be positive (H " + std::to_string(heads) + ", H_kv " + std::to_string(kv_heads) +
              ", D " + std::to_string(head_dim) + ")");
  require(heads % kv_heads == 0,
          "kv heads " + std::to_string(kv_heads) + " must divide query heads " + std::to_string(heads));
}

template <class T>
Partial<T>::Partial(const AttentionShape& shape, std::int64_t rows) : shape_(shape), rows_(rows) {
  shape_.validate();
  require(rows >= 0, "negative row count");
  acc_.assign(sz(rows * shape_.q_stride()), T(0));
  max_.assign(sz(rows * shape_.heads), neg_inf<T>);
  sum_.assign(sz(rows * shape_.heads), T(0));
}

template <class T>
void Partial<T>::merge(const Partial& other) {
  require(shape_ == other.shape_ && rows_ == other.rows_, "merging partials of different shapes");
  const std::int64_t d_n = shape_.head_dim;
  for (std::int64_t r = 0; r < rows_; ++r) {
    for (std::int64_t h = 0; h < shape_.heads; ++h) {
      const std::size_t s = stat(r, h);
      const T ma = max_[s];
      const T mb = other.max_[s];
      const T m = std::max(ma, mb);
      // Both empty: exp(-inf - -inf) would be NaN; the row simply stays empty.
      if (m == neg_inf<T>) continue;
      const T alpha = std::exp(ma - m);  // 0 when this side is empty
      const T beta = std::exp(mb - m);
      T* a = acc_.data() + (r * shape_.heads + h) * d_n;
      const T* b = other.acc_.data() + (r * shape_.heads + h) * d_n;
      for (std::int64_t d = 0; d < d_n; ++d) a[d] = alpha * a[d] + beta * b[d];
      sum_[s] = alpha * sum_[s] + beta * other.sum_[s];
      max_[s] = m;
    }
  }
}

template <class T>
AttentionOutput<T> Partial<T>::finalize() const {
  AttentionOutput<T> res;
  res.out.assign(acc_.size(), T(0));
  res.lse.assign(max_.size(), neg_inf<T>);
  const std::int64_t d_n = shape_.head_dim;
  for (std::int64_t r = 0; r < rows_; ++r) {
    for (std::int64_t h = 0; h < shape_.heads; ++h) {
      const std::size_t s = stat(r, h);
      // A row with an allowed key has sum >= 1 (its max term is exp(0)); 0 means none.
      if (!(sum_[s] > T(0))) continue;
      const T inv = T(1) / sum_[s];
      const std::int64_t base = (r * shape_.heads + h) * d_n;
      for (std::int64_t d = 0; d < d_n; ++d) res.out[sz(base + d)] = acc_[sz(base + d)] * inv;
      res.lse[s] = max_[s] + std::log(sum_[s]);
    }
  }
  return res;
}

template <class T>
Partial<T> merge(const Partial<T>& a, const Partial<T>& b) {
  Partial<T> m = a;
  m.merge(b);
  return m;
}

template <class T>
BlockStats accumulate_block(Partial<T>& partial, const QBlock& q, const KVBlock& kv, const models::Mask& mask,
                            models::TileShape tile) {
  const AttentionShape& shape = partial.shape();
  const auto n_q = static_cast<std::int64_t>(q.pos.size());
  const auto n_k = static_cast<std::int64_t>(kv.pos.size());
  require(n_q == partial.rows(), "query block has " + std::to_string(n_q) + " rows, partial " +
                                     std::to_string(partial.rows()));
  require(static_cast<std::int64_t>(q.q.size()) == n_q * shape.q_stride(), "query data size does not match its rows");
  require(static_cast<std::int64_t>(kv.k.size()) == n_k * shape.kv_stride() &&
              static_cast<std::int64_t>(kv.v.size()) == n_k * shape.kv_stride(),
          "key/value data size does not match its keys");
  require(tile.q > 0 && tile.k > 0, "tile sizes must be positive");
  const bool per_head = mask.heads() > 1;
  require(!per_head || mask.heads() == shape.heads,
          "mask has " + std::to_string(mask.heads()) + " heads, attention " + std::to_string(shape.heads));

  const std::int64_t d_n = shape.head_dim;
  const T scale = static_cast<T>(shape.scale());
  std::vector<unsigned char> bits(sz(tile.q * tile.k));
  std::vector<T> score(sz(tile.k));
  BlockStats stats;

  for (std::int64_t r0 = 0; r0 < n_q; r0 += tile.q) {
    const std::int64_t r1 = std::min(n_q, r0 + tile.q);
    for (std::int64_t c0 = 0; c0 < n_k; c0 += tile.k) {
      const std::int64_t c1 = std::min(n_k, c0 + tile.k);
      const std::int64_t cols = c1 - c0;
      // Head-independent masks: one bitmap serves every head, and the tile counts once.
      if (!per_head) {
        const std::int64_t n = tile_bits(mask, q.pos, kv.pos, r0, r1, c0, c1, 0, bits);
        ++stats.tiles;
        if (n == 0) continue;
        ++stats.tiles_visited;
        stats.pairs_allowed += n;
      }
      for (std::int64_t h = 0; h < shape.heads; ++h) {
        if (per_head) {
          const std::int64_t n = tile_bits(mask, q.pos, kv.pos, r0, r1, c0, c1, h, bits);
          ++stats.tiles;
          if (n == 0) continue;
          ++stats.tiles_visited;
          stats.pairs_allowed += n;
        }
        const std::int64_t hk = shape.kv_head(h);
        for (std::int64_t r = r0; r < r1; ++r) {
          const unsigned char* row_bits = bits.data() + (r - r0) * cols;
          const float* qr = q.q.data() + (r * shape.heads + h) * d_n;
          bool any = false;
          T m_tile = neg_inf<T>;
          for (std::int64_t c = 0; c < cols; ++c) {
            if (!row_bits[c]) continue;
            const float* kc = kv.k.data() + ((c0 + c) * shape.kv_heads + hk) * d_n;
            T dot = T(0);
            for (std::int64_t d = 0; d < d_n; ++d) dot += static_cast<T>(qr[d]) * static_cast<T>(kc[d]);
            score[sz(c)] = dot * scale;
            m_tile = any ? std::max(m_tile, score[sz(c)]) : score[sz(c)];
            any = true;
          }
          if (!any) continue;  // this row has no allowed key in the tile: its state is untouched

          T& m = partial.row_max(r, h);
          T& l = partial.row_sum(r, h);
          const std::span<T> o = partial.acc(r, h);
          const T m_new = std::max(m, m_tile);
          if (m_new != m) {
            // exp(-inf) = 0 rescales the empty initial state, whose acc and sum are 0 anyway.
            const T alpha = std::exp(m - m_new);
            l *= alpha;
            for (T& x : o) x *= alpha;
            m = m_new;
          }
          for (std::int64_t c = 0; c < cols; ++c) {
            if (!row_bits[c]) continue;
            const T p = std::exp(score[sz(c)] - m);
            l += p;
            const float* vc = kv.v.data() + ((c0 + c) * shape.kv_heads + hk) * d_n;
            for (std::int64_t d = 0; d < d_n; ++d) o[sz(d)] += p * static_cast<T>(vc[d]);
          }
        }
      }
    }
  }
  return stats;
}

template class Partial<float>;
template class Partial<double>;
template Partial<float> merge(const Partial<float>&, const Partial<float>&);
template Partial<double> merge(const Partial<double>&, const Partial<double>&);
template BlockStats accumulate_block(Partial<float>&, const QBlock&, const KVBlock&, const models::Mask&,
                                     models::TileShape);
template BlockStats accumulate_block(Partial<double>&, const QBlock&, const KVBlock&, const models::Mask&,
                                     models::TileShape);

}  // namespace ringsim::kernels
