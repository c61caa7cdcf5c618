// The ring rules of a pass (sim/pass_sim.hpp): rounds, K/V and dK/dV hops per the
// implementation's protocol, and the double ring's inner and outer hops.
#include "sim/pass_sim.hpp"

namespace ringsim::sim::detail {

namespace {
bool fused(const StepPlan& p, bool backward) { return backward && p.backward_messages == models::BackwardMessages::Fused; }
bool ordered(const StepPlan& p) { return p.backward_messages == models::BackwardMessages::Ordered && !p.double_ring(); }
}  // namespace

void PassSim::ring_step(std::int64_t d, bool& more) {
  auto& dv = dev(d);
  if (dv.round < 0) {
    if (!barrier(d)) return;
    begin_round(d, 0);
    return;
  }
  // The current round is computed; it completes when its accumulator is in (backward).
  const std::int64_t r = dv.round;
  if (!dv.completed) {
    if (backward(dv) && !round_complete_ready(dv, r)) return;
    dv.completed = true;
    if (backward(dv)) send_ready(d);
  }
  if (r + 1 == n_) {
    // A device leaves the pass once everything it owes its neighbours has left too.
    if (!ring_exit_ready(dv)) return;
    if (!barrier(d)) return;
    next_phase(d);
    more = true;
    return;
  }
  if (!next_block_ready(dv, r)) return;
  if (!barrier(d)) return;
  begin_round(d, r + 1);
}

bool PassSim::round_complete_ready(const Dev& dv, std::int64_t r) const {
  if (r == 0) return true;
  if (p_.double_ring()) {
    const std::int64_t w = p_.window, big = r / w, step = r % w;
    if (step > 0) return dv.dkv_arrived >= big * w + step;  // from the inner predecessor's previous round
    return dv.outer_dkv_arrived >= big;                      // from the previous window
  }
  if (fused(p_, true)) return dv.kv_arrived >= r + 1;  // message r carries this round's accumulator
  return dv.dkv_arrived >= r;
}

bool PassSim::next_block_ready(const Dev& dv, std::int64_t r) const {
  if (p_.double_ring()) {
    const std::int64_t w = p_.window, big = (r + 1) / w, step = (r + 1) % w;
    if (step > 0) return dv.kv_arrived >= big * (w - 1) + step;
    return dv.outer_kv_arrived >= big;
  }
  return dv.kv_arrived >= r + 1;
}

bool PassSim::ring_exit_ready(const Dev& dv) const {
  if (n_ <= 1) return true;
  const bool bwd = backward(dv);
  if (dv.queued_head != dv.queued.size()) return false;
  if (p_.double_ring()) {
    const std::int64_t w = p_.window, windows = n_ / w;
    if (dv.kv_sent < windows * (w - 1) || dv.outer_kv_sent < windows - 1) return false;
    if (!bwd) return true;
    const std::int64_t inner = w > 1 ? windows * w : 0;
    return dv.dkv_sent >= inner && dv.dkv_arrived >= inner && dv.outer_dkv_sent >= windows &&
           dv.outer_dkv_arrived >= windows;  // the accumulators are home
  }
  if (fused(p_, bwd)) {
    if (dv.kv_sent < n_) return false;
    return !p_.dkv_home_hop || (dv.dkv_sent >= 1 && dv.dkv_arrived >= 1);
  }
  if (dv.kv_sent < n_ - 1) return false;
  if (!bwd) return true;
  const std::int64_t hops = p_.dkv_home_hop ? n_ : n_ - 1;
  return dv.dkv_sent >= hops && dv.dkv_arrived >= hops;
}

void PassSim::begin_round(std::int64_t d, std::int64_t r) {
  auto& dv = dev(d);
  dv.round = r;
  dv.done = dv.completed = false;
  const auto& cost = p_.cost(p_.pos_of(d), r);
  const Tick t = backward(dv) ? cost.bwd : cost.fwd;
  // Round-major within a pass: the devices of one round run at about the same time.
  const auto cell = static_cast<std::size_t>(r * d_ + d);
  out_.wait[cell] += engine_.now() - dv.last_end;
  start_compute(d, t, cost.tiles);
  // Starting round r frees a buffer: the predecessors may forward their round-r blocks, and
  // this device may forward its own.
  send_ready(p_.pred_of(d));
  if (p_.double_ring()) send_ready(p_.outer_pred_of(d));
  send_ready(d);
}

// Forwards whatever this device may forward now: K/V blocks and (backward) accumulators.
void PassSim::send_ready(std::int64_t d) {
  auto& dv = dev(d);
  if (n_ == 1 || dv.phase >= end_ || !ring_phase(dv) || dv.round < 0) return;
  if (p_.double_ring()) {
    send_ready_double(d);
    return;
  }
  const bool bwd = backward(dv);
  const bool one_message = fused(p_, bwd);
  auto& nx = dev(p_.succ_of(d));
  // Nothing goes to a successor in another phase: it has no buffer for this pass yet.
  if (nx.phase != dv.phase) return;
  bool sent = false;
  // K/V of round s goes to the successor for its round s + 1 (none after the last round); a
  // fused message s also carries the accumulator of round s - 1, and the last one only that.
  const std::int64_t limit = one_message ? n_ : n_ - 1;
  while (dv.kv_sent < limit && dv.kv_sent <= dv.round) {
    const std::int64_t s = dv.kv_sent;
    bool ok;
    if (o_.buffers >= 2)
      ok = nx.round >= s;
    else
      ok = (dv.round > s || dv.done) && (nx.round > s || (nx.round == s && nx.done));
    if (!ok) break;
    ++dv.kv_sent;
    transfer(d, one_message ? TransferKind::Fused : TransferKind::KV);
    sent = true;
  }
  if (bwd && !one_message) {
    // dK/dV of round s leaves once round s is complete; the last one goes home (if the walk
    // does not end there).
    const std::int64_t hops = p_.dkv_home_hop ? n_ : n_ - 1;
    while (dv.dkv_sent < hops && dv.dkv_sent <= dv.round && (dv.dkv_sent < dv.round || dv.completed)) {
      ++dv.dkv_sent;
      transfer(d, TransferKind::DKV);
      sent = true;
    }
  }
  if (bwd && one_message && p_.dkv_home_hop && dv.round + 1 == n_ && dv.completed && dv.dkv_sent == 0) {
    ++dv.dkv_sent;
    transfer(d, TransferKind::DKV);
    sent = true;
  }
  // A device that finished its last round may have been waiting only for this send.
  if (sent && !dv.busy) progress(d);
}

void PassSim::send_ready_double(std::int64_t d) {
  auto& dv = dev(d);
  const std::int64_t w = p_.window, windows = n_ / w;
  auto& nx = dev(p_.succ_of(d));
  auto& ox = dev(p_.outer_succ_of(d));
  bool sent = false;
  // Inner K/V: the block of round J W + s (s < W - 1) to the next position of the window.
  while (w > 1 && nx.phase == dv.phase && dv.kv_sent < windows * (w - 1)) {
    const std::int64_t m = dv.kv_sent, r = (m / (w - 1)) * w + m % (w - 1);
    if (r > dv.round) break;
    bool ok;
    if (o_.buffers >= 2)
      ok = nx.round >= r;
    else
      ok = (dv.round > r || dv.done) && (nx.round > r || (nx.round == r && nx.done));
    if (!ok) break;
    ++dv.kv_sent;
    transfer(d, TransferKind::KV);
    sent = true;
  }
  // Outer K/V: the window's block to the next window, once both have started the window.
  while (ox.phase == dv.phase && dv.outer_kv_sent < windows - 1) {
    const std::int64_t r = dv.outer_kv_sent * w;
    if (r > dv.round || ox.round < r) break;
    ++dv.outer_kv_sent;
    transfer(d, TransferKind::OuterKV);
    sent = true;
  }
  if (backward(dv)) {
    // Inner dK/dV after every complete round (the W-th of a window brings the window's first
    // accumulator back); outer dK/dV once a window is complete and its accumulator is back.
    while (w > 1 && nx.phase == dv.phase && dv.dkv_sent < windows * w &&
           (dv.dkv_sent < dv.round || (dv.dkv_sent == dv.round && dv.completed))) {
      ++dv.dkv_sent;
      transfer(d, TransferKind::DKV);
      sent = true;
    }
    while (ox.phase == dv.phase && dv.outer_dkv_sent < windows) {
      const std::int64_t big = dv.outer_dkv_sent, last = big * w + w - 1;
      if (dv.round < last || (dv.round == last && !dv.completed)) break;
      if (w > 1 && dv.dkv_arrived < (big + 1) * w) break;
      ++dv.outer_dkv_sent;
      transfer(d, TransferKind::OuterDKV);
      sent = true;
    }
  }
  if (sent && !dv.busy) progress(d);
}

void PassSim::transfer(std::int64_t d, TransferKind kind) {
  auto& dv = dev(d);
  // Ordered messages leave one at a time, in the order they were issued.
  if (ordered(p_) && (kind == TransferKind::KV || kind == TransferKind::DKV)) {
    if (dv.wire_busy) {
      if (dv.queued_head == dv.queued.size()) {
        dv.queued.clear();
        dv.queued_head = 0;
      }
      dv.queued.push_back(kind);
      return;
    }
    dv.wire_busy = true;
  }
  put_on_wire(d, kind);
}

void PassSim::put_on_wire(std::int64_t d, TransferKind kind) {
  auto& dv = dev(d);
  const auto dk = static_cast<std::size_t>(d);
  const bool outer = kind == TransferKind::OuterKV || kind == TransferKind::OuterDKV;
  const auto& route = outer ? p_.outer_routes[dk] : p_.hop_routes[dk];
  const auto to = static_cast<std::uint32_t>(outer ? p_.outer_succ_of(d) : p_.succ_of(d));
  std::int64_t bytes = p_.kv_bytes;
  Handler<std::uint32_t> h = h_kv_;
  InFlight* flight = &dv.kv_out;
  switch (kind) {
    case TransferKind::KV: break;
    case TransferKind::DKV:
      bytes = p_.dkv_bytes;
      h = h_dkv_;
      flight = &dv.dkv_out;
      break;
    case TransferKind::OuterKV:
      h = h_okv_;
      flight = &dv.outer_kv_out;
      break;
    case TransferKind::OuterDKV:
      bytes = p_.dkv_bytes;
      h = h_odkv_;
      flight = &dv.outer_dkv_out;
      break;
    case TransferKind::Fused: {
      // Message m: K/V only first, dK/dV only last, both in between.
      const std::int64_t m = dv.kv_sent - 1;
      bytes = m == 0 ? p_.kv_bytes : m + 1 == n_ ? p_.dkv_bytes : p_.kv_bytes + p_.dkv_bytes;
      h = h_fused_;
      break;
    }
    case TransferKind::TP: break;
  }
  flight->push(engine_.now());
  const Call call = engine_.bind(h, to);
  if (!(outer ? p_.outer_direct[dk] : p_.direct[dk])) {
    network_.start(route, bytes, call);
    return;
  }
  for (auto l : route) {
    out_.link_sent[static_cast<std::size_t>(l)] += bytes;
    out_.link_received[static_cast<std::size_t>(l)] += bytes;
  }
  const std::size_t h_index = outer ? static_cast<std::size_t>(d_) + dk : dk;
  // An isolated hop that carries one transfer at a time (the forward pass; ordered or fused
  // messages of a single ring) has a closed form. Concurrent K/V and dK/dV on it share it:
  // processor sharing.
  const bool one_at_a_time =
      !backward(dv) || (p_.backward_messages != models::BackwardMessages::Concurrent && !p_.double_ring());
  if (one_at_a_time) {
    const bool kv = kind == TransferKind::KV || kind == TransferKind::OuterKV;
    engine_.schedule_after(kv ? (outer ? p_.outer_kv_hop_ticks[dk] : p_.kv_hop_ticks[dk]) : p_.lone_hop_ticks(h_index, bytes),
                           call);
    return;
  }
  hops_.start(h_index, bytes, call);
}

void PassSim::on_arrive(std::uint32_t d, TransferKind kind) {
  auto& dv = dev(d);
  const bool outer = kind == TransferKind::OuterKV || kind == TransferKind::OuterDKV;
  const auto sender = outer ? p_.outer_pred_of(d) : p_.pred_of(d);
  auto& from = dev(sender);
  InFlight& flight = kind == TransferKind::DKV        ? from.dkv_out
                     : kind == TransferKind::OuterKV  ? from.outer_kv_out
                     : kind == TransferKind::OuterDKV ? from.outer_dkv_out
                                                      : from.kv_out;
  const Tick start = flight.pop();
  if (tracing()) {
    const char* name = kind == TransferKind::DKV        ? "dK/dV"
                       : kind == TransferKind::Fused    ? "K/V+dK/dV"
                       : kind == TransferKind::OuterKV  ? "K/V outer"
                       : kind == TransferKind::OuterDKV ? "dK/dV outer"
                                                        : "K/V";
    span(2 * sender + 1, name, start, engine_.now());
  }
  // The round a block arrives for: its travel time is that round's transfer.
  std::int64_t round = -1;
  switch (kind) {
    case TransferKind::KV:
    case TransferKind::Fused:
      ++dv.kv_arrived;
      if (!p_.double_ring())
        round = dv.kv_arrived;
      else if (p_.window > 1)
        round = ((dv.kv_arrived - 1) / (p_.window - 1)) * p_.window + (dv.kv_arrived - 1) % (p_.window - 1) + 1;
      break;
    case TransferKind::OuterKV:
      ++dv.outer_kv_arrived;
      round = dv.outer_kv_arrived * p_.window;
      break;
    case TransferKind::DKV: ++dv.dkv_arrived; break;
    case TransferKind::OuterDKV: ++dv.outer_dkv_arrived; break;
    case TransferKind::TP: break;
  }
  if (round > 0 && round < n_) out_.transfer[static_cast<std::size_t>(round * d_ + d)] += engine_.now() - start;
  if (ordered(p_) && (kind == TransferKind::KV || kind == TransferKind::DKV)) {
    from.wire_busy = false;
    if (from.queued_head != from.queued.size()) {
      from.wire_busy = true;
      put_on_wire(sender, from.queued[from.queued_head++]);
    }
    if (!from.busy) progress(sender);  // it may have been waiting to leave for its queue to drain
  }
  if (p_.double_ring()) send_ready(d);  // an accumulator back from around the window may go on
  progress(d);
}

}  // namespace ringsim::sim::detail
