#include "sim/engine.hpp"

#include <cmath>
#include <string>

#include "models/io/error.hpp"

namespace ringsim::sim {

Engine::Engine(double ticks_per_s) : ticks_per_s_(ticks_per_s) {
  if (!(ticks_per_s > 0) || !std::isfinite(ticks_per_s))
    throw std::invalid_argument("engine resolution must be a positive number of ticks per second");
}

std::int64_t Engine::run() { return run_until(kMaxTick); }

std::int64_t Engine::run_until(Tick t) {
  stop_ = false;
  const std::int64_t before = executed_;
  if (t < now_) return 0;
  const auto limit = static_cast<std::uint64_t>(t);
  QueuedEvent e{};
  // The hot loop: one bucket pop and one indirect call per event.
  while (queue_.pop_until(limit, e)) {
    now_ = static_cast<Tick>(e.time);
    ++executed_;
    dispatch(e.payload);
    if (stop_) {
      stop_ = false;
      return executed_ - before;
    }
  }
  // Nothing left at or before t: the clock may move to t, since the queue's floor stays <= t.
  if (t != kMaxTick) now_ = t;
  return executed_ - before;
}

bool Engine::step() {
  QueuedEvent e{};
  if (!queue_.pop_until(static_cast<std::uint64_t>(kMaxTick), e)) return false;
  now_ = static_cast<Tick>(e.time);
  ++executed_;
  dispatch(e.payload);
  return true;
}

void Engine::clear_pending() noexcept { queue_.clear(); }

Tick Engine::to_ticks(double seconds) const {
  const double ticks = std::round(seconds * ticks_per_s_);
  // 2^63 is exactly representable; anything at or above it does not fit an int64.
  // Durations come from the input's sizes and rates: one too long for the clock is bad input.
  if (!std::isfinite(ticks) || ticks < 0 || ticks >= 9223372036854775808.0)
    throw models::InputError({}, 0, "time",
                             "a simulated duration of " + std::to_string(seconds) +
                                 " s is negative, not finite or longer than the simulator's clock holds (" +
                                 std::to_string(9.2233720368547758e18 / ticks_per_s_) + " s)");
  return static_cast<Tick>(ticks);
}

void Engine::throw_past(Tick t) const {
  throw std::logic_error("event scheduled at tick " + std::to_string(t) + ", before now (" + std::to_string(now_) +
                         "): simulated time cannot go backwards");
}

void Engine::throw_overflow() {
  throw models::InputError({}, 0, "time", "the simulated step is longer than the simulator's clock holds (2^63 ticks)");
}

}  // namespace ringsim::sim
