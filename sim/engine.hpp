#pragma once
// The discrete-event engine: a simulated clock in integer ticks, an event queue with a total,
// deterministic order (time, then scheduling order), and type-safe handlers.
//
// Time is an int64 count of ticks, by default picoseconds. Integers rather than double
// seconds because addition is then exact and associative: two chains of events that ought to
// meet at the same instant do meet, same-time batches stay batches, and results do not depend
// on the order in which durations were summed. A picosecond is far below anything the cost
// model resolves (a 1 us transfer is 1e6 ticks) while 2^63 ps is 106 days of simulated time.
// The resolution is a per-engine constructor argument because rounding each duration to a
// tick costs up to half a tick per event on a critical path: with picoseconds and 1 us events
// that is up to 5e-7 relative; an exact-agreement test against closed forms can choose
// femtoseconds (1e15 ticks/s, range 2.5 h of simulated time) and get 5e-10.
//
// Handlers: add_handler<Arg>(callable) registers a callable taking one Arg and returns a typed
// Handler<Arg>; an event is a handler plus an Arg value, packed with the handler's index into
// one 64-bit word (16 bits of index, 48 of argument) so that queued events are 16 bytes.
// Arg is an integral or enum type (range-checked into 48 bits) or any trivially copyable type
// of at most 6 bytes (e.g. struct { std::uint16_t a, b, c; }).
#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/event_queue.hpp"

namespace ringsim::sim {

using Tick = std::int64_t;

inline constexpr double kPicosecondsPerSecond = 1e12;
inline constexpr double kFemtosecondsPerSecond = 1e15;

template <class T>
concept EventArg = std::is_trivially_copyable_v<T> && (std::is_integral_v<T> || std::is_enum_v<T> || sizeof(T) <= 6);

// For handlers that need no argument.
struct NoArg {
  friend bool operator==(NoArg, NoArg) = default;
};

namespace detail {
inline constexpr int kArgBits = 48;
inline constexpr std::uint64_t kArgMask = (std::uint64_t{1} << kArgBits) - 1;
inline constexpr std::uint32_t kMaxHandlers = (std::uint32_t{1} << (64 - kArgBits)) - 1;  // last index = "none"

template <EventArg Arg>
[[nodiscard]] std::uint64_t encode_arg(Arg a) {
  if constexpr (std::is_enum_v<Arg>) {
    return encode_arg(static_cast<std::underlying_type_t<Arg>>(a));
  } else if constexpr (std::is_same_v<Arg, bool>) {
    return a ? 1 : 0;
  } else if constexpr (std::is_integral_v<Arg> && std::is_signed_v<Arg>) {
    const auto v = static_cast<std::int64_t>(a);
    if (v < -(std::int64_t{1} << (kArgBits - 1)) || v >= (std::int64_t{1} << (kArgBits - 1)))
      throw std::out_of_range("event argument " + std::to_string(v) + " does not fit in 48 bits");
    return static_cast<std::uint64_t>(v) & kArgMask;
  } else if constexpr (std::is_integral_v<Arg>) {
    const auto v = static_cast<std::uint64_t>(a);
    if (v > kArgMask) throw std::out_of_range("event argument " + std::to_string(v) + " does not fit in 48 bits");
    return v;
  } else {
    // Byte copy into the low bytes of the word: the payload layout assumes little endian.
    static_assert(std::endian::native == std::endian::little);
    std::uint64_t v = 0;
    std::memcpy(&v, &a, sizeof(Arg));
    return v;
  }
}

template <EventArg Arg>
[[nodiscard]] Arg decode_arg(std::uint64_t bits) {
  if constexpr (std::is_enum_v<Arg>) {
    return static_cast<Arg>(decode_arg<std::underlying_type_t<Arg>>(bits));
  } else if constexpr (std::is_same_v<Arg, bool>) {
    return bits != 0;
  } else if constexpr (std::is_integral_v<Arg> && std::is_signed_v<Arg>) {
    // Sign-extend the 48-bit field.
    return static_cast<Arg>(static_cast<std::int64_t>(bits << (64 - kArgBits)) >> (64 - kArgBits));
  } else if constexpr (std::is_integral_v<Arg>) {
    return static_cast<Arg>(bits);
  } else {
    Arg a;
    std::memcpy(&a, &bits, sizeof(Arg));
    return a;
  }
}
}  // namespace detail

// A registered handler taking an Arg; cheap to copy, valid for the engine that made it.
template <EventArg Arg>
class Handler {
 public:
  Handler() = default;
  [[nodiscard]] bool valid() const noexcept { return index_ != detail::kMaxHandlers; }

