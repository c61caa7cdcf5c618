#pragma once
// Memo of the per-device rows of a sparse mask. A ring visits every (Q block, K/V block) pair,
// so each device's compacted / bucket-sorted rows would otherwise be rebuilt once per partner
// block (N times); building them is O(block) with a strided gather for striped layouts, as
// costly as the tiles themselves. The memo is bounded in bytes (oldest entries go first), safe
// to use from several threads, and invisible in the results: the rows depend only on the
// (immutable) mask, the layout, the head, the device and the side.
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

#include "models/io/function_ref.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/sparse_tiles.hpp"

namespace ringsim::models {

class SparseRowsCache {
 public:
  static constexpr std::size_t kDefaultBudgetBytes = std::size_t{256} << 20;
  explicit SparseRowsCache(std::size_t budget_bytes = kDefaultBudgetBytes) : budget_bytes_(budget_bytes) {}

  // The rows of (layout, head, device, side), from the memo or from build(). Explicit
  // permutation layouts are memoised per instance (Layout::instance_tag): copies share entries,
  // two permutations built separately do not, even with equal tokens.
  [[nodiscard]] std::shared_ptr<const SortedRows> get(const Layout& layout, std::int64_t head, std::int64_t device,
                                                      bool queries, FunctionRef<SortedRows()> build);

 private:
  // (layout kind, n_dev, stripe width, permutation instance, head, device, side): with the
  // mask's n_seq this fixes the layout's positions.
  using Key = std::array<std::int64_t, 7>;
  struct Entry {
    std::shared_ptr<const SortedRows> rows;
    std::shared_ptr<const void> tag;  // keeps a permutation's tag address unique while cached
  };
  std::mutex mutex_;
  std::map<Key, Entry> entries_;
  std::deque<Key> order_;  // insertion order, for eviction
  std::size_t bytes_ = 0;
  std::size_t budget_bytes_;
};

}  // namespace ringsim::models
