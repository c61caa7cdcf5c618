#include "kernels/reference/ring_emulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ringsim::kernels {
namespace {

std::size_t sz(std::int64_t n) { return static_cast<std::size_t>(n); }

void check_inputs(const AttentionShape& shape, std::int64_t n_seq, std::span<const float> q, std::span<const float> k,
                  std::span<const float> v) {
  shape.validate();
  if (static_cast<std::int64_t>(q.size()) != n_seq * shape.q_stride() ||
      static_cast<std::int64_t>(k.size()) != n_seq * shape.kv_stride() ||
      static_cast<std::int64_t>(v.size()) != n_seq * shape.kv_stride())
    throw std::invalid_argument("kernels::reference: q, k, v sizes do not match n_seq " + std::to_string(n_seq) +
                                " and the attention shape");
}

// out[tokens[i]] = rows[i], rows of `stride` values: the inverse of gather_rows.
template <class T>
void scatter_rows(std::span<const T> rows, std::span<const std::int64_t> tokens, std::int64_t stride,
                  std::vector<T>& out) {
  for (std::size_t i = 0; i < tokens.size(); ++i)
    std::copy_n(rows.data() + static_cast<std::int64_t>(i) * stride, stride, out.data() + tokens[i] * stride);
}

}  // namespace

std::vector<float> gather_rows(std::span<const float> x, std::span<const std::int64_t> tokens, std::int64_t stride) {
  std::vector<float> out(tokens.size() * sz(stride));
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || (tokens[i] + 1) * stride > static_cast<std::int64_t>(x.size()))
      throw std::invalid_argument("kernels::reference: gather_rows token " + std::to_string(tokens[i]) +
                                  " out of range");
    std::copy_n(x.data() + tokens[i] * stride, stride, out.data() + static_cast<std::int64_t>(i) * stride);
  }
  return out;
}

template <class T>
RingResult<T> ring_attention(const models::Layout& layout, const AttentionShape& shape, std::span<const float> q,
                             std::span<const float> k, std::span<const float> v, const models::Mask& mask,
                             const RingOptions& options) {
  const std::int64_t n_seq = layout.n_seq();
  const std::int64_t n_dev = layout.n_dev();
  const std::int64_t c = layout.block();
  check_inputs(shape, n_seq, q, k, v);

  // The one-off permutation before the first layer: each device's Q, K, V in local order.
  std::vector<std::vector<std::int64_t>> pos(sz(n_dev));
  std::vector<std::vector<float>> qd(sz(n_dev));
  std::vector<std::vector<float>> kd(sz(n_dev));
  std::vector<std::vector<float>> vd(sz(n_dev));
  std::vector<Partial<T>> partial;
  partial.reserve(sz(n_dev));
  for (std::int64_t d = 0; d < n_dev; ++d) {
    const std::size_t i = sz(d);
    pos[i] = layout.positions(d);
    qd[i] = gather_rows(q, pos[i], shape.q_stride());
    kd[i] = gather_rows(k, pos[i], shape.kv_stride());
    vd[i] = gather_rows(v, pos[i], shape.kv_stride());
    partial.emplace_back(shape, c);
  }

  RingResult<T> res;
  res.stats.resize(sz(n_dev * n_dev));
  for (std::int64_t round = 0; round < n_dev; ++round) {
    for (std::int64_t j = 0; j < n_dev; ++j) {
      const std::size_t kb = sz(((j - round) % n_dev + n_dev) % n_dev);
      const QBlock qb{qd[sz(j)], pos[sz(j)]};
      const KVBlock kvb{kd[kb], vd[kb], pos[kb]};
      BlockStats& st = res.stats[sz(round * n_dev + j)];
      if (options.accumulation == Accumulation::Online) {
        st = accumulate_block(partial[sz(j)], qb, kvb, mask, options.tile);
      } else {
        Partial<T> fresh(shape, c);
        st = accumulate_block(fresh, qb, kvb, mask, options.tile);
        partial[sz(j)].merge(fresh);
      }
    }
  }

  res.output.out.assign(sz(n_seq * shape.q_stride()), T(0));
  res.output.lse.assign(sz(n_seq * shape.heads), T(0));
  for (std::int64_t d = 0; d < n_dev; ++d) {
    const AttentionOutput<T> local = partial[sz(d)].finalize();
    scatter_rows<T>(local.out, pos[sz(d)], shape.q_stride(), res.output.out);
    scatter_rows<T>(local.lse, pos[sz(d)], shape.heads, res.output.lse);
  }
  return res;
}

AttentionOutput<double> reference_attention(const AttentionShape& shape, std::span<const float> q,
                                            std::span<const float> k, std::span<const float> v,
                                            const models::Mask& mask) {
  shape.validate();
  const auto n_seq = static_cast<std::int64_t>(q.size()) / shape.q_stride();
  check_inputs(shape, n_seq, q, k, v);
  const std::int64_t d_n = shape.head_dim;
  const double scale = shape.scale();

  AttentionOutput<double> res;
  res.out.assign(sz(n_seq * shape.q_stride()), 0.0);
  res.lse.assign(sz(n_seq * shape.heads), -std::numeric_limits<double>::infinity());
  std::vector<double> score(sz(n_seq));
  std::vector<unsigned char> ok(sz(n_seq));
  for (std::int64_t t = 0; t < n_seq; ++t) {
    for (std::int64_t h = 0; h < shape.heads; ++h) {
      const std::int64_t hk = shape.kv_head(h);
      const float* qr = q.data() + (t * shape.heads + h) * d_n;
      double m = -std::numeric_limits<double>::infinity();
      bool any = false;
      for (std::int64_t p = 0; p < n_seq; ++p) {
        ok[sz(p)] = mask.allowed(t, p, h) ? 1 : 0;
        if (!ok[sz(p)]) continue;
        const float* kp = k.data() + (p * shape.kv_heads + hk) * d_n;
        double dot = 0.0;
        for (std::int64_t d = 0; d < d_n; ++d) dot += static_cast<double>(qr[d]) * static_cast<double>(kp[d]);
        score[sz(p)] = dot * scale;
        m = std::max(m, score[sz(p)]);
        any = true;
      }
      if (!any) continue;  // stays zeros, lse -inf
      double l = 0.0;
      double* o = res.out.data() + (t * shape.heads + h) * d_n;
      for (std::int64_t p = 0; p < n_seq; ++p) {
        if (!ok[sz(p)]) continue;
        const double w = std::exp(score[sz(p)] - m);
        l += w;
        const float* vp = v.data() + (p * shape.kv_heads + hk) * d_n;
        for (std::int64_t d = 0; d < d_n; ++d) o[d] += w * static_cast<double>(vp[d]);
      }
      for (std::int64_t d = 0; d < d_n; ++d) o[d] /= l;
      res.lse[sz(t * shape.heads + h)] = m + std::log(l);
    }
  }
  return res;
}

template RingResult<float> ring_attention(const models::Layout&, const AttentionShape&, std::span<const float>,
                                          std::span<const float>, std::span<const float>, const models::Mask&,
                                          const RingOptions&);
template RingResult<double> ring_attention(const models::Layout&, const AttentionShape&, std::span<const float>,
                                           std::span<const float>, std::span<const float>, const models::Mask&,
                                           const RingOptions&);

}  // namespace ringsim::kernels
