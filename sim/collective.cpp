#include "sim/collective.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ringsim::sim {

FlowPattern pattern_of(models::CollectiveKind kind) noexcept {
  return kind == models::CollectiveKind::AllToAll ? FlowPattern::AllPairs : FlowPattern::RingSteps;
}

std::int64_t steps_of(FlowPattern pattern, std::int64_t g) noexcept {
  if (g <= 1) return 0;
  return pattern == FlowPattern::RingSteps ? g - 1 : 1;
}

GroupRoutes group_routes(Topology::RouteFinder& finder, FlowPattern pattern, std::span<const std::int64_t> members) {
  GroupRoutes r;
  r.pattern = pattern;
  const auto g = members.size();
  if (g <= 1) return r;
  if (pattern == FlowPattern::RingSteps) {
    r.routes.reserve(g);
    for (std::size_t m = 0; m < g; ++m) r.routes.push_back(finder.route(members[m], members[(m + 1) % g]));
    return r;
  }
  r.routes.reserve(g * (g - 1));
  for (std::size_t a = 0; a < g; ++a)
    for (std::size_t b = 0; b < g; ++b)
      if (a != b) r.routes.push_back(finder.route(members[a], members[b]));
  return r;
}

std::optional<double> isolated_step_s(const Topology& topology, const GroupRoutes& group, std::int64_t bytes,
                                      std::span<const int> uses) {
  double worst = 0;
  for (const auto& route : group.routes) {
    double latency = 0, bw = std::numeric_limits<double>::infinity();
    for (const auto l : route) {
      if (uses[static_cast<std::size_t>(l)] != 1) return std::nullopt;
      latency += topology.link(l).latency_s;
      bw = std::min(bw, topology.link(l).bandwidth_bytes_per_s);
    }
    worst = std::max(worst, latency + (std::isfinite(bw) ? static_cast<double>(bytes) / bw : 0.0));
  }
  // All-pairs steps put g - 1 flows on each sender's first link: never isolated.
  if (group.pattern == FlowPattern::AllPairs && group.routes.size() > 1) return std::nullopt;
  return worst;
}

CollectiveDriver::CollectiveDriver(Engine& engine, Network& network) : engine_(engine), network_(network) {
  flow_handler_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t slot) { on_flow(slot); });
}

void CollectiveDriver::start(const GroupRoutes& group, std::int64_t bytes, std::int64_t steps, Call on_done) {
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(runs_.size());
    runs_.emplace_back();
  }
  runs_[slot] = Run{&group, bytes, steps, 0, on_done};
  ++running_;
  step(slot);
}

void CollectiveDriver::step(std::uint32_t slot) {
  Run& r = runs_[slot];
  if (r.steps_left == 0 || r.group->routes.empty()) {
    const Call done = r.on_done;
    free_.push_back(slot);
    --running_;
    engine_.invoke(done);
    return;
  }
  --r.steps_left;
  r.flows_left = static_cast<std::int64_t>(r.group->routes.size());
  const Call arrived = engine_.bind(flow_handler_, slot);
  // Copy what the loop needs: a flow that completes at once may re-enter and reuse the slot.
  const GroupRoutes* group = r.group;
  const std::int64_t bytes = r.bytes;
  for (const auto& route : group->routes) network_.start(route, bytes, arrived);
}

void CollectiveDriver::on_flow(std::uint32_t slot) {
  if (--runs_[slot].flows_left == 0) step(slot);
}

double simulate_collective_s(const Topology& topology, models::CollectiveKind kind,
                             const std::vector<std::vector<std::int64_t>>& groups, std::int64_t bytes,
                             double ticks_per_s) {
  Engine engine(ticks_per_s);
  Network network(engine, topology);
  CollectiveDriver driver(engine, network);
  Topology::RouteFinder finder(topology);
  const FlowPattern pattern = pattern_of(kind);
  std::vector<GroupRoutes> routes;
  routes.reserve(groups.size());
  for (const auto& g : groups) routes.push_back(group_routes(finder, pattern, g));
  Tick last = 0;
  const auto done = engine.add_handler<NoArg>([&](NoArg) { last = std::max(last, engine.now()); });
  for (std::size_t i = 0; i < groups.size(); ++i)
    driver.start(routes[i], bytes, steps_of(pattern, static_cast<std::int64_t>(groups[i].size())), engine.bind(done, NoArg{}));
  engine.run();
  if (driver.running() != 0) throw std::logic_error("collective did not finish");
  return engine.to_seconds(last);
}

}  // namespace ringsim::sim