 private:
  friend class Engine;
  explicit Handler(std::uint32_t index) noexcept : index_(index) {}
  std::uint32_t index_ = detail::kMaxHandlers;
};

// A handler bound to its argument: what an event carries. Store one to fire later, at a time
// decided elsewhere (the network fires a transfer's Call when the transfer completes).
class Call {
 public:
  Call() = default;
  [[nodiscard]] bool valid() const noexcept { return (bits_ >> detail::kArgBits) != detail::kMaxHandlers; }
  friend bool operator==(const Call&, const Call&) = default;

 private:
  friend class Engine;
  explicit Call(std::uint64_t bits) noexcept : bits_(bits) {}
  std::uint64_t bits_ = std::uint64_t{detail::kMaxHandlers} << detail::kArgBits;
};

class Engine {
 public:
  explicit Engine(double ticks_per_s = kPicosecondsPerSecond);
  // Handlers usually capture the engine (or objects that hold it) by reference.
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  Engine(Engine&&) = delete;
  Engine& operator=(Engine&&) = delete;
  ~Engine() = default;

  // Registers f, called as f(arg) for each event of this handler. At most 65535 handlers:
  // register one per kind of event, not one per device.
  template <EventArg Arg, class F>
    requires std::invocable<F&, Arg>
  Handler<Arg> add_handler(F f) {
    if (handlers_.size() >= detail::kMaxHandlers) throw std::length_error("too many event handlers");
    handlers_.emplace_back([f = std::move(f)](std::uint64_t bits) mutable { f(detail::decode_arg<Arg>(bits)); });
    return Handler<Arg>(static_cast<std::uint32_t>(handlers_.size() - 1));
  }

  template <EventArg Arg>
  [[nodiscard]] Call bind(Handler<Arg> h, Arg arg) const {
    if (h.index_ >= handlers_.size()) throw std::invalid_argument("handler not registered with this engine");
    return Call((std::uint64_t{h.index_} << detail::kArgBits) | detail::encode_arg(arg));
  }

  // Schedules c at absolute time t >= now(); throws std::logic_error for a time in the past,
  // so the clock can never go backwards.
  void schedule_at(Tick t, Call c) {
    if (t < now_) throw_past(t);
    if (!c.valid()) throw std::invalid_argument("scheduling an empty Call");
    queue_.push(static_cast<std::uint64_t>(t), c.bits_);
  }
  void schedule_after(Tick dt, Call c) {
    if (dt < 0) throw_past(now_ + dt);
    if (dt > kMaxTick - now_) throw_overflow();
    schedule_at(now_ + dt, c);
  }
  template <EventArg Arg>
  void schedule_at(Tick t, Handler<Arg> h, Arg arg) {
    schedule_at(t, bind(h, arg));
  }
  template <EventArg Arg>
  void schedule_after(Tick dt, Handler<Arg> h, Arg arg) {
    schedule_after(dt, bind(h, arg));
  }

  // Runs c now, synchronously, without going through the queue.
  void invoke(Call c) { dispatch(c.bits_); }

  // Runs events in order until the queue is empty or stop() is called; returns how many ran.
  std::int64_t run();
  // Runs the events with time <= t, then advances the clock to t (unless stop() was called).
  std::int64_t run_until(Tick t);
  // Runs the next event, if any; returns whether one ran.
  bool step();
  // Makes run()/run_until() return after the event being handled.
  void stop() noexcept { stop_ = true; }
  // Drops all pending events; the clock stays where it is.
  void clear_pending() noexcept;

  [[nodiscard]] Tick now() const noexcept { return now_; }
  [[nodiscard]] double now_s() const noexcept { return to_seconds(now_); }
  [[nodiscard]] std::int64_t executed() const noexcept { return executed_; }
  [[nodiscard]] std::int64_t pending() const noexcept { return static_cast<std::int64_t>(queue_.size()); }
  [[nodiscard]] bool empty() const noexcept { return queue_.empty(); }

  [[nodiscard]] double ticks_per_s() const noexcept { return ticks_per_s_; }
  // Seconds -> ticks, rounded to nearest; throws std::domain_error for negative, non-finite
  // or out-of-range durations.
  [[nodiscard]] Tick to_ticks(double seconds) const;
  [[nodiscard]] double to_seconds(Tick t) const noexcept { return static_cast<double>(t) / ticks_per_s_; }

  static constexpr Tick kMaxTick = INT64_MAX;

 private:
  void dispatch(std::uint64_t bits) { handlers_[bits >> detail::kArgBits](bits & detail::kArgMask); }
  [[noreturn]] void throw_past(Tick t) const;
  [[noreturn]] static void throw_overflow();

  EventQueue queue_;
  std::vector<std::function<void(std::uint64_t)>> handlers_;
  Tick now_ = 0;
  std::int64_t executed_ = 0;
  double ticks_per_s_;
  bool stop_ = false;
};

}  // namespace ringsim::sim
