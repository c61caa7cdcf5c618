#pragma once
// Transfers on hops that have their links to themselves: each hop is one egalitarian
// processor-sharing server. Its k draining flows each get bottleneck / k, which is exactly the
// max-min share the general Network would give them (identical routes, nobody else on the
// links), and a flow is delivered the hop's latency after its last byte left.
//
// Why not the Network: between two starts on a hop nothing can change its flows' rates except
// their own drains, so the hop's whole drain schedule is known at each start. A hop keeps one
// event queued, at its next delivery; a start that moves that time re-plans it (the old event
// goes stale). The Network needs a drain event, a settle and a delivery per flow, and
// reschedules every flow a start slows. Same physics, about one event per transfer.
#include <cstdint>
#include <span>
#include <vector>

#include "sim/engine.hpp"

namespace ringsim::sim {

struct HopParams {
  double bandwidth_bytes_per_s = 0;  // the hop's narrowest link
  Tick latency_ticks = 0;            // sum over its links
};

class ProcessorSharingHops {
 public:
  // Throws std::invalid_argument for a non-positive or non-finite bandwidth, or a negative
  // latency.
  ProcessorSharingHops(Engine& engine, std::span<const HopParams> hops);
  ProcessorSharingHops(const ProcessorSharingHops&) = delete;
  ProcessorSharingHops& operator=(const ProcessorSharingHops&) = delete;
  ProcessorSharingHops(ProcessorSharingHops&&) = delete;
  ProcessorSharingHops& operator=(ProcessorSharingHops&&) = delete;
  ~ProcessorSharingHops() = default;

  // Starts `bytes` on `hop` now; `on_done` is invoked when the last byte has arrived.
  void start(std::size_t hop, std::int64_t bytes, Call on_done);

  [[nodiscard]] std::int64_t in_flight() const noexcept { return in_flight_; }
  [[nodiscard]] std::int64_t delivered() const noexcept { return delivered_; }

 private:
  struct Flow {
    double remaining_bytes = 0;  // as of the hop's `last`
    Tick drain_tick = 0;         // planned: when its last byte leaves
    Call on_done;
  };
  struct Hop {
    double bandwidth_bytes_per_s = 0;
    Tick latency_ticks = 0;
    Tick last = 0;                       // remaining bytes of its draining flows are as of this tick
    std::vector<std::uint32_t> flows;    // draining, in start order
    std::vector<std::uint32_t> landing;  // drained, delivered at drain_tick + latency
    Tick next_event = -1;                // the delivery event queued for this hop (-1: none)
    std::uint32_t version = 0;           // events of earlier plans carry older versions
  };

  void advance(Hop& h, Tick now);  // drains and charges the bytes sent up to `now`
  void plan(Hop& h);               // drain ticks of the draining flows, from `last` on
  void schedule(std::size_t hop);  // queues the hop's next delivery if it moved
  void on_event(std::uint64_t token);

  Engine& engine_;
  std::vector<Hop> hops_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::uint32_t> scratch_order_;
  std::vector<Tick> scratch_drain_;
  std::vector<Call> scratch_done_;
  std::int64_t in_flight_ = 0;
  std::int64_t delivered_ = 0;
  Handler<std::uint64_t> event_handler_;
};

}  // namespace ringsim::sim
