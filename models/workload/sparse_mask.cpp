#include "models/workload/sparse_mask.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "models/io/error.hpp"

namespace ringsim::models {
namespace {

using Index = std::size_t;
Index idx(std::int64_t i) noexcept { return static_cast<Index>(i); }

[[noreturn]] void bad_mask(const std::string& message) { throw InputError({}, 0, "mask", message); }

void check_common(std::int64_t n_seq, std::size_t q_heads, std::size_t k_heads) {
  if (n_seq <= 0) bad_mask("sequence length must be positive, got " + std::to_string(n_seq));
  // Bucket ranks and tile counts are int32 / int64: keep every rank representable.
  if (n_seq > (std::int64_t{1} << 30))
    bad_mask("index-based masks support n_seq up to 2^30, got " + std::to_string(n_seq));
  if (q_heads == 0) bad_mask("an index-based mask needs at least one head");
  if (q_heads != k_heads)
    bad_mask("query lists describe " + std::to_string(q_heads) + " heads but key lists " + std::to_string(k_heads));
}

void check_block(const Layout& layout, std::int64_t n_seq, std::int64_t q_device, std::int64_t k_device,
                 std::int64_t head, std::int64_t heads) {
  if (layout.n_seq() != n_seq)
    bad_mask("mask built for n_seq = " + std::to_string(n_seq) + " used with a layout of n_seq = " +
             std::to_string(layout.n_seq()));
  if (q_device < 0 || q_device >= layout.n_dev() || k_device < 0 || k_device >= layout.n_dev())
    throw std::out_of_range("visit_block: device outside [0, " + std::to_string(layout.n_dev()) + ")");
  if (head < 0 || head >= heads)
    throw std::out_of_range("visit_block: head " + std::to_string(head) + " outside [0, " + std::to_string(heads) +
                            ")");
}

// Calls f(pos) for every position of the progressions that lies in [0, n_seq), in order.
template <class F>
void for_each_position(std::span<const Progression> ps, std::int64_t n_seq, F&& f) {
  for (const auto& p : ps) {
    std::int64_t pos = p.start;
    for (std::int64_t i = 0; i < p.count; ++i, pos += p.stride)
      if (pos >= 0 && pos < n_seq) f(pos);
  }
}

std::size_t total_count(std::span<const Progression> ps) noexcept {
  std::int64_t n = 0;
  for (const auto& p : ps) n += p.count;
  return idx(n);
}

// Whether the progressions list strictly increasing positions (true for every layout but an
// explicit permutation), which lets sorting by group skip its check and use a counting sort.
bool increasing(std::span<const Progression> ps) noexcept {
  std::int64_t last = std::numeric_limits<std::int64_t>::min();
  for (const auto& p : ps) {
    if (p.count <= 0) continue;
    if (p.start <= last || p.stride <= 0) return false;
    last = p.last();
  }
  return true;
}

std::vector<Progression> device_segments(const Layout& layout, std::int64_t device) {
  std::vector<Progression> segs;
  layout.segments(device, 0, layout.block(), segs);
  return segs;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// QKDropMask

QKDropMask::QKDropMask(const KeptPositions& kept, std::int64_t n_seq, std::string name)
    : SortedRowsMask(std::move(name), n_seq) {
  check_common(n_seq, kept.q.size(), kept.k.size());
  heads_ = static_cast<std::int64_t>(kept.q.size());
  words_ = (n_seq + 63) / 64;
  q_bits_.assign(idx(heads_ * words_), 0);
  k_bits_.assign(idx(heads_ * words_), 0);
  q_kept_.assign(idx(heads_), 0);
  k_kept_.assign(idx(heads_), 0);
  auto fill = [&](const std::vector<std::int64_t>& list, std::int64_t h, const char* side,
                  std::vector<std::uint64_t>& bits) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::int64_t p = list[i];
      if (p < 0 || p >= n_seq)
        bad_mask(std::string("head ") + std::to_string(h) + ": kept " + side + " position " + std::to_string(p) +
                 " is outside [0, n_seq = " + std::to_string(n_seq) + ")");
      if (i > 0 && p <= list[i - 1])
        bad_mask(std::string("head ") + std::to_string(h) + ": kept " + side +
                 " positions must be strictly increasing (" + std::to_string(list[i - 1]) + " then " +
                 std::to_string(p) + ")");
      bits[idx(h * words_ + p / 64)] |= std::uint64_t{1} << (p % 64);
    }
  };
  for (std::int64_t h = 0; h < heads_; ++h) {
    fill(kept.q[idx(h)], h, "query", q_bits_);
    fill(kept.k[idx(h)], h, "key", k_bits_);
    q_kept_[idx(h)] = static_cast<std::int64_t>(kept.q[idx(h)].size());
    k_kept_[idx(h)] = static_cast<std::int64_t>(kept.k[idx(h)].size());
  }
}

bool QKDropMask::query_kept(std::int64_t pos, std::int64_t head) const noexcept {
  if (pos < 0 || pos >= n_seq_ || head < 0 || head >= heads_) return false;
  return (q_bits_[idx(head * words_ + pos / 64)] >> (pos % 64)) & 1U;
}

bool QKDropMask::key_kept(std::int64_t pos, std::int64_t head) const noexcept {
  if (pos < 0 || pos >= n_seq_ || head < 0 || head >= heads_) return false;
  return (k_bits_[idx(head * words_ + pos / 64)] >> (pos % 64)) & 1U;
}

bool QKDropMask::allowed(std::int64_t q, std::int64_t p, std::int64_t head) const noexcept {
  return p <= q && query_kept(q, head) && key_kept(p, head);
}

std::int64_t QKDropMask::kept_query_count(std::int64_t head) const { return q_kept_.at(idx(head)); }
std::int64_t QKDropMask::kept_key_count(std::int64_t head) const { return k_kept_.at(idx(head)); }

KeptPositions QKDropMask::kept() const {
  KeptPositions out;
  out.q.resize(idx(heads_));
  out.k.resize(idx(heads_));
  for (std::int64_t h = 0; h < heads_; ++h) {
    for (std::int64_t p = 0; p < n_seq_; ++p) {
      if (query_kept(p, h)) out.q[idx(h)].push_back(p);
      if (key_kept(p, h)) out.k[idx(h)].push_back(p);
    }
  }
  return out;
}

SortedRows QKDropMask::rows(const std::vector<std::uint64_t>& bits, std::span<const Progression> positions,
                            std::int64_t head) const {
  SortedRows r;
  r.key.resize(total_count(positions));
  const std::uint64_t* words = bits.data() + head * words_;
  std::size_t n = 0;
  // Branch-free compaction: whether a row is kept is random, so a branch would mispredict.
  for_each_position(positions, n_seq_, [&](std::int64_t p) {
    r.key[n] = static_cast<std::uint64_t>(p);
    n += (words[p / 64] >> (p % 64)) & 1U;
  });
  r.key.resize(n);
  sort_rows(r, 1, increasing(positions));
  return r;
}

SortedRows QKDropMask::side_rows(bool query, std::span<const Progression> positions, std::int64_t head) const {
  return rows(query ? q_bits_ : k_bits_, positions, head);
}

// ---------------------------------------------------------------------------------------------
// HashMask

HashMask::HashMask(const BucketIds& buckets, std::int64_t n_seq, std::string name)
    : SortedRowsMask(std::move(name), n_seq) {
  check_common(n_seq, buckets.q.size(), buckets.k.size());
  heads_ = static_cast<std::int64_t>(buckets.q.size());
  q_rank_.resize(idx(heads_ * n_seq));
  k_rank_.resize(idx(heads_ * n_seq));
  ids_.resize(idx(heads_));
  for (std::int64_t h = 0; h < heads_; ++h) {
    const auto& qb = buckets.q[idx(h)];
    const auto& kb = buckets.k[idx(h)];
    std::int64_t max_id = 0;
    for (const auto* side : {&qb, &kb}) {
      const char* name_of_side = side == &qb ? "query" : "key";
      if (static_cast<std::int64_t>(side->size()) != n_seq)
        bad_mask("head " + std::to_string(h) + " has " + std::to_string(side->size()) + " " + name_of_side +
                 " buckets, expected one per position (n_seq = " + std::to_string(n_seq) + ")");
      for (std::size_t p = 0; p < side->size(); ++p) {
        const std::int64_t b = (*side)[p];
        if (b < 0)
          bad_mask("head " + std::to_string(h) + ": " + name_of_side + " bucket of position " + std::to_string(p) +
                   " is " + std::to_string(b) + "; bucket ids must be >= 0");
        max_id = std::max(max_id, b);
      }
    }
    // Dense ranks preserve the id order, so sorting by rank is sorting by bucket id.
    auto& ids = ids_[idx(h)];
    auto* qr = q_rank_.data() + h * n_seq;
    auto* kr = k_rank_.data() + h * n_seq;
    if (max_id <= 4 * n_seq) {
      std::vector<std::int32_t> rank_of(idx(max_id) + 1, -1);
      for (const auto* side : {&qb, &kb})
        for (const std::int64_t b : *side) rank_of[idx(b)] = 0;
      for (std::int64_t b = 0; b <= max_id; ++b) {
        if (rank_of[idx(b)] < 0) continue;
        rank_of[idx(b)] = static_cast<std::int32_t>(ids.size());
        ids.push_back(b);
      }
      for (std::int64_t p = 0; p < n_seq; ++p) {
        qr[p] = rank_of[idx(qb[idx(p)])];
        kr[p] = rank_of[idx(kb[idx(p)])];
      }
    } else {
      ids.reserve(idx(2 * n_seq));
      ids.insert(ids.end(), qb.begin(), qb.end());
      ids.insert(ids.end(), kb.begin(), kb.end());
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      auto rank = [&](std::int64_t b) {
        return static_cast<std::int32_t>(std::lower_bound(ids.begin(), ids.end(), b) - ids.begin());
      };
      for (std::int64_t p = 0; p < n_seq; ++p) {
        qr[p] = rank(qb[idx(p)]);
        kr[p] = rank(kb[idx(p)]);
      }
    }
    ids.shrink_to_fit();
  }
}

std::int64_t HashMask::query_bucket(std::int64_t pos, std::int64_t head) const noexcept {
  if (pos < 0 || pos >= n_seq_ || head < 0 || head >= heads_) return -1;
  return ids_[idx(head)][idx(q_rank_[idx(head * n_seq_ + pos)])];
}

std::int64_t HashMask::key_bucket(std::int64_t pos, std::int64_t head) const noexcept {
  if (pos < 0 || pos >= n_seq_ || head < 0 || head >= heads_) return -1;
  return ids_[idx(head)][idx(k_rank_[idx(head * n_seq_ + pos)])];
}

std::int64_t HashMask::bucket_count(std::int64_t head) const {
  return static_cast<std::int64_t>(ids_.at(idx(head)).size());
}

bool HashMask::allowed(std::int64_t q, std::int64_t p, std::int64_t head) const noexcept {
  if (p > q || p < 0 || q >= n_seq_ || head < 0 || head >= heads_) return false;
  return q_rank_[idx(head * n_seq_ + q)] == k_rank_[idx(head * n_seq_ + p)];
}

SortedRows HashMask::rows(const std::vector<std::int32_t>& rank, std::span<const Progression> positions,
                          std::int64_t head) const {
  SortedRows r;
  r.key.resize(total_count(positions));
  const std::int32_t* ranks = rank.data() + head * n_seq_;
  std::size_t n = 0;
  for_each_position(positions, n_seq_, [&](std::int64_t p) { r.key[n++] = SortedRows::make_key(ranks[p], p); });
  r.key.resize(n);
  sort_rows(r, bucket_count(head), increasing(positions));
  return r;
}

SortedRows HashMask::side_rows(bool query, std::span<const Progression> positions, std::int64_t head) const {
  return rows(query ? q_rank_ : k_rank_, positions, head);
}

// ---------------------------------------------------------------------------------------------
// SortedRowsMask

SortedRows SortedRowsMask::device_rows(bool query, const Layout& layout, std::int64_t device, std::int64_t head) const {
  const auto segs = device_segments(layout, device);
  return side_rows(query, segs, head);
}

SortedRows SortedRowsMask::query_rows(const Layout& layout, std::int64_t device, std::int64_t head) const {
  check_block(layout, n_seq_, device, device, head, heads_);
  return device_rows(true, layout, device, head);
}

SortedRows SortedRowsMask::key_rows(const Layout& layout, std::int64_t device, std::int64_t head) const {
  check_block(layout, n_seq_, device, device, head, heads_);
  return device_rows(false, layout, device, head);
}

std::int64_t SortedRowsMask::count(std::span<const Progression> q, std::span<const Progression> k) const {
  std::int64_t total = 0;
  for (std::int64_t h = 0; h < heads_; ++h) total += count_sorted_pairs(side_rows(true, q, h), side_rows(false, k, h));
  return total;
}

double SortedRowsMask::count_steps(const Layout& layout, TileShape tile) const noexcept {
  const double c = static_cast<double>(layout.block());
  const double tiles = std::ceil(c / static_cast<double>(tile.q)) * std::ceil(c / static_cast<double>(tile.k));
  // The rows themselves are memoised per device; each block walks both sides' rows and its tiles.
  return static_cast<double>(heads_) * (tiles + 2 * c);
}

void SortedRowsMask::visit_block(const Layout& layout, std::int64_t q_device, std::int64_t k_device, TileShape tile,
                                 std::int64_t head, TileVisitor visit) const {
  check_block(layout, n_seq_, q_device, k_device, head, heads_);
  const auto q = cache_->get(layout, head, q_device, true, [&] { return device_rows(true, layout, q_device, head); });
  const auto k = cache_->get(layout, head, k_device, false, [&] { return device_rows(false, layout, k_device, head); });
  visit_sorted_tiles(*q, *k, tile, visit);
}

}  // namespace ringsim::models
