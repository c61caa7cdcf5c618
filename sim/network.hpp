#pragma once
// Transfers over the links of a topology, as fluid flows: a flow pushes its bytes along its
// whole route at once (cut-through), at a rate set by max-min fair sharing of every link's
// bandwidth among the flows crossing it; when its last byte has left the source it stops
// competing for bandwidth, and it is delivered after the sum of its links' latencies.
// A lone flow of B bytes thus takes latency + B / bottleneck bandwidth.
//
// Rates are recomputed whenever a flow starts or drains, but lazily and locally: the change
// marks the links involved, and one settle event at the current time (behind the events
// already queued for that time, so a same-time batch of starts costs one recomputation)
// water-fills only the connected set of flows that share links, transitively, with them.
// A flow that starts on links nobody else uses gets its narrowest link's bandwidth at once,
// without a settle. Ring hops on disjoint links therefore cost O(route length) and two events
// (drain, delivery) each.
//
// The network registers its own handlers on the engine and captures itself: it must outlive
// the engine's run and cannot be moved.
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "sim/engine.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

using FlowId = std::int64_t;

class Network {
 public:
  Network(Engine& engine, std::span<const Link> links);
  Network(Engine& engine, const Topology& topology) : Network(engine, topology.links()) {}
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;
  Network(Network&&) = delete;
  Network& operator=(Network&&) = delete;
  ~Network() = default;

  // Starts sending `bytes` along `route` (link ids, each link starting where the previous one
  // ends, none repeated) at the engine's current time; `on_done` is invoked when the last byte
  // has arrived. An empty route or zero bytes completes after the route's latency alone.
  // Throws std::invalid_argument on a malformed route or negative bytes.
  FlowId start(std::span<const std::int64_t> route, std::int64_t bytes, Call on_done);

  // Recomputes the rates that pending starts and drains have made stale, now. The settle
  // event does this by itself; call it to query rates without running the engine.
  void settle();

  // Rate of a flow that is still draining (0 once drained or delivered; ids are reused after
  // delivery). Current as of the last settle.
  [[nodiscard]] double rate_bytes_per_s(FlowId flow) const;
  // Bytes of a flow not yet sent, as of the last settle (0 once drained).
  [[nodiscard]] double remaining_bytes(FlowId flow) const;
  [[nodiscard]] std::int64_t draining() const noexcept { return draining_; }    // competing for bandwidth
  [[nodiscard]] std::int64_t in_flight() const noexcept { return in_flight_; }  // started, not delivered
  [[nodiscard]] std::int64_t delivered() const noexcept { return delivered_; }

  [[nodiscard]] std::int64_t link_count() const noexcept { return static_cast<std::int64_t>(links_.size()); }
  // Whole transfers: bytes put on a link when a flow crossing it drains, and taken off at the
  // far end when the flow is delivered. Equal once nothing is in flight.
  [[nodiscard]] std::int64_t link_bytes_sent(std::int64_t link) const { return at(link).sent_bytes; }
  [[nodiscard]] std::int64_t link_bytes_received(std::int64_t link) const { return at(link).received_bytes; }
  // Integral of the link's rate over time up to the last settle: its utilisation history, equal
  // to link_bytes_sent up to floating-point rounding once its flows have drained.
  [[nodiscard]] double link_carried_bytes(std::int64_t link) const { return at(link).carried_bytes; }
  [[nodiscard]] std::int64_t link_flow_count(std::int64_t link) const {
    return static_cast<std::int64_t>(at(link).flows.size());
  }
  // When the link first had a flow drawing bandwidth over it (kNeverUsed if never), and when the
  // last one so far stopped (drained; -1 if none has). Between them is the only time another
  // pass's traffic could have shared it (sim/step.cpp: layers simulated apart).
  static constexpr Tick kNeverUsed = std::numeric_limits<Tick>::max();
  [[nodiscard]] Tick link_first_use(std::int64_t link) const { return at(link).first_use; }
  [[nodiscard]] Tick link_last_use(std::int64_t link) const { return at(link).last_use; }

 private:
  enum class State : std::uint8_t { Free, Draining, InFlight };

  struct LinkState {
    double capacity_bytes_per_s = 0;
    Tick latency_ticks = 0;
    std::vector<std::uint32_t> flows;  // draining flows crossing this link
    std::int64_t sent_bytes = 0;
    std::int64_t received_bytes = 0;
    double carried_bytes = 0;
    Tick first_use = kNeverUsed;
    Tick last_use = -1;
    // Water-filling scratch.
    double residual_bytes_per_s = 0;
    std::int64_t unfrozen = 0;
    std::uint32_t version = 0;
    std::uint32_t visit = 0;
    bool dirty = false;
  };

  struct Flow {
    std::vector<std::int64_t> route;
    std::int64_t bytes = 0;
    double remaining_bytes = 0;
    double rate_bytes_per_s = 0;
    double next_rate_bytes_per_s = 0;
    Tick last_update = 0;
    Tick drain_tick = -1;  // -1: no drain event scheduled yet
    Tick latency_ticks = 0;
    Call on_done;
    std::uint32_t generation = 0;
    std::uint32_t visit = 0;
    bool frozen = false;
    State state = State::Free;
  };

  [[nodiscard]] const LinkState& at(std::int64_t link) const { return links_.at(static_cast<std::size_t>(link)); }
  [[nodiscard]] const Flow& flow_at(FlowId flow) const { return flows_.at(static_cast<std::size_t>(flow)); }
  void mark_dirty(std::size_t link);
  void request_settle();
  void advance(Flow& f);  // accounts for the bytes sent since f.last_update
  void schedule_drain(std::uint32_t slot);
  void on_drain(std::uint64_t token);
  void on_deliver(std::uint64_t token);
  [[nodiscard]] static std::uint64_t token(std::uint32_t slot, std::uint32_t generation) noexcept;

  Engine& engine_;
  std::vector<LinkState> links_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<std::size_t> dirty_links_;
  // Settle scratch, kept to avoid allocating per recomputation.
  std::vector<std::size_t> component_links_;
  std::vector<std::uint32_t> component_flows_;
  std::vector<std::size_t> stack_;
  std::uint32_t epoch_ = 0;
  bool settle_pending_ = false;
  std::int64_t draining_ = 0;
  std::int64_t in_flight_ = 0;
  std::int64_t delivered_ = 0;
  Handler<NoArg> settle_handler_;
  Handler<std::uint64_t> drain_handler_;
  Handler<std::uint64_t> deliver_handler_;
};

}  // namespace ringsim::sim
