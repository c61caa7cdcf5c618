// Collectives in a pass (sim/pass_sim.hpp): a group of ranks starts once all its members have
// entered the phase, runs its flows through the network (or, alone on its links, in closed
// form), and lets every member go when its last flow has arrived and the host's time to issue
// the call (CollectivePhase::host_ticks) has passed.
#include "sim/pass_sim.hpp"

namespace ringsim::sim::detail {

namespace {
std::uint64_t group_key(std::size_t phase, std::size_t instance) {
  return (static_cast<std::uint64_t>(phase) << 32) | static_cast<std::uint64_t>(instance);
}
}  // namespace

const PassSim::GroupState* PassSim::group_of(std::int64_t d) const {
  const auto& dv = devs_[static_cast<std::size_t>(d)];
  const auto& c = p_.collectives[p_.phases[dv.phase].collective];
  const auto inst = p_.channels[c.channel].instance(p_.tp_of(d), p_.rank_of(d));
  const auto it = group_slot_.find(group_key(dv.phase, inst));
  return it == group_slot_.end() ? nullptr : &groups_[it->second];
}

void PassSim::enter_collective(std::int64_t d) {
  const auto& dv = dev(d);
  const auto& c = p_.collectives[p_.phases[dv.phase].collective];
  const auto& ch = p_.channels[c.channel];
  const auto inst = ch.instance(p_.tp_of(d), p_.rank_of(d));
  const auto key = group_key(dv.phase, inst);
  auto it = group_slot_.find(key);
  if (it == group_slot_.end()) {
    std::uint32_t slot;
    if (!free_groups_.empty()) {
      slot = free_groups_.back();
      free_groups_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(groups_.size());
      groups_.emplace_back();
    }
    groups_[slot] = GroupState{dv.phase, inst, 0, 0, false, 0};
    it = group_slot_.emplace(key, slot).first;
  }
  const std::uint32_t slot = it->second;
  auto& g = groups_[slot];
  if (++g.entered < ch.groups.size) return;
  // Everyone is here: the collective starts.
  g.start = engine_.now();
  const auto& routes = ch.routes[inst];
  if (c.steps == 0) {
    engine_.schedule_after(0, h_coll_, slot);
  } else if (c.closed_ticks) {
    for (const auto& r : routes.routes)
      for (auto l : r) {
        out_.link_sent[static_cast<std::size_t>(l)] += c.bytes * c.steps;
        out_.link_received[static_cast<std::size_t>(l)] += c.bytes * c.steps;
      }
    engine_.schedule_after(*c.closed_ticks, h_coll_, slot);
  } else {
    collectives_.start(routes, c.bytes, c.steps, engine_.bind(h_coll_, slot));
  }
}

void PassSim::on_collective_done(std::uint32_t slot) {
  auto& g = groups_[slot];
  const auto& c = p_.collectives[p_.phases[g.phase].collective];
  // The transfers are done; the call still lasts as long as the host takes to issue it.
  if (const Tick until = g.start + c.host_ticks; engine_.now() < until) {
    engine_.schedule_after(until - engine_.now(), h_coll_, slot);
    return;
  }
  g.complete = true;
  const auto members = p_.channels[c.channel].members[g.instance];  // copy: progress may free the slot
  const Tick start = g.start;
  const std::string name = p_.phases[g.phase].name;
  for (const auto m : members) {
    if (tracing()) span(2 * static_cast<std::int64_t>(m) + 1, name, start, engine_.now());
    progress(m);
  }
}

void PassSim::leave_collective(std::int64_t d) {
  const auto& dv = dev(d);
  const auto& c = p_.collectives[p_.phases[dv.phase].collective];
  const auto& ch = p_.channels[c.channel];
  const auto key = group_key(dv.phase, ch.instance(p_.tp_of(d), p_.rank_of(d)));
  const auto it = group_slot_.find(key);
  auto& g = groups_[it->second];
  if (++g.left == ch.groups.size) {
    free_groups_.push_back(it->second);
    group_slot_.erase(it);
  }
}

}  // namespace ringsim::sim::detail
