#include "sim/step.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>

#include "models/analytic.hpp"
#include "models/error.hpp"
#include "sim/network.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

using models::InputError;

std::string default_topology(const models::Hardware& hw, std::int64_t devices) {
  if (hw.kind == "tpu") {
    // Near-square 2D torus: the largest divisor a <= sqrt(devices).
    std::int64_t a = 1;
    for (std::int64_t x = 1; x * x <= devices; ++x)
      if (devices % x == 0) a = x;
    if (a > 1) return "torus:" + std::to_string(a) + "x" + std::to_string(devices / a);
  }
  const std::int64_t g = std::clamp<std::int64_t>(hw.devices_per_node, 1, 8);
  if (devices <= g) return "node:" + std::to_string(devices);
  return "nodes:" + std::to_string((devices + g - 1) / g) + "x" + std::to_string(g);
}

namespace {

enum class PhaseKind : std::uint8_t { Other, RingFwd, RingBwd };

struct Phase {
  PhaseKind kind = PhaseKind::Other;
  Tick other_ticks = 0;  // Other phases: the same duration on every device
  std::string name;
};

enum class TransferKind : std::uint8_t { KV = 0, DKV = 1 };

struct Dev {
  std::int64_t ring = 0, pos = 0;
  std::int64_t succ = 0, pred = 0;  // global device indices in the ring
  std::size_t phase = 0;
  std::int64_t round = -1;          // current round of a ring phase (-1: not started)
  bool busy = false;
  bool started = false;             // Other phase started
  bool done = false;                // current round / Other phase computed
  bool completed = false;           // current round complete (backward: accumulator arrived and forwarded)
  std::int64_t kv_arrived = 0;      // K/V blocks received in this ring phase
  std::int64_t dkv_arrived = 0;     // dK/dV accumulators received in this ring phase
  std::int64_t kv_sent = 0;         // next round whose block is to be forwarded
  std::int64_t dkv_sent = 0;        // next round whose accumulator is to be forwarded
  Tick last_end = 0;
  Tick round_ready = 0;             // when the current round's block arrived
  bool at_barrier = false;
  bool in_progress = false, again = false;
  bool barrier_passed = false;
  std::int64_t tiles_left = 0;
  Tick tile_ticks = 0, tile_rem = 0;
  std::deque<Tick> kv_out, dkv_out;  // start times of transfers in flight, per kind
  Tick busy_ticks = 0;
  Tick finish = 0;
};

class StepSim {
 public:
  StepSim(const models::ResolvedScenario& s, const StepOptions& o)
      : s_(s), o_(o), engine_(o.ticks_per_s) {
    if (o.buffers < 1 || o.buffers > 2)
      throw InputError({}, 0, "buffers", "expected 1 (no overlap) or 2 (double buffering), got " + std::to_string(o.buffers));
    mp_ = s.spec.mp;
    n_ = s.spec.sp;
    d_ = mp_ * n_;
    const auto& hw = s.hardware;
    const auto& p = s.profile;
    auto params = [&](double bw, double lat) {
      LinkParams l{bw * p.link_efficiency, p.link_latency_s.value_or(lat)};
      if (!(l.bandwidth_bytes_per_s > 0) || !std::isfinite(l.bandwidth_bytes_per_s))
        throw InputError({}, 0, "topology", "link bandwidth must be positive and finite");
      return l;
    };
    const Fabric fabric{params(hw.intra_link_bandwidth_bytes_per_s, hw.intra_link_latency_s),
                        params(hw.inter_node_bandwidth_bytes_per_s, hw.inter_node_latency_s),
                        params(hw.intra_link_bandwidth_bytes_per_s, hw.intra_link_latency_s)};
    topology_ = std::make_unique<Topology>(
        Topology::parse(o.topology.empty() ? default_topology(hw, d_) : o.topology, fabric));
    embedding_ = std::make_unique<RingEmbedding>(*topology_, mp_, n_);
    network_ = std::make_unique<Network>(engine_, *topology_);
    build_phases();
    build_costs();
    build_devices();
    decide_direct_hops();
    h_done_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_compute_done(d); });
    h_tile_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_tile_done(d); });
    h_kv_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_arrive(d, TransferKind::KV); });
    h_dkv_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) { on_arrive(d, TransferKind::DKV); });
  }

  StepResult run() {
    for (std::int64_t d = 0; d < d_; ++d) progress(d);
    engine_.run();
    StepResult r;
    r.topology = topology_->spec();
    r.devices = d_;
    r.rounds = n_;
    Tick end = 0;
    for (const auto& dv : devs_) {
      if (dv.phase != phases_.size())
        throw std::logic_error("simulation ended with a device stuck in phase " + phases_[dv.phase].name);
      end = std::max(end, dv.finish);
    }
    r.step_s = engine_.to_seconds(end);
    r.tokens_per_s = static_cast<double>(s_.spec.n_seq * s_.spec.batch) / r.step_s;
    const auto analytic = models::predict(s_);
    r.mfu = analytic.model_flops / (r.step_s * s_.hardware.peak_flops_per_s(s_.profile.matmul_precision));
    double busiest = 0;
    for (const auto& dv : devs_) {
      r.busy_s.push_back(engine_.to_seconds(dv.busy_ticks));
      r.idle_s.push_back(r.step_s - r.busy_s.back());
      busiest = std::max(busiest, r.busy_s.back());
    }
    r.exposed_communication_s = r.step_s - busiest;
    r.compute_s = std::move(compute_s_);
    r.wait_s = std::move(wait_s_);
    r.transfer_s = std::move(transfer_s_);
    double imb = 0;
    for (std::int64_t i = 0; i < n_; ++i) {
      double mx = 0, sum = 0;
      for (std::int64_t d = 0; d < d_; ++d) {
        const double c = r.compute_s[static_cast<std::size_t>(d * n_ + i)];
        mx = std::max(mx, c);
        sum += c;
      }
      imb += sum > 0 ? mx / (sum / static_cast<double>(d_)) : 1.0;
    }
    r.imbalance = imb / static_cast<double>(n_);
    for (std::int64_t l = 0; l < topology_->link_count(); ++l) {
      const std::int64_t sent = network_->link_bytes_sent(l) + direct_sent_[static_cast<std::size_t>(l)];
      const std::int64_t recv = network_->link_bytes_received(l) + direct_received_[static_cast<std::size_t>(l)];
      if (sent == 0 && recv == 0) continue;
      const auto& link = topology_->link(l);
      const auto& g = topology_->graph();
      r.link_bytes.push_back({l, g[static_cast<Vertex>(link.src)].name, g[static_cast<Vertex>(link.dst)].name, sent, recv});
    }
    r.events = engine_.executed();
    r.tiles_executed = tiles_executed_;
    r.lanes = std::move(lanes_);
    r.trace = std::move(trace_);
    r.trace_truncated = trace_truncated_;
    return r;
  }

 private:
  void build_phases() {
    const auto& m = s_.model;
    models::StepShape shape;
    shape.tokens = s_.layout->block();
    shape.batch = s_.spec.batch;
    shape.mp = mp_;
    shape.recompute = s_.profile.recompute;
    const bool mp_inter = mp_ > s_.hardware.devices_per_node;
    double layer_fwd = 0, layer_bwd = 0, step_once = 0;
    for (const auto& op : models::step_ops(m, shape)) {
      const double t = s_.cost->op_s(op, mp_inter);
      if (!op.per_layer)
        step_once += t;
      else if (op.phase == models::Phase::Forward)
        layer_fwd += t;
      else
        layer_bwd += t;
    }
    // SCFA's gather/sort/scatter around the sparse kernel (0 unless the mask is index-based):
    // device-local memory-bound work, as in models::predict.
    layer_fwd += s_.cost->sparse_prep_fwd_s(s_.layout->block());
    layer_bwd += s_.cost->sparse_prep_bwd_s(s_.layout->block());
    const auto layers = m.layers;
    for (std::int64_t l = 0; l < layers; ++l) {
      if (layer_fwd > 0) phases_.push_back({PhaseKind::Other, engine_.to_ticks(layer_fwd), "ops fwd L" + std::to_string(l)});
      phases_.push_back({PhaseKind::RingFwd, 0, "attn fwd L" + std::to_string(l)});
    }
    if (step_once > 0) phases_.push_back({PhaseKind::Other, engine_.to_ticks(step_once), "lm head"});
    for (std::int64_t l = layers - 1; l >= 0; --l) {
      if (layer_bwd > 0) phases_.push_back({PhaseKind::Other, engine_.to_ticks(layer_bwd), "ops bwd L" + std::to_string(l)});
      phases_.push_back({PhaseKind::RingBwd, 0, "attn bwd L" + std::to_string(l)});
    }
  }

  void build_costs() {
    // Per ring position and round (every ring has the same workload: mp splits heads).
    const auto& w = *s_.workload;
    const auto& c = *s_.cost;
    const Tick overhead = engine_.to_ticks(s_.profile.round_overhead_s);
    fwd_ticks_.resize(static_cast<std::size_t>(n_ * n_));
    bwd_ticks_.resize(fwd_ticks_.size());
    tiles_.resize(fwd_ticks_.size());
    for (std::int64_t j = 0; j < n_; ++j)
      for (std::int64_t i = 0; i < n_; ++i) {
        const auto& b = w.block(i, j);
        const auto k = static_cast<std::size_t>(j * n_ + i);
        fwd_ticks_[k] = overhead + engine_.to_ticks(c.attention_fwd_s(b));
        bwd_ticks_[k] = overhead + engine_.to_ticks(c.attention_bwd_s(b));
        tiles_[k] = b.tiles_visited * s_.spec.batch;
      }
    const double kv = static_cast<double>(w.kv_block_bytes());
    kv_bytes_ = w.kv_block_bytes();
    dkv_bytes_ = static_cast<std::int64_t>(kv * static_cast<double>(s_.profile.dkv_wire_bytes) /
                                           static_cast<double>(s_.profile.kv_wire_bytes));
    const auto cells = static_cast<std::size_t>(d_ * n_);
    compute_s_.assign(cells, 0);
    wait_s_.assign(cells, 0);
    transfer_s_.assign(cells, 0);
  }

  void build_devices() {
    devs_.resize(static_cast<std::size_t>(d_));
    for (std::int64_t k = 0; k < mp_; ++k)
      for (std::int64_t j = 0; j < n_; ++j) {
        auto& dv = devs_[static_cast<std::size_t>(k * n_ + j)];
        dv.ring = k;
        dv.pos = j;
        dv.succ = k * n_ + (j + 1) % n_;
        dv.pred = k * n_ + (j + n_ - 1) % n_;
      }
    if (o_.record_trace) {
      for (std::int64_t d = 0; d < d_; ++d) {
        const auto phys = embedding_->device(d / n_, d % n_);
        lanes_.push_back("device " + std::to_string(phys) + " compute (ring " + std::to_string(d / n_) + " pos " +
                         std::to_string(d % n_) + ")");
        lanes_.push_back("device " + std::to_string(phys) + " copy engine");
      }
    }
    direct_sent_.assign(static_cast<std::size_t>(topology_->link_count()), 0);
    direct_received_.assign(direct_sent_.size(), 0);
  }

  // A hop whose links no other hop uses shares bandwidth only with its own traffic: when that
  // is one flow at a time its transfer time is closed form (latency + bytes / narrowest link),
  // with no network events. Everything else goes through the max-min network.
  void decide_direct_hops() {
    std::vector<int> uses(static_cast<std::size_t>(topology_->link_count()), 0);
    for (std::int64_t k = 0; k < mp_; ++k)
      for (std::int64_t j = 0; j < n_; ++j)
        for (auto l : embedding_->hop_route(k, j)) ++uses[static_cast<std::size_t>(l)];
    direct_.assign(static_cast<std::size_t>(d_), true);
    for (std::int64_t k = 0; k < mp_; ++k)
      for (std::int64_t j = 0; j < n_; ++j)
        for (auto l : embedding_->hop_route(k, j))
          if (uses[static_cast<std::size_t>(l)] > 1) direct_[static_cast<std::size_t>(k * n_ + j)] = false;
  }

  [[nodiscard]] Dev& dev(std::int64_t d) { return devs_[static_cast<std::size_t>(d)]; }
  [[nodiscard]] bool ring_phase(const Dev& dv) const {
    return dv.phase < phases_.size() && phases_[dv.phase].kind != PhaseKind::Other;
  }
  [[nodiscard]] bool backward(const Dev& dv) const { return phases_[dv.phase].kind == PhaseKind::RingBwd; }

  void span(std::int64_t lane, const std::string& name, Tick start, Tick end) {
    if (!o_.record_trace) return;
    if (static_cast<std::int64_t>(trace_.size()) >= o_.trace_event_limit) {
      trace_truncated_ = true;
      return;
    }
    trace_.push_back({lane, name, engine_.to_seconds(start), engine_.to_seconds(end - start)});
  }

  // Barrier mode: a device reaching a sync point waits until all have reached it.
  [[nodiscard]] bool barrier(std::int64_t d) {
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
  void progress(std::int64_t d) {
    auto& dv = dev(d);
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

  void progress_once(std::int64_t d) {
    auto& dv = dev(d);
    while (!dv.busy && dv.phase < phases_.size()) {
      const Phase& ph = phases_[dv.phase];
      if (ph.kind == PhaseKind::Other) {
        if (!dv.started) {
          if (!barrier(d)) return;
          dv.started = true;
          start_compute(d, ph.other_ticks, ph.name, -1);
          return;
        }
        next_phase(d);
        continue;
      }
      if (dv.round < 0) {
        if (!barrier(d)) return;
        begin_round(d, 0);
        return;
      }
      // The current round is computed; it completes when its accumulator is in (backward).
      const std::int64_t r = dv.round;
      if (!dv.completed) {
        if (backward(dv) && r >= 1 && dv.dkv_arrived < r) return;
        dv.completed = true;
        if (backward(dv)) send_ready(d);
      }
      if (r + 1 == n_) {
        // A device leaves the pass once everything it owes its successor has left too.
        if (n_ > 1 && dv.kv_sent < n_ - 1) return;
        if (backward(dv) && n_ > 1 && (dv.dkv_sent < n_ || dv.dkv_arrived < n_)) return;  // accumulators home
        if (!barrier(d)) return;
        next_phase(d);
        continue;
      }
      if (dv.kv_arrived < r + 1) return;
      if (!barrier(d)) return;
      begin_round(d, r + 1);
      return;
    }
  }

  void next_phase(std::int64_t d) {
    auto& dv = dev(d);
    ++dv.phase;
    dv.round = -1;
    dv.started = dv.done = dv.completed = false;
    dv.kv_arrived = dv.dkv_arrived = dv.kv_sent = dv.dkv_sent = 0;
    if (dv.phase == phases_.size()) dv.finish = engine_.now();
  }

  void begin_round(std::int64_t d, std::int64_t r) {
    auto& dv = dev(d);
    dv.round = r;
    dv.done = dv.completed = false;
    const auto k = static_cast<std::size_t>(dv.pos * n_ + r);
    const Tick t = backward(dv) ? bwd_ticks_[k] : fwd_ticks_[k];
    const auto cell = static_cast<std::size_t>(d * n_ + r);
    wait_s_[cell] += engine_.to_seconds(engine_.now() - dv.last_end);
    start_compute(d, t, phases_[dv.phase].name + " r" + std::to_string(r), static_cast<std::int64_t>(cell));
    // Starting round r frees a buffer: the predecessor may forward its round-r block, and this
    // device may forward its own.
    send_ready(dv.pred);
    send_ready(d);
  }

  void start_compute(std::int64_t d, Tick t, const std::string& name, std::int64_t cell) {
    auto& dv = dev(d);
    dv.busy = true;
    dv.busy_ticks += t;
    const Tick start = engine_.now();
    if (cell >= 0) compute_s_[static_cast<std::size_t>(cell)] += engine_.to_seconds(t);
    span(2 * d, name, start, start + t);
    const auto arg = static_cast<std::uint32_t>(d);
    const std::int64_t tiles = cell >= 0 ? tiles_[static_cast<std::size_t>(dv.pos * n_ + dv.round)] : 0;
    if (o_.granularity == Granularity::Tile && tiles > 1) {
      // The same compute time, as one event per tile; the last tile takes the remainder.
      dv.tiles_left = tiles;
      dv.tile_ticks = t / tiles;
      dv.tile_rem = t - dv.tile_ticks * tiles;
      engine_.schedule_after(dv.tile_ticks, h_tile_, arg);
    } else {
      if (cell >= 0) tiles_executed_ += tiles;
      engine_.schedule_after(t, h_done_, arg);
    }
  }

  void on_tile_done(std::uint32_t d) {
    auto& dv = dev(d);
    ++tiles_executed_;
    if (--dv.tiles_left == 0) {
      on_compute_done(d);
      return;
    }
    engine_.schedule_after(dv.tiles_left == 1 ? dv.tile_ticks + dv.tile_rem : dv.tile_ticks, h_tile_, d);
  }

  void on_compute_done(std::uint32_t d) {
    auto& dv = dev(d);
    dv.busy = false;
    dv.done = true;
    dv.last_end = engine_.now();
    if (ring_phase(dv)) {
      send_ready(d);         // buffers = 1: a computed block may leave now
      send_ready(dv.pred);   // buffers = 1: this device's buffer is free for its predecessor
    }
    progress(d);
  }

  // Forwards whatever this device may forward now: K/V blocks and (backward) accumulators.
  void send_ready(std::int64_t d) {
    auto& dv = dev(d);
    if (!ring_phase(dv) || n_ == 1) return;
    auto& nx = dev(dv.succ);
    const bool same_phase = nx.phase == dv.phase;
    bool sent = false;
    // K/V of round s goes to the successor for its round s + 1 (none after the last round).
    while (dv.kv_sent < n_ - 1 && dv.kv_sent <= dv.round && same_phase) {
      const std::int64_t s = dv.kv_sent;
      bool ok;
      if (o_.buffers >= 2)
        ok = nx.round >= s;
      else
        ok = (dv.round > s || dv.done) && (nx.round > s || (nx.round == s && nx.done));
      if (!ok) break;
      ++dv.kv_sent;
      transfer(d, kv_bytes_, TransferKind::KV);
      sent = true;
    }
    // dK/dV of round s leaves once round s is complete; the last one goes home.
    while (backward(dv) && same_phase && dv.dkv_sent <= dv.round &&
           (dv.dkv_sent < dv.round || dv.completed)) {
      ++dv.dkv_sent;
      transfer(d, dkv_bytes_, TransferKind::DKV);
      sent = true;
    }
    // A device that finished its last round may have been waiting only for this send.
    if (sent && !dv.busy) progress(d);
  }

  void transfer(std::int64_t d, std::int64_t bytes, TransferKind kind) {
    auto& dv = dev(d);
    const auto& route = embedding_->hop_route(dv.ring, dv.pos);
    const auto to = static_cast<std::uint32_t>(dv.succ);
    const Call call = engine_.bind(kind == TransferKind::KV ? h_kv_ : h_dkv_, to);
    (kind == TransferKind::KV ? dv.kv_out : dv.dkv_out).push_back(engine_.now());
    // Closed form only where one flow at a time can use the hop: in the forward pass. In the
    // backward pass K/V and dK/dV overlap on the same hop and must share it (network).
    if (direct_[static_cast<std::size_t>(d)] && !backward(dv)) {
      const double bw = embedding_->hop_bottleneck_bytes_per_s(dv.ring, dv.pos);
      const double secs = embedding_->hop_latency_s(dv.ring, dv.pos) +
                          (std::isfinite(bw) ? static_cast<double>(bytes) / bw : 0.0);
      for (auto l : route) {
        direct_sent_[static_cast<std::size_t>(l)] += bytes;
        direct_received_[static_cast<std::size_t>(l)] += bytes;
      }
      engine_.schedule_after(engine_.to_ticks(secs), call);
    } else {
      network_->start(route, bytes, call);
    }
  }

  void on_arrive(std::uint32_t d, TransferKind kind) {
    auto& dv = dev(d);
    auto& from = dev(dv.pred);
    auto& q = kind == TransferKind::KV ? from.kv_out : from.dkv_out;
    const Tick start = q.front();
    q.pop_front();
    span(2 * dv.pred + 1, kind == TransferKind::KV ? "K/V" : "dK/dV", start, engine_.now());
    if (kind == TransferKind::KV) {
      ++dv.kv_arrived;
      // The block of round kv_arrived: its travel time is that round's transfer.
      const auto cell = static_cast<std::size_t>(static_cast<std::int64_t>(d) * n_ + dv.kv_arrived);
      if (dv.kv_arrived < n_) transfer_s_[cell] += engine_.to_seconds(engine_.now() - start);
    } else {
      ++dv.dkv_arrived;
    }
    progress(d);
  }

  const models::ResolvedScenario& s_;
  StepOptions o_;
  Engine engine_;
  std::int64_t mp_ = 1, n_ = 1, d_ = 1;
  std::unique_ptr<Topology> topology_;
  std::unique_ptr<RingEmbedding> embedding_;
  std::unique_ptr<Network> network_;
  std::vector<Phase> phases_;
  std::vector<Tick> fwd_ticks_, bwd_ticks_;
  std::vector<std::int64_t> tiles_;
  std::int64_t kv_bytes_ = 0, dkv_bytes_ = 0;
  std::vector<Dev> devs_;
  std::vector<bool> direct_;
  std::vector<std::int64_t> direct_sent_, direct_received_;
  std::vector<double> compute_s_, wait_s_, transfer_s_;
  std::int64_t barrier_count_ = 0;
  std::int64_t tiles_executed_ = 0;
  std::vector<std::string> lanes_;
  std::vector<TraceSpan> trace_;
  bool trace_truncated_ = false;
  Handler<std::uint32_t> h_done_, h_tile_, h_kv_, h_dkv_;
};

}  // namespace

StepResult simulate_step(const models::ResolvedScenario& s, const StepOptions& options) {
  StepSim sim(s, options);
  return sim.run();
}

}  // namespace ringsim::sim
