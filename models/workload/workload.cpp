#include "models/workload/workload.hpp"

#include <algorithm>
#include <string>

#include "models/io/error.hpp"

namespace ringsim::models {

void check_tile(TileShape tile, std::int64_t block) {
  if (tile.q <= 0 || tile.k <= 0)
    throw InputError({}, 0, "tile",
                     "tile sizes must be positive, got " + std::to_string(tile.q) + "x" + std::to_string(tile.k));
  if (tile.q > block || tile.k > block)
    throw InputError({}, 0, "tile",
                     "tile " + std::to_string(tile.q) + "x" + std::to_string(tile.k) +
                         " is larger than the per-device block of " + std::to_string(block) + " tokens");
}

Workload::Workload(const Layout& layout, const Mask& mask, TileShape tile, std::int64_t kv_block_bytes)
    : layout_(&layout), mask_(&mask), tile_(tile), kv_block_bytes_(kv_block_bytes) {
  check_tile(tile, layout.block());
  if (mask.order_only() && layout.order_classes())
    classes_ = Classes::BySign;
  else if (mask.shift_invariant() && layout.device_shift())
    classes_ = Classes::ByDifference;
  else
    classes_ = Classes::ByPair;
}

std::int64_t Workload::distinct_blocks(const Layout& layout, const Mask& mask) noexcept {
  const std::int64_t n = layout.n_dev();
  if (mask.order_only() && layout.order_classes()) return std::min<std::int64_t>(3, n * n);
  if (mask.shift_invariant() && layout.device_shift()) return 2 * n - 1;
  return n * n;
}

std::int64_t Workload::class_key(std::int64_t j, std::int64_t k) const noexcept {
  switch (classes_) {
    case Classes::BySign: return (j > k) - (j < k);
    case Classes::ByDifference: return j - k;
    case Classes::ByPair: return j * layout_->n_dev() + k;
  }
  return 0;
}

BlockStats Workload::count_block_by_tiles(const Layout& layout, const Mask& mask, std::int64_t j, std::int64_t k,
                                          TileShape tile) {
  BlockStats s;
  for (std::int64_t h = 0; h < mask.heads(); ++h) {
    mask.visit_block(layout, j, k, tile, h, [&](const TileCount& t) {
      ++s.tiles_total;
      s.allowed_pairs += t.allowed;
      if (t.allowed > 0) ++s.tiles_computed;
      if (t.visited) {
        ++s.tiles_visited;
        s.visited_area += t.rows * t.cols;
        if (t.allowed < t.rows * t.cols) {
          s.masked_area += t.rows * t.cols;
          ++s.tiles_masked;
        }
      } else {
        s.skipped_area += t.rows * t.cols;
      }
    });
  }
  return s;
}

BlockStats Workload::count_block(const Layout& layout, const Mask& mask, std::int64_t j, std::int64_t k,
                                 TileShape tile) {
  if (BlockStats t; mask.heads() == 1 && mask.block_shortcut(layout, j, k, tile, t))
    return t;
  return count_block_by_tiles(layout, mask, j, k, tile);
}

const BlockStats& Workload::block(std::int64_t round, std::int64_t device) const {
  const std::int64_t n = layout_->n_dev();
  const std::int64_t k = kv_block_of(device, round, n);
  const std::int64_t key = class_key(device, k);
  if (classes_ == Classes::ByPair) {
    auto it = pairs_.find(key);
    if (it == pairs_.end()) it = pairs_.emplace(key, count_block(*layout_, *mask_, device, k, tile_)).first;
    return it->second;
  }
  if (table_.empty() && classes_ == Classes::ByDifference) table_.resize(static_cast<std::size_t>(2 * n - 1));
  auto& entry = classes_ == Classes::BySign ? signs_[static_cast<std::size_t>(key + 1)]
                                            : table_[static_cast<std::size_t>(key + n - 1)];
  if (!entry) entry = count_block(*layout_, *mask_, device, k, tile_);
  return *entry;
}

DeviceRound Workload::device_round(std::int64_t round, std::int64_t device) const {
  const std::int64_t n = layout_->n_dev();
  // The last round's block has no next holder in the forward pass: nothing is sent.
  const std::int64_t bytes = round + 1 < n ? kv_block_bytes_ : 0;
  return {round, device, kv_block_of(device, round, n), block(round, device), bytes};
}

RoundSummary Workload::round_summary(std::int64_t round) const {
  RoundSummary r;
  r.round = round;
  r.min_visited_area = INT64_MAX;
  r.max_visited_area = -1;
  auto take = [&](std::int64_t device, const BlockStats& s, std::int64_t count) {
    if (s.visited_area > r.max_visited_area ||
        (s.visited_area == r.max_visited_area && s.tiles_visited > r.max_block.tiles_visited)) {
      r.max_visited_area = s.visited_area;
      r.max_block = s;
      r.argmax_device = device;
    }
    r.min_visited_area = std::min(r.min_visited_area, s.visited_area);
    r.max_tiles_visited = std::max(r.max_tiles_visited, s.tiles_visited);
    r.sum_visited_area += s.visited_area * count;
    r.sum_allowed_pairs += s.allowed_pairs * count;
    r.sum_tiles_visited += s.tiles_visited * count;
  };
  for_each_class(round, take);
  return r;
}

void Workload::for_each_class(std::int64_t round,
                              FunctionRef<void(std::int64_t device, const BlockStats&, std::int64_t count)> f) const {
  const std::int64_t n = layout_->n_dev();
  if (classes_ != Classes::ByPair) {
    // In round i devices j >= i hold block j - i (difference i) and devices j < i hold block
    // j - i + N (difference i - N): two classes, whatever N is.
    if (round < n) f(round, block(round, round), n - round);
    if (round > 0) f(0, block(round, 0), round);
    return;
  }
  for (std::int64_t j = 0; j < n; ++j) f(j, block(round, j), 1);
}

BlockStats Workload::totals() const {
  BlockStats t;
  for (std::int64_t i = 0; i < layout_->n_dev(); ++i)
    for_each_class(i, [&](std::int64_t, const BlockStats& s, std::int64_t count) { t.add(s, count); });
  return t;
}

void Workload::for_each_tile(std::int64_t round, std::int64_t device,
                             FunctionRef<void(std::int64_t, const TileCount&)> visit) const {
  const std::int64_t k = kv_block_of(device, round, layout_->n_dev());
  for (std::int64_t h = 0; h < mask_->heads(); ++h)
    mask_->visit_block(*layout_, device, k, tile_, h, [&](const TileCount& t) { visit(h, t); });
}

}  // namespace ringsim::models
