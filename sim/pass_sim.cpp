#include "sim/pass_sim.hpp"

#include <stdexcept>

namespace ringsim::sim::detail {

PassSim::PassSim(const StepPlan& plan, std::size_t begin, std::size_t end, Tick origin, const std::vector<Tick>& entry,
                 const std::vector<Tick>& last_end, TraceSink* trace, PassOutcome recycled)
    : p_(plan), o_(plan.o), begin_(begin), end_(end), origin_(origin), entry_(entry), trace_(trace),
      engine_(plan.o.ticks_per_s), network_(engine_, *plan.topology), hops_(engine_, plan.hops),
      collectives_(engine_, network_), out_(std::move(recycled)) {
  n_ = p_.n;
  d_ = p_.d;
  devs_.resize(static_cast<std::size_t>(d_));
  for (std::size_t i = 0; i < devs_.size(); ++i) {
    devs_[i].phase = begin_;
    devs_[i].last_end = last_end[i];
  }
  const auto cells = static_cast<std::size_t>(d_ * p_.rounds);
  out_.tiles = 0;
  out_.events = 0;
  out_.wait.assign(cells, 0);
  out_.transfer.assign(cells, 0);
  out_.link_sent.assign(static_cast<std::size_t>(p_.topology->link_count()), 0);
  out_.link_received.assign(out_.link_sent.size(), 0);
  h_start_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { enter(d); });
  h_done_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_compute_done(d); });
  h_tile_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_tile_done(d); });
  h_kv_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_arrive(d, TransferKind::KV); });
  h_dkv_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_arrive(d, TransferKind::DKV); });
  h_tp_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_chunk(d); });
  h_okv_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_arrive(d, TransferKind::OuterKV); });
  h_odkv_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_arrive(d, TransferKind::OuterDKV); });
  h_fused_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_arrive(d, TransferKind::Fused); });
  h_coll_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t slot) { on_collective_done(slot); });
}

PassOutcome PassSim::run() {
  for (std::int64_t d = 0; d < d_; ++d) {
    const Tick t = entry_[static_cast<std::size_t>(d)];
    if (t == 0)
      enter(static_cast<std::uint32_t>(d));
    else
      engine_.schedule_at(t, h_start_, static_cast<std::uint32_t>(d));
  }
  engine_.run();
  out_.exit.resize(devs_.size());
  out_.last_end.resize(devs_.size());
  out_.busy.resize(devs_.size());
  for (std::size_t i = 0; i < devs_.size(); ++i) {
    const auto& dv = devs_[i];
    if (dv.phase != end_) throw std::logic_error("simulation ended with a device stuck in phase " + p_.phases[dv.phase].name);
    out_.exit[i] = dv.finish;
    out_.last_end[i] = dv.last_end;
    out_.busy[i] = dv.busy_ticks;
  }
  for (std::int64_t l = 0; l < p_.topology->link_count(); ++l) {
    out_.link_sent[static_cast<std::size_t>(l)] += network_.link_bytes_sent(l);
    out_.link_received[static_cast<std::size_t>(l)] += network_.link_bytes_received(l);
  }
  out_.link_first_use.resize(out_.link_sent.size());
  out_.link_last_use.resize(out_.link_sent.size());
  for (std::size_t l = 0; l < out_.link_sent.size(); ++l) {
    out_.link_first_use[l] = network_.link_first_use(static_cast<std::int64_t>(l));
    out_.link_last_use[l] = network_.link_last_use(static_cast<std::int64_t>(l));
  }
  out_.events = engine_.executed();
  return std::move(out_);
}

void PassSim::span(std::int64_t lane, std::string name, Tick start, Tick end, std::int64_t round) {
  if (static_cast<std::int64_t>(trace_->spans.size()) >= trace_->limit) {
    trace_->truncated = true;
    return;
  }
  trace_->spans.push_back({lane, std::move(name), engine_.to_seconds(origin_ + start), engine_.to_seconds(end - start), round});
}

void PassSim::enter(std::uint32_t d) {
  dev(d).entered = true;
  progress(d);
}

// Barrier mode: a device reaching a sync point waits until all have reached it.
bool PassSim::barrier(std::int64_t d) {
  if (o_.sync != Sync::Barrier) return true;
  auto& dv = dev(d);
  if (dv.barrier_passed) {
    dv.barrier_passed = false;
    return true;
  }
  if (!dv.at_barrier) {
    dv.at_barrier = true;
    if (++barrier_count_ == d_) {
      barrier_count_ = 0;
      for (auto& x : devs_) {
        x.at_barrier = false;
        x.barrier_passed = true;
      }
      for (std::int64_t x = 0; x < d_; ++x)
        if (x != d) progress(x);
      dv.barrier_passed = false;
      return true;
    }
  }
  return false;
}

// Re-entrant calls (a send that unblocks the device being progressed) only ask for another
// pass, so one device's state is advanced by one loop at a time.
void PassSim::progress(std::int64_t d) {
  auto& dv = dev(d);
  if (!dv.entered) return;
  if (dv.in_progress) {
    dv.again = true;
    return;
  }
  dv.in_progress = true;
  do {
    dv.again = false;
    progress_once(d);
  } while (dv.again);
  dv.in_progress = false;
}

