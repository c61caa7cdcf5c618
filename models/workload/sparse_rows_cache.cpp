#include "models/workload/sparse_rows_cache.hpp"

#include <cstdint>
#include <utility>

namespace ringsim::models {
namespace {
std::size_t bytes_of(const SortedRows& r) noexcept { return r.key.size() * sizeof(std::uint64_t) + sizeof(SortedRows); }
}  // namespace

std::shared_ptr<const SortedRows> SparseRowsCache::get(const Layout& layout, std::int64_t head, std::int64_t device,
                                                       bool queries, FunctionRef<SortedRows()> build) {
  const auto& tag = layout.instance_tag();
  const Key key{static_cast<std::int64_t>(layout.kind()), layout.n_dev(), layout.width(),
                static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(tag.get())), head, device, queries ? 1 : 0};
  {
    const std::lock_guard lock(mutex_);
    if (const auto it = entries_.find(key); it != entries_.end()) return it->second.rows;
  }
  // Built outside the lock so threads working on other blocks do not wait; a race builds the
  // same rows twice and keeps the first.
  auto rows = std::make_shared<const SortedRows>(build());
  const std::size_t size = bytes_of(*rows);
  if (size > budget_bytes_) return rows;
  const std::lock_guard lock(mutex_);
  const auto [it, inserted] = entries_.try_emplace(key, Entry{rows, tag});
  if (!inserted) return it->second.rows;
  order_.push_back(key);
  bytes_ += size;
  while (bytes_ > budget_bytes_) {
    const auto old = entries_.find(order_.front());
    bytes_ -= bytes_of(*old->second.rows);
    entries_.erase(old);
    order_.pop_front();
  }
  return rows;
}

}  // namespace ringsim::models
