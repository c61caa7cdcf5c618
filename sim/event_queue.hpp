#pragma once
// The engine's pending-event set: a monotone radix queue ("radix heap") of 16-byte events.
//
// Why not a binary heap: a DES never schedules into the past, so keys are monotone and a radix
// queue applies. Each event is appended to the bucket named by the highest bit in which its
// time differs from the last time taken out; taking the minimum scans only the lowest non-empty
// bucket and moves its events into strictly lower buckets, so an event moves at most 64 times
// and in practice once or twice. Pushes are O(1) appends, nothing is swapped through a tree,
// and a batch of events at one time (a lock-step ring round) leaves as one contiguous run.
//
// Ties: events at equal times come out in insertion order, which is what makes the engine
// deterministic. No sequence number is stored; the order holds because every bucket stays
// sorted by insertion: a push appends the newest event, and redistributing a bucket appends
// its (sorted) events, in order, to buckets that are empty at that moment (all buckets below
// the lowest non-empty one are empty by definition).
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ringsim::sim {

// Time in ticks (see engine.hpp) and an opaque payload (the engine's handler + argument).
struct QueuedEvent {
  std::uint64_t time;
  std::uint64_t payload;
};
static_assert(sizeof(QueuedEvent) == 16);

class EventQueue {
 public:
  // `time` must be >= floor(): the engine guarantees it by refusing to schedule before now().
  void push(std::uint64_t time, std::uint64_t payload) {
    ++size_;
    if (time == last_) {
      front_.push_back({time, payload});
      return;
    }
    const int b = static_cast<int>(std::bit_width(time ^ last_)) - 1;
    buckets_[static_cast<std::size_t>(b)].push_back({time, payload});
    mask_ |= std::uint64_t{1} << b;
  }

  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // Every pending and future event time is >= floor().
  [[nodiscard]] std::uint64_t floor() const noexcept { return last_; }

  // Takes out the earliest event (first inserted among equals) if its time is <= limit.
  // Returns false, changing nothing observable, when the queue is empty or the earliest
  // event is later than limit; in that case floor() does not move past limit.
  bool pop_until(std::uint64_t limit, QueuedEvent& out) {
    if (head_ == front_.size()) {
      if (mask_ == 0) return false;
      if (!refill(limit)) return false;
    } else if (last_ > limit) {
      return false;
    }
    out = front_[head_++];
    if (head_ == front_.size()) {
      front_.clear();
      head_ = 0;
    }
    --size_;
    return true;
  }

  void clear() {
    front_.clear();
    head_ = 0;
    for (auto& b : buckets_) b.clear();
    mask_ = 0;
    last_ = 0;
    size_ = 0;
  }

 private:
  // Moves the lowest non-empty bucket's minimum-time events to the front, provided that
  // minimum is <= limit.
  bool refill(std::uint64_t limit) {
    const auto i = static_cast<std::size_t>(std::countr_zero(mask_));
    auto& src = buckets_[i];
    std::uint64_t lo = src.front().time;
    for (const auto& e : src) lo = e.time < lo ? e.time : lo;
    if (lo > limit) return false;
    last_ = lo;
    mask_ &= ~(std::uint64_t{1} << i);
    front_.clear();
    head_ = 0;
    for (const auto& e : src) {
      if (e.time == lo) {
        front_.push_back(e);
      } else {
        const int b = static_cast<int>(std::bit_width(e.time ^ lo)) - 1;
        buckets_[static_cast<std::size_t>(b)].push_back(e);
        mask_ |= std::uint64_t{1} << b;
      }
    }
    src.clear();
    return true;
  }

  std::vector<QueuedEvent> front_;  // events at time last_, consumed from head_
  std::size_t head_ = 0;
  std::array<std::vector<QueuedEvent>, 64> buckets_;  // bucket b: highest differing bit b
  std::uint64_t mask_ = 0;                            // bit b set <=> bucket b non-empty
  std::uint64_t last_ = 0;
  std::size_t size_ = 0;
};

}  // namespace ringsim::sim
