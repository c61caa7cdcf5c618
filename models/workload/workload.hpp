#pragma once
// Who computes what in which round: for round i and device j (holding K/V block
// k = (j - i) mod N), the tile grid over the local Q block x local K/V block, its allowed-pair
// counts, computed tiles, and the K/V bytes moved to the next device. Counts are exact int64.
//
// Blocks are memoised by a class key wherever the layout and mask make a block's counts depend
// only on the device difference (shift-invariant layouts and masks) or only on its sign
// (order-only masks): then a whole ring costs O(distinct classes x tiles), not O(N^2 x tiles).
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"

namespace ringsim::models {


struct DeviceRound {
  std::int64_t round = 0;
  std::int64_t device = 0;
  std::int64_t kv_block = 0;
  BlockStats stats;
  std::int64_t kv_bytes = 0;  // bytes this device sends to the next one at the end of the round
};

// The per-round view the analytic model and the terminal views need: extremes over devices.
struct RoundSummary {
  std::int64_t round = 0;
  std::int64_t max_visited_area = 0;
  std::int64_t min_visited_area = 0;
  std::int64_t sum_visited_area = 0;
  std::int64_t max_tiles_visited = 0;
  std::int64_t argmax_device = 0;  // a device with the maximum visited area
  std::int64_t sum_allowed_pairs = 0;
  std::int64_t sum_tiles_visited = 0;
  // The device of maximum area's whole block: the analytic model charges that device's
  // tile count and area together, so they must come from the same block.
  BlockStats max_block;
};


class Workload {
 public:
  // kv_block_bytes: bytes of one device's K/V block as it travels (GQA aware; see
  // kv_block_bytes() below). The layout and mask must outlive the workload.
  Workload(const Layout& layout, const Mask& mask, TileShape tile, std::int64_t kv_block_bytes);

  [[nodiscard]] const Layout& layout() const noexcept { return *layout_; }
  [[nodiscard]] const Mask& mask() const noexcept { return *mask_; }
  [[nodiscard]] TileShape tile() const noexcept { return tile_; }
  [[nodiscard]] std::int64_t devices() const noexcept { return layout_->n_dev(); }
  [[nodiscard]] std::int64_t rounds() const noexcept { return layout_->n_dev(); }
  [[nodiscard]] std::int64_t kv_block_bytes() const noexcept { return kv_block_bytes_; }
  [[nodiscard]] static std::int64_t kv_block_of(std::int64_t device, std::int64_t round, std::int64_t n) noexcept {
    return ((device - round) % n + n) % n;
  }

  // Whether a block's counts follow from its devices' distance q - k (or its sign) alone: then
  // positions at one distance share one block (a double ring's round visits them together).
  [[nodiscard]] bool classes_by_distance() const noexcept { return classes_ != Classes::ByPair; }
  // Not thread-safe: blocks are memoised on first use.
  [[nodiscard]] const BlockStats& block(std::int64_t round, std::int64_t device) const;
  [[nodiscard]] DeviceRound device_round(std::int64_t round, std::int64_t device) const;
  [[nodiscard]] RoundSummary round_summary(std::int64_t round) const;
  // Sums over every (round, device) block of the ring.
  [[nodiscard]] BlockStats totals() const;
  // Calls f once per distinct block of the round, with a device holding it and how many do
  // (two calls per round for the structured classes, one per device otherwise).
  void for_each_class(std::int64_t round,
                      FunctionRef<void(std::int64_t device, const BlockStats&, std::int64_t count)> f) const;
  // Every tile of one device-round, in row-major tile order, per mask head.
  void for_each_tile(std::int64_t round, std::int64_t device, FunctionRef<void(std::int64_t head, const TileCount&)> visit) const;

  // How many blocks the memo computes for a whole ring (3 sign classes, 2N - 1 differences, or
  // all N^2 pairs), decided as the constructor decides the classes.
  [[nodiscard]] static std::int64_t distinct_blocks(const Layout& layout, const Mask& mask) noexcept;

  // Counts of one (Q block, K/V block) pair, straight from the mask (no memo): with the mask's
  // whole-block shortcut where it has one, and tile by tile (the shortcut's reference).
  [[nodiscard]] static BlockStats count_block_by_tiles(const Layout& layout, const Mask& mask, std::int64_t q_device,
                                                       std::int64_t k_device, TileShape tile);
  [[nodiscard]] static BlockStats count_block(const Layout& layout, const Mask& mask, std::int64_t q_device,
                                              std::int64_t k_device, TileShape tile);

 private:
  // Class of block (j, k): equal keys guarantee equal counts.
  [[nodiscard]] std::int64_t class_key(std::int64_t q_device, std::int64_t k_device) const noexcept;

  const Layout* layout_;
  const Mask* mask_;
  TileShape tile_;
  std::int64_t kv_block_bytes_;
  enum class Classes { BySign, ByDifference, ByPair } classes_;
  // Sign and difference classes live in a flat table (index key + N - 1); pairs in a map.
  mutable std::vector<std::optional<BlockStats>> table_;
  mutable std::array<std::optional<BlockStats>, 3> signs_;  // inline: a sweep builds a workload per point
  mutable std::unordered_map<std::int64_t, BlockStats> pairs_;
};

// Bytes of one K/V block on the wire: tokens x kv_heads x head_dim x 2 tensors (K and V) x dtype.
[[nodiscard]] constexpr std::int64_t kv_block_bytes(std::int64_t tokens, std::int64_t kv_heads, std::int64_t head_dim,
                                                    std::int64_t dtype_bytes) noexcept {
  return tokens * kv_heads * head_dim * 2 * dtype_bytes;
}

// Validates a tile shape against a block: positive and no larger than the block.
void check_tile(TileShape tile, std::int64_t block);

}  // namespace ringsim::models