void PassSim::progress_once(std::int64_t d) {
  auto& dv = dev(d);
  while (dv.phase < end_) {
    const Phase& ph = p_.phases[dv.phase];
    // A busy device waits for its compute, except in a collective that runs beside it.
    if (dv.busy && !(ph.kind == PhaseKind::Collective && dv.concurrent)) return;
    switch (ph.kind) {
      case PhaseKind::AllReduce:
        if (!dv.started) {
          if (!barrier(d)) return;
          dv.started = true;
          dv.phase_start = engine_.now();
          ar_send_ready(d);
          ar_send_ready(p_.tp_prev(d));  // its first chunk may have been waiting for this device
        }
        if (dv.ar_received < ar_steps()) return;
        if (tracing()) span(2 * d, ph.name, dv.phase_start, engine_.now());
        next_phase(d);
        continue;
      case PhaseKind::Other:
        if (!dv.started) {
          if (!barrier(d)) return;
          dv.started = true;
          start_compute(d, ph.other_ticks, 0);
          return;
        }
        next_phase(d);
        continue;
      case PhaseKind::Compute: {
        if (!dv.started) {
          if (!barrier(d)) return;
          dv.started = true;
          const auto r = static_cast<std::size_t>(p_.rank_of(d));
          // Non-ring attention counts in round 0's cells.
          out_.wait[static_cast<std::size_t>(d)] += engine_.now() - dv.last_end;
          start_compute(d, p_.table_ticks[ph.table][r], p_.table_tiles[ph.table][r]);
          if (!ph.with_next) return;
          // The next phase (the next slice's collective) runs while this compute does.
          next_phase(d);
          dv.concurrent = true;
          continue;
        }
        next_phase(d);
        continue;
      }
      case PhaseKind::Collective: {
        if (!dv.started) {
          if (!barrier(d)) return;
          dv.started = true;
          dv.phase_start = engine_.now();
          enter_collective(d);
        }
        const GroupState* g = group_of(d);
        if (g == nullptr || !g->complete || dv.busy) return;
        leave_collective(d);
        next_phase(d);
        continue;
      }
      case PhaseKind::RingFwd:
      case PhaseKind::RingBwd: {
        bool more = false;
        ring_step(d, more);
        if (!more) return;
        continue;
      }
    }
  }
}

void PassSim::next_phase(std::int64_t d) {
  auto& dv = dev(d);
  ++dv.phase;
  dv.round = -1;
  dv.started = dv.done = dv.completed = dv.concurrent = false;
  dv.kv_arrived = dv.dkv_arrived = dv.kv_sent = dv.dkv_sent = 0;
  dv.outer_kv_arrived = dv.outer_dkv_arrived = dv.outer_kv_sent = dv.outer_dkv_sent = 0;
  dv.ar_sent = dv.ar_received = 0;
  if (dv.phase == end_) dv.finish = engine_.now();
}

void PassSim::start_compute(std::int64_t d, Tick t, std::int64_t tiles) {
  auto& dv = dev(d);
  dv.busy = true;
  dv.busy_ticks += t;
  const Tick start = engine_.now();
  if (tracing()) {
    const auto& name = p_.phases[dv.phase].name;
    if (ring_phase(dv)) span(2 * d, name + " r" + std::to_string(dv.round), start, start + t, dv.round);
    else span(2 * d, name, start, start + t);
  }
  const auto arg = static_cast<std::uint32_t>(d);
  if (o_.granularity == Granularity::Tile && tiles > 1) {
    // The same compute time, as one event per tile; the last tile takes the remainder.
    dv.tiles_left = tiles;
    dv.tile_ticks = t / tiles;
    dv.tile_rem = t - dv.tile_ticks * tiles;
    engine_.schedule_after(dv.tile_ticks, h_tile_, arg);
  } else {
    out_.tiles += tiles;
    engine_.schedule_after(t, h_done_, arg);
  }
}

void PassSim::on_tile_done(std::uint32_t d) {
  auto& dv = dev(d);
  ++out_.tiles;
  if (--dv.tiles_left == 0) {
    on_compute_done(d);
    return;
  }
  engine_.schedule_after(dv.tiles_left == 1 ? dv.tile_ticks + dv.tile_rem : dv.tile_ticks, h_tile_, d);
}

void PassSim::on_compute_done(std::uint32_t d) {
  auto& dv = dev(d);
  dv.busy = false;
  dv.done = true;
  dv.last_end = engine_.now();
  if (ring_phase(dv) && o_.buffers == 1) {
    send_ready(d);              // a computed block may leave now
    send_ready(p_.pred_of(d));  // this device's buffer is free for its predecessor
    if (p_.double_ring()) send_ready(p_.outer_pred_of(d));
  }
  progress(d);
}

// Ring all-reduce among mp devices: 2 (mp - 1) steps (reduce-scatter, then all-gather); a device
// sends step t + 1 once it has received step t's chunk, which it reduces or keeps and passes on.
// Chunks go only to a successor that is in the same all-reduce.
void PassSim::ar_send_ready(std::int64_t d) {
  auto& dv = dev(d);
  if (dv.phase >= end_ || p_.phases[dv.phase].kind != PhaseKind::AllReduce || !dv.started) return;
  const auto& nx = dev(p_.tp_next(d));
  if (nx.phase != dv.phase || !nx.started) return;
  while (dv.ar_sent < ar_steps() && dv.ar_received >= dv.ar_sent) {
    ++dv.ar_sent;
    dv.tp_out.push(engine_.now());
    network_.start(p_.tp_routes[static_cast<std::size_t>(d)], p_.phases[dv.phase].chunk_bytes,
                   engine_.bind(h_tp_, static_cast<std::uint32_t>(p_.tp_next(d))));
  }
}

void PassSim::on_chunk(std::uint32_t d) {
  auto& dv = dev(d);
  auto& from = dev(p_.tp_prev(d));
  const Tick start = from.tp_out.pop();
  if (tracing()) span(2 * p_.tp_prev(d) + 1, "TP chunk", start, engine_.now());
  ++dv.ar_received;
  ar_send_ready(d);
  progress(d);
}

}  // namespace ringsim::sim::detail
