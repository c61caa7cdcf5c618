#include "sim/network.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>

namespace ringsim::sim {
namespace {

// An event names a flow by slot and generation; generations make events of a slot's earlier
// rate (or earlier occupant) recognisably stale. 24 + 24 bits fit the engine's 48-bit argument.
constexpr int kSlotBits = 24;
constexpr std::uint32_t kSlotMask = (std::uint32_t{1} << kSlotBits) - 1;
constexpr std::uint32_t kMaxSlots = kSlotMask + 1;

// Rates that differ by less than this (relative) are rounding noise of the water-filling
// order; keeping the old rate keeps the flow's already scheduled drain event.
constexpr double kRateTolerance = 1e-12;

}  // namespace

Network::Network(Engine& engine, std::span<const Link> links) : engine_(engine) {
  links_.resize(links.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    const auto& l = links[i];
    if (!(l.bandwidth_bytes_per_s > 0) || !std::isfinite(l.bandwidth_bytes_per_s))
      throw std::invalid_argument("link " + std::to_string(i) + " has a non-positive or infinite bandwidth");
    links_[i].capacity_bytes_per_s = l.bandwidth_bytes_per_s;
    links_[i].latency_ticks = engine.to_ticks(l.latency_s);
  }
  settle_handler_ = engine.add_handler<NoArg>([this](NoArg) {
    settle_pending_ = false;
    settle();
  });
  drain_handler_ = engine.add_handler<std::uint64_t>([this](std::uint64_t t) { on_drain(t); });
  deliver_handler_ = engine.add_handler<std::uint64_t>([this](std::uint64_t t) { on_deliver(t); });
}

std::uint64_t Network::token(std::uint32_t slot, std::uint32_t generation) noexcept {
  return (std::uint64_t{generation & kSlotMask} << kSlotBits) | slot;
}

FlowId Network::start(std::span<const std::int64_t> route, std::int64_t bytes, Call on_done) {
  if (bytes < 0) throw std::invalid_argument("transfer of " + std::to_string(bytes) + " bytes");
  Tick latency = 0;
  for (std::size_t i = 0; i < route.size(); ++i) {
    const auto id = route[i];
    if (id < 0 || id >= link_count())
      throw std::invalid_argument("route names link " + std::to_string(id) + " of " + std::to_string(link_count()));
    for (std::size_t j = 0; j < i; ++j)
      if (route[j] == id) throw std::invalid_argument("route crosses link " + std::to_string(id) + " twice");
    latency += links_[static_cast<std::size_t>(id)].latency_ticks;
  }
  // Contiguity needs the endpoints, which only the topology knows; the network trusts
  // Topology::route and RingEmbedding here.
  std::uint32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (flows_.size() >= kMaxSlots) throw std::length_error("more than 2^24 transfers in flight");
    slot = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[slot];
  f.route.assign(route.begin(), route.end());
  f.bytes = bytes;
  f.remaining_bytes = static_cast<double>(bytes);
  f.rate_bytes_per_s = 0;
  f.last_update = engine_.now();
  f.drain_tick = -1;
  f.latency_ticks = latency;
  f.on_done = on_done;
  f.frozen = false;
  ++in_flight_;
  if (route.empty() || bytes == 0) {
    f.state = State::InFlight;
    f.remaining_bytes = 0;
    for (const auto id : route) links_[static_cast<std::size_t>(id)].sent_bytes += bytes;
    engine_.schedule_at(engine_.now() + latency, deliver_handler_, token(slot, f.generation));
    return slot;
  }
  f.state = State::Draining;
  ++draining_;
  bool alone = true;
  double bottleneck = links_[static_cast<std::size_t>(route.front())].capacity_bytes_per_s;
  for (const auto id : route) {
    auto& l = links_[static_cast<std::size_t>(id)];
    if (l.first_use == kNeverUsed) l.first_use = engine_.now();
    l.flows.push_back(slot);
    alone = alone && l.flows.size() == 1;
    bottleneck = std::min(bottleneck, l.capacity_bytes_per_s);
  }
  if (alone) {
    // Shares no link: its max-min rate is its narrowest link, known without a settle. (A flow
    // that joins one of its links later marks that link, and the settle revisits this one.)
    f.rate_bytes_per_s = bottleneck;
    schedule_drain(slot);
    return slot;
  }
  for (const auto id : route) mark_dirty(static_cast<std::size_t>(id));
  request_settle();
  return slot;
}

void Network::mark_dirty(std::size_t link) {
  if (links_[link].dirty) return;
  links_[link].dirty = true;
  dirty_links_.push_back(link);
}

void Network::request_settle() {
  if (settle_pending_) return;
  settle_pending_ = true;
  engine_.schedule_at(engine_.now(), settle_handler_, NoArg{});
}

void Network::advance(Flow& f) {
  const Tick now = engine_.now();
  if (now > f.last_update && f.rate_bytes_per_s > 0) {
    const double sent = std::min(f.remaining_bytes, f.rate_bytes_per_s * engine_.to_seconds(now - f.last_update));
    f.remaining_bytes -= sent;
    for (const auto id : f.route) links_[static_cast<std::size_t>(id)].carried_bytes += sent;
  }
  f.last_update = now;
}

void Network::settle() {
  if (dirty_links_.empty()) return;
  if (++epoch_ == 0) {  // stamps wrapped: forget them all once every 2^32 settles
    for (auto& l : links_) l.visit = 0;
    for (auto& f : flows_) f.visit = 0;
    epoch_ = 1;
  }
  // The connected set of links and draining flows reachable from the changed links.
  component_links_.clear();
  component_flows_.clear();
  stack_.clear();
  for (const auto l : dirty_links_) {
    links_[l].dirty = false;
    if (links_[l].visit == epoch_) continue;
    links_[l].visit = epoch_;
    stack_.push_back(l);
    while (!stack_.empty()) {
      const auto li = stack_.back();
      stack_.pop_back();
      component_links_.push_back(li);
      for (const auto fi : links_[li].flows) {
        Flow& f = flows_[fi];
        if (f.visit == epoch_) continue;
        f.visit = epoch_;
        f.frozen = false;
        advance(f);
        component_flows_.push_back(fi);
        for (const auto id : f.route) {
          auto& l2 = links_[static_cast<std::size_t>(id)];
          if (l2.visit == epoch_) continue;
          l2.visit = epoch_;
          stack_.push_back(static_cast<std::size_t>(id));
        }
      }
    }
  }
  dirty_links_.clear();

  // Water-filling: repeatedly take the link offering the smallest equal share to its unfrozen
  // flows, freeze those flows at that share, and charge it to the other links they cross.
  // Ties go to the lower link index, so the arithmetic order is fixed.
  using Entry = std::tuple<double, std::size_t, std::uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (const auto li : component_links_) {
    auto& l = links_[li];
    l.residual_bytes_per_s = l.capacity_bytes_per_s;
    l.unfrozen = static_cast<std::int64_t>(l.flows.size());
    ++l.version;
    if (l.unfrozen > 0) heap.emplace(l.residual_bytes_per_s / static_cast<double>(l.unfrozen), li, l.version);
  }
  while (!heap.empty()) {
    const auto [share, li, version] = heap.top();
    heap.pop();
    auto& l = links_[li];
    if (version != l.version) continue;
    for (const auto fi : l.flows) {
      Flow& f = flows_[fi];
      if (f.frozen) continue;
      f.frozen = true;
      f.next_rate_bytes_per_s = share;
      for (const auto id : f.route) {
        const auto oi = static_cast<std::size_t>(id);
        if (oi == li) continue;
        auto& o = links_[oi];
        o.residual_bytes_per_s -= share;
        --o.unfrozen;
        ++o.version;
        if (o.unfrozen > 0)
          heap.emplace(std::max(o.residual_bytes_per_s, 0.0) / static_cast<double>(o.unfrozen), oi, o.version);
      }
    }
    l.unfrozen = 0;
    ++l.version;
  }

  for (const auto fi : component_flows_) {
    Flow& f = flows_[fi];
    const double r = f.next_rate_bytes_per_s;
    if (f.drain_tick >= 0 && std::abs(r - f.rate_bytes_per_s) <= kRateTolerance * f.rate_bytes_per_s) continue;
    f.rate_bytes_per_s = r;
    schedule_drain(fi);
  }
}

void Network::schedule_drain(std::uint32_t slot) {
  Flow& f = flows_[slot];
  if (!(f.rate_bytes_per_s > 0)) throw std::logic_error("water-filling gave a draining flow no bandwidth");
  ++f.generation;
  f.drain_tick = engine_.now() + engine_.to_ticks(f.remaining_bytes / f.rate_bytes_per_s);
  engine_.schedule_at(f.drain_tick, drain_handler_, token(slot, f.generation));
}

void Network::on_drain(std::uint64_t tok) {
  const auto slot = static_cast<std::uint32_t>(tok & kSlotMask);
  Flow& f = flows_[slot];
  // Stale: the flow's rate changed after this event was scheduled (or the slot moved on).
  if (f.state != State::Draining || (f.generation & kSlotMask) != (tok >> kSlotBits) ||
      f.drain_tick != engine_.now())
    return;
  advance(f);
  for (const auto id : f.route) {
    auto& l = links_[static_cast<std::size_t>(id)];
    l.carried_bytes += f.remaining_bytes;  // rounding leftovers: per flow, carried sums to bytes
    l.sent_bytes += f.bytes;
    l.last_use = engine_.now();
    const auto it = std::find(l.flows.begin(), l.flows.end(), slot);
    l.flows.erase(it);  // keeps the order of the others, which the water-filling order uses
    if (!l.flows.empty()) mark_dirty(static_cast<std::size_t>(id));
  }
  f.remaining_bytes = 0;
  f.rate_bytes_per_s = 0;
  f.state = State::InFlight;
  --draining_;
  if (!dirty_links_.empty()) request_settle();
  if (f.latency_ticks == 0) {
    on_deliver(token(slot, f.generation));
  } else {
    engine_.schedule_at(engine_.now() + f.latency_ticks, deliver_handler_, token(slot, f.generation));
  }
}

void Network::on_deliver(std::uint64_t tok) {
  const auto slot = static_cast<std::uint32_t>(tok & kSlotMask);
  Flow& f = flows_[slot];
  if (f.state != State::InFlight) throw std::logic_error("delivery of a transfer that is not in flight");
  for (const auto id : f.route) links_[static_cast<std::size_t>(id)].received_bytes += f.bytes;
  const Call done = f.on_done;
  f.state = State::Free;
  ++f.generation;
  free_slots_.push_back(slot);
  --in_flight_;
  ++delivered_;
  // Last, so that the callback may start new transfers (reusing this slot) right away.
  if (done.valid()) engine_.invoke(done);
}

double Network::rate_bytes_per_s(FlowId flow) const {
  const auto& f = flow_at(flow);
  return f.state == State::Draining ? f.rate_bytes_per_s : 0.0;
}

double Network::remaining_bytes(FlowId flow) const {
  const auto& f = flow_at(flow);
  return f.state == State::Draining ? f.remaining_bytes : 0.0;
}

}  // namespace ringsim::sim
