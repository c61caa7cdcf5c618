#include "sim/ps_hops.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ringsim::sim {
namespace {
// 24 bits of slot and 24 of generation in the engine's 48-bit argument, as in the Network.
constexpr int kSlotBits = 24;
constexpr std::uint32_t kSlotMask = (std::uint32_t{1} << kSlotBits) - 1;
}  // namespace

ProcessorSharingHops::ProcessorSharingHops(Engine& engine, std::span<const HopParams> hops) : engine_(engine) {
  hops_.resize(hops.size());
  for (std::size_t i = 0; i < hops.size(); ++i) {
    if (!(hops[i].bandwidth_bytes_per_s > 0) || !std::isfinite(hops[i].bandwidth_bytes_per_s))
      throw std::invalid_argument("hop " + std::to_string(i) + " has a non-positive or infinite bandwidth");
    if (hops[i].latency_ticks < 0) throw std::invalid_argument("hop " + std::to_string(i) + " has a negative latency");
    hops_[i].bandwidth_bytes_per_s = hops[i].bandwidth_bytes_per_s;
    hops_[i].latency_ticks = hops[i].latency_ticks;
  }
  deliver_handler_ = engine.add_handler<std::uint64_t>([this](std::uint64_t t) { on_deliver(t); });
}

std::uint64_t ProcessorSharingHops::token(std::uint32_t slot, std::uint32_t generation) noexcept {
  return (std::uint64_t{generation & kSlotMask} << kSlotBits) | slot;
}

void ProcessorSharingHops::start(std::size_t hop, std::int64_t bytes, Call on_done) {
  if (hop >= hops_.size()) throw std::invalid_argument("hop " + std::to_string(hop) + " does not exist");
  if (bytes < 0) throw std::invalid_argument("transfer of " + std::to_string(bytes) + " bytes");
  std::uint32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (flows_.size() > kSlotMask) throw std::length_error("more than 2^24 transfers in flight");
    slot = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Hop& h = hops_[hop];
  const Tick now = engine_.now();
  advance(h, now);
  Flow& f = flows_[slot];
  f.remaining_bytes = static_cast<double>(bytes);
  f.on_done = on_done;
  f.hop = static_cast<std::uint32_t>(hop);
  f.draining = true;
  f.planned = false;
  ++in_flight_;
  h.flows.push_back(slot);
  plan(h);
}

// The k draining flows of a hop each send at bandwidth / k until the one with the fewest bytes
// left drains; then the others speed up. `plan` and `advance` walk the same piecewise schedule
// with the same arithmetic, so what `advance` finds at a later start is what `plan` promised.
void ProcessorSharingHops::advance(Hop& h, Tick now) {
  while (!h.flows.empty()) {
    // The next drain, planned by the last `plan`.
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
        f.draining = false;  // in its latency now; its delivery event stands
      } else {
        f.remaining_bytes = std::max(0.0, f.remaining_bytes - sent);
        h.flows[kept++] = fi;
      }
    }
    h.flows.resize(kept);
    h.last = until;
    if (next > now) break;
  }
  h.last = now;
}

void ProcessorSharingHops::plan(Hop& h) {
  if (h.flows.size() == 1) {  // the common case, without the general replay
    Flow& f = flows_[h.flows.front()];
    const Tick drain = h.last + engine_.to_ticks(f.remaining_bytes / h.bandwidth_bytes_per_s);
    if (f.planned && f.drain_tick == drain) return;
    f.drain_tick = drain;
    f.planned = true;
    ++f.generation;
    engine_.schedule_at(f.drain_tick + h.latency_ticks, deliver_handler_, token(h.flows.front(), f.generation));
    return;
  }
  // Replays the schedule on a copy of the remaining bytes, in start order, so that ties drain
  // together and the arithmetic matches `advance` step for step.
  auto& rem = scratch_rem_;
  auto& drain = scratch_drain_;
  rem.clear();
  for (const auto fi : h.flows) rem.push_back(flows_[fi].remaining_bytes);
  drain.assign(rem.size(), -1);
  std::size_t left = rem.size();
  Tick t = h.last;
  while (left > 0) {
    double least = INFINITY;
    for (std::size_t i = 0; i < rem.size(); ++i)
      if (drain[i] < 0) least = std::min(least, rem[i]);
    const double rate = h.bandwidth_bytes_per_s / static_cast<double>(left);
    const Tick dt = engine_.to_ticks(least / rate);
    t += dt;
    const double sent = rate * engine_.to_seconds(dt);
    for (std::size_t i = 0; i < rem.size(); ++i) {
      if (drain[i] >= 0) continue;
      if (rem[i] <= least) {
        drain[i] = t;
        --left;
      } else {
        rem[i] = std::max(0.0, rem[i] - sent);
      }
    }
  }
  for (std::size_t i = 0; i < h.flows.size(); ++i) {
    const auto fi = h.flows[i];
    Flow& f = flows_[fi];
    if (f.planned && f.drain_tick == drain[i]) continue;  // its delivery event still holds
    f.drain_tick = drain[i];
    f.planned = true;
    ++f.generation;
    engine_.schedule_at(f.drain_tick + h.latency_ticks, deliver_handler_, token(fi, f.generation));
  }
}

void ProcessorSharingHops::on_deliver(std::uint64_t tok) {
  const auto slot = static_cast<std::uint32_t>(tok & kSlotMask);
  Flow& f = flows_[slot];
  // Stale: re-planned since, or the slot has moved on to another transfer.
  if (!f.planned || (f.generation & kSlotMask) != (tok >> kSlotBits)) return;
  Hop& h = hops_[f.hop];
  if (f.drain_tick + h.latency_ticks != engine_.now()) return;
  // Nothing has advanced the hop past this drain yet: do it, so the others' bytes are current.
  if (f.draining) advance(h, f.drain_tick);
  const Call done = f.on_done;
  f.on_done = Call{};
  f.planned = false;
  free_slots_.push_back(slot);
  --in_flight_;
  ++delivered_;
  engine_.invoke(done);
}

}  // namespace ringsim::sim
