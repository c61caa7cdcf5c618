#include "sim/ps_hops.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ringsim::sim {
namespace {
// 24 bits of hop and 24 of plan version in the engine's 48-bit argument.
constexpr int kHopBits = 24;
constexpr std::uint32_t kHopMask = (std::uint32_t{1} << kHopBits) - 1;
}  // namespace

ProcessorSharingHops::ProcessorSharingHops(Engine& engine, std::span<const HopParams> hops) : engine_(engine) {
  if (hops.size() > kHopMask) throw std::length_error("more than 2^24 hops");
  hops_.resize(hops.size());
  for (std::size_t i = 0; i < hops.size(); ++i) {
    if (!(hops[i].bandwidth_bytes_per_s > 0) || !std::isfinite(hops[i].bandwidth_bytes_per_s))
      throw std::invalid_argument("hop " + std::to_string(i) + " has a non-positive or infinite bandwidth");
    if (hops[i].latency_ticks < 0) throw std::invalid_argument("hop " + std::to_string(i) + " has a negative latency");
    hops_[i].bandwidth_bytes_per_s = hops[i].bandwidth_bytes_per_s;
    hops_[i].latency_ticks = hops[i].latency_ticks;
  }
  event_handler_ = engine.add_handler<std::uint64_t>([this](std::uint64_t t) { on_event(t); });
}

void ProcessorSharingHops::start(std::size_t hop, std::int64_t bytes, Call on_done) {
  if (hop >= hops_.size()) throw std::invalid_argument("hop " + std::to_string(hop) + " does not exist");
  if (bytes < 0) throw std::invalid_argument("transfer of " + std::to_string(bytes) + " bytes");
  std::uint32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Hop& h = hops_[hop];
  advance(h, engine_.now());
  Flow& f = flows_[slot];
  f.remaining_bytes = static_cast<double>(bytes);
  f.on_done = on_done;
  ++in_flight_;
  h.flows.push_back(slot);
  plan(h);
  schedule(hop);
}

// The k draining flows of a hop each send at bandwidth / k until the one with the fewest bytes
// left drains; then the others speed up. `advance` follows the drain ticks `plan` computed, and
// charges the bytes sent in between with the same arithmetic.
void ProcessorSharingHops::advance(Hop& h, Tick now) {
  while (!h.flows.empty()) {
    Tick next = Engine::kMaxTick;
    for (const auto fi : h.flows) next = std::min(next, flows_[fi].drain_tick);
    const Tick until = std::min(next, now);
    const double rate = h.bandwidth_bytes_per_s / static_cast<double>(h.flows.size());
    const double sent = rate * engine_.to_seconds(until - h.last);
    std::size_t kept = 0;
    for (const auto fi : h.flows) {
      Flow& f = flows_[fi];
      if (f.drain_tick <= until) {
        f.remaining_bytes = 0;
        h.landing.push_back(fi);
      } else {
        f.remaining_bytes = std::max(0.0, f.remaining_bytes - sent);
        h.flows[kept++] = fi;
      }
    }
    h.flows.resize(kept);
    h.last = until;
    if (next > now) break;
  }
  h.last = std::max(h.last, now);
}

void ProcessorSharingHops::plan(Hop& h) {
  if (h.flows.size() == 1) {  // the common case
    Flow& f = flows_[h.flows.front()];
    f.drain_tick = h.last + engine_.to_ticks(f.remaining_bytes / h.bandwidth_bytes_per_s);
    return;
  }
  // Equal shares: flows drain in order of the bytes they have left (ties together, in start
  // order), each after the bytes every flow sent meanwhile. Sorting makes this O(k log k).
  auto& order = scratch_order_;
  order.resize(h.flows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
  auto rem = [&](std::uint32_t i) { return flows_[h.flows[i]].remaining_bytes; };
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return rem(a) < rem(b); });
  auto& drain = scratch_drain_;
  drain.assign(order.size(), -1);
  double sent = 0;  // by every draining flow so far
  Tick t = h.last;
  for (std::size_t i = 0; i < order.size();) {
    const double least = std::max(0.0, rem(order[i]) - sent);
    const double rate = h.bandwidth_bytes_per_s / static_cast<double>(order.size() - i);
    const Tick dt = engine_.to_ticks(least / rate);
    t += dt;
    const double head = rem(order[i]);
    sent += rate * engine_.to_seconds(dt);
    // The least-loaded flow, its ties, and any the tick's rounding has emptied as well.
    while (i < order.size() && (rem(order[i]) <= head || rem(order[i]) - sent <= 0)) drain[order[i++]] = t;
  }
  for (std::size_t i = 0; i < h.flows.size(); ++i) flows_[h.flows[i]].drain_tick = drain[i];
}

void ProcessorSharingHops::schedule(std::size_t hop) {
  Hop& h = hops_[hop];
  Tick next = Engine::kMaxTick;
  for (const auto fi : h.flows) next = std::min(next, flows_[fi].drain_tick);
  for (const auto fi : h.landing) next = std::min(next, flows_[fi].drain_tick);
  if (next == Engine::kMaxTick) {
    h.next_event = -1;
    ++h.version;  // anything still queued is stale
    return;
  }
  next += h.latency_ticks;
  if (next == h.next_event) return;
  h.next_event = next;
  ++h.version;
  engine_.schedule_at(next, event_handler_, (std::uint64_t{h.version & kHopMask} << kHopBits) | hop);
}

void ProcessorSharingHops::on_event(std::uint64_t tok) {
  const auto hop = static_cast<std::size_t>(tok & kHopMask);
  Hop& h = hops_[hop];
  if ((h.version & kHopMask) != (tok >> kHopBits) || h.next_event != engine_.now()) return;  // re-planned since
  const Tick now = engine_.now();
  // Drains due by now - latency (flows of zero bytes drain the instant they start).
  advance(h, std::max(h.last, now - h.latency_ticks));
  // Deliver everything due now; callbacks run last, since they may start flows on this hop.
  auto& done = scratch_done_;
  done.clear();
  std::size_t kept = 0;
  for (const auto fi : h.landing) {
    Flow& f = flows_[fi];
    if (f.drain_tick + h.latency_ticks == now) {
      done.push_back(f.on_done);
      f.on_done = Call{};
      free_slots_.push_back(fi);
    } else {
      h.landing[kept++] = fi;
    }
  }
  h.landing.resize(kept);
  h.next_event = -1;
  schedule(hop);
  in_flight_ -= static_cast<std::int64_t>(done.size());
  delivered_ += static_cast<std::int64_t>(done.size());
  // A callback may start a flow here and so re-enter: take the calls out of the scratch vector.
  if (done.size() == 1) {
    const Call c = done.front();
    engine_.invoke(c);
    return;
  }
  const std::vector<Call> calls(done.begin(), done.end());
  for (const Call& c : calls) engine_.invoke(c);
}

}  // namespace ringsim::sim
