#pragma once
// Collectives among groups of devices, routed on the topology as concurrent flows through the
// max-min network (sim/network.hpp), as NCCL runs them:
//   all-gather and reduce-scatter: the ring algorithm, g - 1 steps; in each step every member
//     sends one shard to the next member of the group; a step ends when all its flows have
//     arrived (the ring moves in lock-step: the slowest hop sets the pace);
//   all-to-all: one step in which every member sends to every other member at once (grouped
//     send/recv), so a device's flows share its links.
// A group starts when all its members have reached the collective (the caller's rendezvous)
// and ends, for every member at once, when its last flow has arrived.
// models/program/collective_cost.hpp has the closed forms on the default placement; tests/sim checks
// the two agree on one node, on nodes with a NIC per GPU and on tori.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "models/program/program.hpp"
#include "sim/engine.hpp"
#include "sim/network.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

enum class FlowPattern : std::uint8_t { RingSteps, AllPairs };

[[nodiscard]] FlowPattern pattern_of(models::CollectiveKind kind) noexcept;
// Steps of a collective of g members: g - 1 ring steps, or one all-pairs step (none when g = 1).
[[nodiscard]] std::int64_t steps_of(FlowPattern pattern, std::int64_t g) noexcept;

// The routes of one group, members given as physical devices in group order. RingSteps: g
// routes, member m to member m + 1 (every step uses all of them). AllPairs: g (g - 1) routes,
// (a, b) for b != a in row-major order.
struct GroupRoutes {
  FlowPattern pattern = FlowPattern::RingSteps;
  std::vector<Route> routes;
};
[[nodiscard]] GroupRoutes group_routes(Topology::RouteFinder& finder, FlowPattern pattern,
                                       std::span<const std::int64_t> members);

// Seconds of one step of the group when each of its links carries at most one of the step's
// flows and nothing else is on them (a flow alone takes latency + bytes / bottleneck); nullopt
// when some link carries two of its flows. `uses` counts, per link, the routes of everything
// that may be on the links while the collective runs (other channels included).
[[nodiscard]] std::optional<double> isolated_step_s(const Topology& topology, const GroupRoutes& group,
                                                    std::int64_t bytes, std::span<const int> uses);

// Runs collectives on an engine and network: each start() runs the steps of one group and
// invokes `on_done` when the group's last flow has arrived. Registers its handler on the engine
// and must outlive its run; not movable.
class CollectiveDriver {
 public:
  CollectiveDriver(Engine& engine, Network& network);
  CollectiveDriver(const CollectiveDriver&) = delete;
  CollectiveDriver& operator=(const CollectiveDriver&) = delete;

  // The routes must outlive the run. steps: steps_of(pattern, g).
  void start(const GroupRoutes& group, std::int64_t bytes, std::int64_t steps, Call on_done);
  [[nodiscard]] std::int64_t running() const noexcept { return running_; }

 private:
  struct Run {
    const GroupRoutes* group = nullptr;
    std::int64_t bytes = 0;
    std::int64_t steps_left = 0;
    std::int64_t flows_left = 0;
    Call on_done;
  };
  void step(std::uint32_t slot);
  void on_flow(std::uint32_t slot);

  Engine& engine_;
  Network& network_;
  std::vector<Run> runs_;
  std::vector<std::uint32_t> free_;
  std::int64_t running_ = 0;
  Handler<std::uint32_t> flow_handler_;
};

// Seconds until every group has finished, all groups starting at time 0 on an otherwise idle
// network (groups: physical devices in group order). For tests and the closed forms.
[[nodiscard]] double simulate_collective_s(const Topology& topology, models::CollectiveKind kind,
                                           const std::vector<std::vector<std::int64_t>>& groups, std::int64_t bytes,
                                           double ticks_per_s = kPicosecondsPerSecond);

}  // namespace ringsim::sim
