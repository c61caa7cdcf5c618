#include "sim/step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

#include "models/analytic.hpp"
#include "models/error.hpp"
#include "sim/network.hpp"
#include "sim/ps_hops.hpp"
#include "sim/step_size.hpp"
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

// Other: device-local compute of a fixed duration; AllReduce: a tensor-parallel ring all-reduce
// among the mp devices that share a ring position, over the topology.
enum class PhaseKind : std::uint8_t { Other, AllReduce, RingFwd, RingBwd };

struct Phase {
  PhaseKind kind = PhaseKind::Other;
  Tick other_ticks = 0;         // Other phases: the same duration on every device
  std::int64_t chunk_bytes = 0; // AllReduce: bytes of each of its 2 (mp - 1) steps
  std::string name;
};

// A run of phases ending with a ring pass (or the trailing non-ring phases): one layer's
// non-attention ops and its attention ring. Segments with equal signatures are the same
// function of their entry times.
struct Segment {
  std::size_t begin = 0, end = 0;  // phases [begin, end)
  std::size_t signature = 0;       // index of the first segment with the same phase kinds and durations
};

enum class TransferKind : std::uint8_t { KV = 0, DKV = 1, TP = 2 };

// Everything the passes share, built once per step: the topology, the phases, the per-round
// costs and the closed-form hop times.
struct StepPlan {
  StepPlan(const models::ResolvedScenario& scenario, const StepOptions& options)
      : s(scenario), o(options), clock(options.ticks_per_s) {
    if (o.buffers < 1 || o.buffers > 2)
      throw InputError({}, 0, "buffers", "expected 1 (no overlap) or 2 (double buffering), got " + std::to_string(o.buffers));
    mp = s.spec.mp;
    n = s.spec.sp;
    d = mp * n;
    for (std::int64_t dev = 0; dev < d; ++dev) {
      const std::int64_t k = dev / n, j = dev % n;
      pos.push_back(j);
      succ.push_back(k * n + (j + 1) % n);
      pred.push_back(k * n + (j + n - 1) % n);
    }
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
    topology = std::make_unique<Topology>(Topology::parse(o.topology.empty() ? default_topology(hw, d) : o.topology, fabric));
    embedding = std::make_unique<RingEmbedding>(*topology, mp, n, o.placement);
    build_phases();
    build_costs();
    decide_direct_hops();
  }

  [[nodiscard]] std::int64_t ring_of(std::int64_t dev) const { return dev / n; }
  [[nodiscard]] std::int64_t pos_of(std::int64_t dev) const { return pos[static_cast<std::size_t>(dev)]; }
  [[nodiscard]] std::int64_t succ_of(std::int64_t dev) const { return succ[static_cast<std::size_t>(dev)]; }
  [[nodiscard]] std::int64_t pred_of(std::int64_t dev) const { return pred[static_cast<std::size_t>(dev)]; }

  const models::ResolvedScenario& s;
  const StepOptions& o;
  Engine clock;  // tick conversions only: every pass runs its own engine
  std::int64_t mp = 1, n = 1, d = 1;
  std::vector<std::int64_t> pos, succ, pred;  // per device (ring k, position j) = k * n + j; no divisions per event
  std::unique_ptr<Topology> topology;
  std::unique_ptr<RingEmbedding> embedding;
  std::vector<Phase> phases;
  std::vector<Segment> segments;
  // The cost of a device-round: few distinct blocks (the workload's classes), so a small table
  // and a per-cell index into it [pos * n + round].
  struct RoundCost {
    Tick fwd = 0, bwd = 0;
    std::int64_t tiles = 0;
  };
  std::vector<RoundCost> costs;
  std::vector<std::uint32_t> cost_of;
  [[nodiscard]] const RoundCost& cost(std::int64_t position, std::int64_t round) const {
    return costs[cost_of[static_cast<std::size_t>(position * n + round)]];
  }
  std::int64_t kv_bytes = 0, dkv_bytes = 0;
  // Per device: whether its hop to the successor is isolated (no other hop uses its links),
  // and the closed-form time of a lone K/V block on it (the forward pass's only traffic).
  std::vector<char> direct;
  std::vector<Tick> kv_hop_ticks;
  std::vector<HopParams> hops;  // per device: its hop as a processor-sharing server
  std::vector<Route> tp_routes; // per device: to its successor in its tensor-parallel group (mp > 1)
  [[nodiscard]] std::int64_t tp_next(std::int64_t dev) const { return (dev + n) % d; }
  [[nodiscard]] std::int64_t tp_prev(std::int64_t dev) const { return (dev - n + d) % d; }
  bool isolated = true;  // every hop isolated: layers cannot interact (see simulate_step)

 private:
  void build_phases() {
    const auto& m = s.model;
    models::StepShape shape;
    shape.tokens = s.layout->block();
    shape.batch = s.spec.batch;
    shape.mp = mp;
    shape.recompute = s.profile.recompute;
    const bool mp_inter = mp > s.hardware.devices_per_node;
    double layer_fwd = 0, layer_bwd = 0, step_once = 0;
    std::vector<double> ar_fwd, ar_bwd;  // bytes of each tensor-parallel all-reduce of a layer
    for (const auto& op : models::step_ops(m, shape)) {
      if (op.kind == models::OpKind::Collective) {
        // Routed over the topology as events, not charged as a duration.
        (op.phase == models::Phase::Forward ? ar_fwd : ar_bwd).push_back(op.bytes);
        continue;
      }
      const double t = s.cost->op_s(op, mp_inter);
      if (!op.per_layer)
        step_once += t;
      else if (op.phase == models::Phase::Forward)
        layer_fwd += t;
      else
        layer_bwd += t;
    }
    // SCFA's gather/sort/scatter around the sparse kernel (0 unless the mask is index-based):
    // device-local memory-bound work, as in models::predict.
    layer_fwd += s.cost->sparse_prep_fwd_s(s.layout->block());
    layer_bwd += s.cost->sparse_prep_bwd_s(s.layout->block());
    const auto layers = m.layers;
    // The ops of a layer run before its ring; their all-reduces follow them. The order inside a
    // layer changes when traffic meets on shared links, not how much there is.
    auto all_reduces = [&](const std::vector<double>& list, const std::string& where) {
      for (const double bytes : list)
        phases.push_back({PhaseKind::AllReduce, 0, static_cast<std::int64_t>(std::ceil(bytes / static_cast<double>(mp))),
                          "tp all-reduce " + where});
    };
    for (std::int64_t l = 0; l < layers; ++l) {
      if (layer_fwd > 0) phases.push_back({PhaseKind::Other, clock.to_ticks(layer_fwd), 0, "ops fwd L" + std::to_string(l)});
      all_reduces(ar_fwd, "fwd L" + std::to_string(l));
      phases.push_back({PhaseKind::RingFwd, 0, 0, "attn fwd L" + std::to_string(l)});
    }
    if (step_once > 0) phases.push_back({PhaseKind::Other, clock.to_ticks(step_once), 0, "lm head"});
    for (std::int64_t l = layers - 1; l >= 0; --l) {
      if (layer_bwd > 0) phases.push_back({PhaseKind::Other, clock.to_ticks(layer_bwd), 0, "ops bwd L" + std::to_string(l)});
      all_reduces(ar_bwd, "bwd L" + std::to_string(l));
      phases.push_back({PhaseKind::RingBwd, 0, 0, "attn bwd L" + std::to_string(l)});
    }
    // Segments: cut after every ring phase.
    std::size_t begin = 0;
    for (std::size_t i = 0; i < phases.size(); ++i)
      if (phases[i].kind == PhaseKind::RingFwd || phases[i].kind == PhaseKind::RingBwd || i + 1 == phases.size()) {
        Segment seg{begin, i + 1, segments.size()};
        for (const auto& other : segments)
          if (other.end - other.begin == seg.end - seg.begin &&
              std::equal(phases.begin() + static_cast<std::ptrdiff_t>(seg.begin), phases.begin() + static_cast<std::ptrdiff_t>(seg.end),
                         phases.begin() + static_cast<std::ptrdiff_t>(other.begin), [](const Phase& a, const Phase& b) {
                           return a.kind == b.kind && a.other_ticks == b.other_ticks && a.chunk_bytes == b.chunk_bytes;
                         })) {
            seg.signature = other.signature;
            break;
          }
        segments.push_back(seg);
        begin = i + 1;
      }
  }

  void build_costs() {
    // Per ring position and round (every ring has the same workload: mp splits heads).
    const auto& w = *s.workload;
    const auto& c = *s.cost;
    const Tick overhead = clock.to_ticks(s.profile.round_overhead_s);
    cost_of.resize(static_cast<std::size_t>(n * n));
    // The workload memoises blocks by class, so equal blocks are one object: key on its address.
    std::unordered_map<const models::BlockStats*, std::uint32_t> index;
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < n; ++i) {
        const auto& b = w.block(i, j);
        auto [it, fresh] = index.try_emplace(&b, static_cast<std::uint32_t>(costs.size()));
        if (fresh)
          costs.push_back({overhead + clock.to_ticks(c.attention_fwd_s(b)), overhead + clock.to_ticks(c.attention_bwd_s(b)),
                           b.tiles_visited * s.spec.batch});
        cost_of[static_cast<std::size_t>(j * n + i)] = it->second;
      }
    const double kv = static_cast<double>(w.kv_block_bytes());
    kv_bytes = w.kv_block_bytes();
    dkv_bytes = static_cast<std::int64_t>(kv * static_cast<double>(s.profile.dkv_wire_bytes) /
                                          static_cast<double>(s.profile.kv_wire_bytes));
  }

  // A hop whose links no other hop uses shares bandwidth only with its own traffic: when that
  // is one flow at a time its transfer time is closed form (latency + bytes / narrowest link),
  // with no network events. Everything else goes through the max-min network.
  void decide_direct_hops() {
    std::vector<int> uses(static_cast<std::size_t>(topology->link_count()), 0);
    for (std::int64_t k = 0; k < mp; ++k)
      for (std::int64_t j = 0; j < n; ++j)
        for (auto l : embedding->hop_route(k, j)) ++uses[static_cast<std::size_t>(l)];
    // Tensor-parallel all-reduces: a ring over the mp devices of each ring position.
    if (mp > 1) {
      Topology::RouteFinder finder(*topology);
      tp_routes.resize(static_cast<std::size_t>(d));
      for (std::int64_t k = 0; k < mp; ++k)
        for (std::int64_t j = 0; j < n; ++j) {
          auto& route = tp_routes[static_cast<std::size_t>(k * n + j)];
          route = finder.route(embedding->device(k, j), embedding->device((k + 1) % mp, j));
          for (auto l : route) ++uses[static_cast<std::size_t>(l)];
        }
    }
    direct.assign(static_cast<std::size_t>(d), 1);
    kv_hop_ticks.assign(direct.size(), 0);
    // A hop without links (a ring of one device, which sends nothing) keeps this placeholder.
    hops.assign(direct.size(), HopParams{1, 0});
    for (std::int64_t k = 0; k < mp; ++k)
      for (std::int64_t j = 0; j < n; ++j) {
        const auto dev = static_cast<std::size_t>(k * n + j);
        for (auto l : embedding->hop_route(k, j))
          if (uses[static_cast<std::size_t>(l)] > 1) direct[dev] = 0;
        isolated = isolated && direct[dev];
        const double bw = embedding->hop_bottleneck_bytes_per_s(k, j);
        const double latency = embedding->hop_latency_s(k, j);
        kv_hop_ticks[dev] = clock.to_ticks(latency + (std::isfinite(bw) ? static_cast<double>(kv_bytes) / bw : 0.0));
        if (std::isfinite(bw)) hops[dev] = {bw, clock.to_ticks(latency)};
      }
  }
};

// What a pass did, with times relative to its origin (the earliest entry).
struct PassOutcome {
  std::vector<Tick> exit, last_end;              // per device: left the pass; last compute ended
  std::vector<Tick> wait, transfer;              // round x device cells (compute is known in advance)
  std::vector<Tick> busy;                        // per device
  std::vector<std::int64_t> link_sent, link_received;
  std::int64_t events = 0, tiles = 0;
};

// Where a pass writes the Chrome trace: shared by the passes of a step.
struct TraceSink {
  std::vector<TraceSpan> spans;
  std::int64_t limit = 0;
  bool truncated = false;
};

// Start times of one device's transfers of one kind that are still in flight; they arrive in
// the order they left (one flow at a time, or equal shares of one hop).
class InFlight {
 public:
  void push(Tick start) {
    if (head_ == starts_.size()) {  // all earlier ones arrived: start over, keeping the capacity
      starts_.clear();
      head_ = 0;
    }
    starts_.push_back(start);
  }
  [[nodiscard]] Tick pop() { return starts_[head_++]; }

 private:
  std::vector<Tick> starts_;
  std::size_t head_ = 0;
};

struct Dev {
  std::size_t phase = 0;
  std::int64_t round = -1;          // current round of a ring phase (-1: not started)
  bool busy = false;
  bool started = false;             // Other phase started
  bool done = false;                // current round / Other phase computed
  bool completed = false;           // current round complete (backward: accumulator arrived and forwarded)
  bool entered = false;             // the pass has reached this device's entry time
  std::int64_t kv_arrived = 0;      // K/V blocks received in this ring phase
  std::int64_t dkv_arrived = 0;     // dK/dV accumulators received in this ring phase
  std::int64_t kv_sent = 0;         // next round whose block is to be forwarded
  std::int64_t dkv_sent = 0;        // next round whose accumulator is to be forwarded
  std::int64_t ar_sent = 0;         // all-reduce steps sent / chunks received in this phase
  std::int64_t ar_received = 0;
  Tick phase_start = 0;
  Tick last_end = 0;
  bool at_barrier = false;
  bool in_progress = false, again = false;
  bool barrier_passed = false;
  std::int64_t tiles_left = 0;
  Tick tile_ticks = 0, tile_rem = 0;
  InFlight kv_out, dkv_out, tp_out;
  Tick busy_ticks = 0;
  Tick finish = 0;
};

// Runs phases [begin, end) of the step from given per-device entry times, on its own engine
// whose tick 0 is the pass's origin.
class PassSim {
 public:
  PassSim(const StepPlan& plan, std::size_t begin, std::size_t end, Tick origin, const std::vector<Tick>& entry,
          const std::vector<Tick>& last_end, TraceSink* trace, PassOutcome recycled = {})
      : p_(plan), o_(plan.o), begin_(begin), end_(end), origin_(origin), entry_(entry), trace_(trace),
        engine_(plan.o.ticks_per_s), network_(engine_, *plan.topology), hops_(engine_, plan.hops),
        out_(std::move(recycled)) {
    n_ = p_.n;
    d_ = p_.d;
    devs_.resize(static_cast<std::size_t>(d_));
    for (std::size_t i = 0; i < devs_.size(); ++i) {
      devs_[i].phase = begin_;
      devs_[i].last_end = last_end[i];
    }
    const auto cells = static_cast<std::size_t>(d_ * n_);
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
  }

  PassOutcome run() {
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
      if (dv.phase != end_)
        throw std::logic_error("simulation ended with a device stuck in phase " + p_.phases[dv.phase].name);
      out_.exit[i] = dv.finish;
      out_.last_end[i] = dv.last_end;
      out_.busy[i] = dv.busy_ticks;
    }
    for (std::int64_t l = 0; l < p_.topology->link_count(); ++l) {
      out_.link_sent[static_cast<std::size_t>(l)] += network_.link_bytes_sent(l);
      out_.link_received[static_cast<std::size_t>(l)] += network_.link_bytes_received(l);
    }
    out_.events = engine_.executed();
    return std::move(out_);
  }

 private:
  [[nodiscard]] Dev& dev(std::int64_t d) { return devs_[static_cast<std::size_t>(d)]; }
  [[nodiscard]] bool ring_phase(const Dev& dv) const {
    return dv.phase < end_ && (p_.phases[dv.phase].kind == PhaseKind::RingFwd || p_.phases[dv.phase].kind == PhaseKind::RingBwd);
  }
  [[nodiscard]] bool backward(const Dev& dv) const { return p_.phases[dv.phase].kind == PhaseKind::RingBwd; }

  [[nodiscard]] bool tracing() const { return trace_ != nullptr && !trace_->truncated; }
  void span(std::int64_t lane, std::string name, Tick start, Tick end) {
    if (static_cast<std::int64_t>(trace_->spans.size()) >= trace_->limit) {
      trace_->truncated = true;
      return;
    }
    trace_->spans.push_back({lane, std::move(name), engine_.to_seconds(origin_ + start), engine_.to_seconds(end - start)});
  }

  void enter(std::uint32_t d) {
    dev(d).entered = true;
    progress(d);
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

  void progress_once(std::int64_t d) {
    auto& dv = dev(d);
    while (!dv.busy && dv.phase < end_) {
      const Phase& ph = p_.phases[dv.phase];
      if (ph.kind == PhaseKind::AllReduce) {
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
      }
      if (ph.kind == PhaseKind::Other) {
        if (!dv.started) {
          if (!barrier(d)) return;
          dv.started = true;
          start_compute(d, ph.other_ticks, false);
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
    dv.ar_sent = dv.ar_received = 0;
    if (dv.phase == end_) dv.finish = engine_.now();
  }

  void begin_round(std::int64_t d, std::int64_t r) {
    auto& dv = dev(d);
    dv.round = r;
    dv.done = dv.completed = false;
    const auto& cost = p_.cost(p_.pos_of(d), r);
    const Tick t = backward(dv) ? cost.bwd : cost.fwd;
    // Round-major within a pass: the devices of one round run at about the same time.
    const auto cell = static_cast<std::size_t>(r * d_ + d);
    out_.wait[cell] += engine_.now() - dv.last_end;
    start_compute(d, t, true);
    // Starting round r frees a buffer: the predecessor may forward its round-r block, and this
    // device may forward its own.
    send_ready(p_.pred_of(d));
    send_ready(d);
  }

  void start_compute(std::int64_t d, Tick t, bool attention) {
    auto& dv = dev(d);
    dv.busy = true;
    dv.busy_ticks += t;
    const Tick start = engine_.now();
    if (tracing()) {
      const auto& name = p_.phases[dv.phase].name;
      span(2 * d, attention ? name + " r" + std::to_string(dv.round) : name, start, start + t);
    }
    const auto arg = static_cast<std::uint32_t>(d);
    const std::int64_t tiles = attention ? p_.cost(p_.pos_of(d), dv.round).tiles : 0;
    if (o_.granularity == Granularity::Tile && tiles > 1) {
      // The same compute time, as one event per tile; the last tile takes the remainder.
      dv.tiles_left = tiles;
      dv.tile_ticks = t / tiles;
      dv.tile_rem = t - dv.tile_ticks * tiles;
      engine_.schedule_after(dv.tile_ticks, h_tile_, arg);
    } else {
      if (attention) out_.tiles += tiles;
      engine_.schedule_after(t, h_done_, arg);
    }
  }

  void on_tile_done(std::uint32_t d) {
    auto& dv = dev(d);
    ++out_.tiles;
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
    if (ring_phase(dv) && o_.buffers == 1) {
      send_ready(d);                 // a computed block may leave now
      send_ready(p_.pred_of(d));     // this device's buffer is free for its predecessor
    }
    progress(d);
  }

  // Ring all-reduce among mp devices: 2 (mp - 1) steps (reduce-scatter, then all-gather); a
  // device sends step t + 1 once it has received step t's chunk, which it reduces or keeps and
  // passes on. Chunks go only to a successor that is in the same all-reduce.
  [[nodiscard]] std::int64_t ar_steps() const { return 2 * (p_.mp - 1); }

  void ar_send_ready(std::int64_t d) {
    auto& dv = dev(d);
    if (dv.phase >= end_ || p_.phases[dv.phase].kind != PhaseKind::AllReduce || !dv.started) return;
    const auto& nx = dev(p_.tp_next(d));
    if (nx.phase != dv.phase || !nx.started) return;
    while (dv.ar_sent < ar_steps() && dv.ar_received >= dv.ar_sent) {
      ++dv.ar_sent;
      transfer(d, TransferKind::TP);
    }
  }

  void on_chunk(std::uint32_t d) {
    auto& dv = dev(d);
    auto& from = dev(p_.tp_prev(d));
    const Tick start = from.tp_out.pop();
    if (tracing()) span(2 * p_.tp_prev(d) + 1, "TP chunk", start, engine_.now());
    ++dv.ar_received;
    ar_send_ready(d);
    progress(d);
  }

  // Forwards whatever this device may forward now: K/V blocks and (backward) accumulators.
  void send_ready(std::int64_t d) {
    auto& dv = dev(d);
    if (n_ == 1 || dv.phase >= end_) return;
    const PhaseKind kind = p_.phases[dv.phase].kind;
    if (kind != PhaseKind::RingFwd && kind != PhaseKind::RingBwd) return;
    auto& nx = dev(p_.succ_of(d));
    // Nothing goes to a successor in another phase: it has no buffer for this pass yet.
    if (nx.phase != dv.phase) return;
    bool sent = false;
    // K/V of round s goes to the successor for its round s + 1 (none after the last round).
    while (dv.kv_sent < n_ - 1 && dv.kv_sent <= dv.round) {
      const std::int64_t s = dv.kv_sent;
      bool ok;
      if (o_.buffers >= 2)
        ok = nx.round >= s;
      else
        ok = (dv.round > s || dv.done) && (nx.round > s || (nx.round == s && nx.done));
      if (!ok) break;
      ++dv.kv_sent;
      transfer(d, TransferKind::KV);
      sent = true;
    }
    // dK/dV of round s leaves once round s is complete; the last one goes home.
    while (kind == PhaseKind::RingBwd && dv.dkv_sent <= dv.round && (dv.dkv_sent < dv.round || dv.completed)) {
      ++dv.dkv_sent;
      transfer(d, TransferKind::DKV);
      sent = true;
    }
    // A device that finished its last round may have been waiting only for this send.
    if (sent && !dv.busy) progress(d);
  }

  void transfer(std::int64_t d, TransferKind kind) {
    auto& dv = dev(d);
    const auto dk = static_cast<std::size_t>(d);
    if (kind == TransferKind::TP) {
      dv.tp_out.push(engine_.now());
      network_.start(p_.tp_routes[dk], p_.phases[dv.phase].chunk_bytes,
                     engine_.bind(h_tp_, static_cast<std::uint32_t>(p_.tp_next(d))));
      return;
    }
    const auto& route = p_.embedding->hop_route(p_.ring_of(d), p_.pos_of(d));
    const auto to = static_cast<std::uint32_t>(p_.succ_of(d));
    const Call call = engine_.bind(kind == TransferKind::KV ? h_kv_ : h_dkv_, to);
    (kind == TransferKind::KV ? dv.kv_out : dv.dkv_out).push(engine_.now());
    const std::int64_t bytes = kind == TransferKind::KV ? p_.kv_bytes : p_.dkv_bytes;
    if (!p_.direct[dk]) {
      network_.start(route, bytes, call);
      return;
    }
    for (auto l : route) {
      out_.link_sent[static_cast<std::size_t>(l)] += bytes;
      out_.link_received[static_cast<std::size_t>(l)] += bytes;
    }
    // An isolated hop in the forward pass carries one K/V block at a time: closed form. In the
    // backward pass K/V and dK/dV overlap on it and share it: processor sharing.
    if (!backward(dv))
      engine_.schedule_after(p_.kv_hop_ticks[dk], call);
    else
      hops_.start(dk, bytes, call);
  }

  void on_arrive(std::uint32_t d, TransferKind kind) {
    auto& dv = dev(d);
    const auto pred = p_.pred_of(d);
    auto& from = dev(pred);
    const Tick start = (kind == TransferKind::KV ? from.kv_out : from.dkv_out).pop();
    if (tracing()) span(2 * pred + 1, kind == TransferKind::KV ? "K/V" : "dK/dV", start, engine_.now());
    if (kind == TransferKind::KV) {
      ++dv.kv_arrived;
      // The block of round kv_arrived: its travel time is that round's transfer.
      const auto cell = static_cast<std::size_t>(dv.kv_arrived * d_ + static_cast<std::int64_t>(d));
      if (dv.kv_arrived < n_) out_.transfer[cell] += engine_.now() - start;
    } else {
      ++dv.dkv_arrived;
    }
    progress(d);
  }

  const StepPlan& p_;
  const StepOptions& o_;
  std::size_t begin_, end_;
  Tick origin_;
  const std::vector<Tick>& entry_;
  TraceSink* trace_;
  Engine engine_;
  Network network_;
  ProcessorSharingHops hops_;
  std::int64_t n_ = 1, d_ = 1;
  std::vector<Dev> devs_;
  PassOutcome out_;
  std::int64_t barrier_count_ = 0;
  Handler<std::uint32_t> h_start_, h_done_, h_tile_, h_kv_, h_dkv_, h_tp_;
};

}  // namespace

// Layer by layer, when every hop is isolated. A pass's trajectory then depends only on the
// per-device entry times (and when each device's last compute ended): nothing of layer l is on
// a hop when layer l + 1 uses it, because a device sends layer l + 1 traffic only once its
// successor has entered layer l + 1, which it does only after receiving all its layer-l K/V and
// dK/dV. So simulating the layers one after another is the same as simulating them together,
// and since the simulation is invariant under a shift of all its inputs (it only ever adds
// durations and subtracts times), a layer whose relative entry times equal those of an earlier,
// identical layer repeats that layer's outcome shifted in time: exactly, in integer ticks.
// Rings whose hops share links (tori with mp > 1, crossing routes) may interact across layers
// and are simulated as one pass.
StepResult simulate_step(const models::ResolvedScenario& s, const StepOptions& options) {
  check_step_memory(s, options);  // before the plan's (round x device) tables are allocated
  const StepPlan plan(s, options);
  const auto dn = static_cast<std::size_t>(plan.d);
  const auto cells = static_cast<std::size_t>(plan.d * plan.n);
  const auto links = static_cast<std::size_t>(plan.topology->link_count());
  TraceSink sink;
  sink.limit = options.trace_event_limit;
  TraceSink* trace = options.record_trace ? &sink : nullptr;

  StepResult r;
  r.topology = plan.topology->spec();
  r.devices = plan.d;
  r.rounds = plan.n;
  std::vector<Tick> entry(dn, 0), last_end(dn, 0), busy(dn, 0);
  std::vector<std::int64_t> sent(links, 0), received(links, 0);

  // Attention compute per cell does not depend on timing: every ring phase runs each round once.
  r.compute_s.resize(cells);
  r.wait_s.assign(cells, 0);
  r.transfer_s.assign(cells, 0);
  {
    Tick fwd_phases = 0, bwd_phases = 0;
    for (const auto& ph : plan.phases) {
      fwd_phases += ph.kind == PhaseKind::RingFwd;
      bwd_phases += ph.kind == PhaseKind::RingBwd;
    }
    for (std::int64_t dev = 0; dev < plan.d; ++dev)
      for (std::int64_t round = 0; round < plan.n; ++round) {
        const auto& cost = plan.cost(plan.pos_of(dev), round);
        r.compute_s[static_cast<std::size_t>(dev * plan.n + round)] =
            plan.clock.to_seconds(fwd_phases * cost.fwd + bwd_phases * cost.bwd);
      }
  }
  // Per-device and per-link figures are added at once; the device x round cells `times` times
  // at once, which for a replayed layer is deferred until its memo entry is replaced.
  auto add_cells = [&](const PassOutcome& out, Tick times) {
    if (times == 0) return;
    // A transpose (round-major to device-major) in 64 x 64 blocks, to stay in cache.
    const auto rounds = static_cast<std::size_t>(plan.n);
    constexpr std::size_t kBlock = 64;
    for (std::size_t r0 = 0; r0 < rounds; r0 += kBlock)
      for (std::size_t d0 = 0; d0 < dn; d0 += kBlock)
        for (std::size_t dev = d0; dev < std::min(dn, d0 + kBlock); ++dev)
          for (std::size_t round = r0; round < std::min(rounds, r0 + kBlock); ++round) {
            const auto from = round * dn + dev, to = dev * rounds + round;
            r.wait_s[to] += plan.clock.to_seconds(times * out.wait[from]);
            r.transfer_s[to] += plan.clock.to_seconds(times * out.transfer[from]);
          }
  };
  auto advance = [&](const PassOutcome& out, Tick origin) {
    for (std::size_t i = 0; i < dn; ++i) {
      entry[i] = origin + out.exit[i];
      last_end[i] = origin + out.last_end[i];
      busy[i] += out.busy[i];
    }
    for (std::size_t l = 0; l < links; ++l) {
      sent[l] += out.link_sent[l];
      received[l] += out.link_received[l];
    }
    r.tiles_executed += out.tiles;
  };

  if (!plan.isolated || options.layer_passes == LayerPasses::Whole) {
    PassOutcome out = PassSim(plan, 0, plan.phases.size(), 0, entry, last_end, trace).run();
    r.events += out.events;
    ++r.passes_simulated;
    advance(out, 0);
    add_cells(out, 1);
  } else {
    struct Memo {
      std::vector<Tick> entry, last_end;  // relative to the origin
      PassOutcome out;
      Tick pending = 0;                   // replays whose cells are not added yet
    };
    std::vector<std::optional<Memo>> memo(plan.segments.size());
    std::vector<Tick> rel_entry(dn), rel_last(dn);
    const bool replay = options.layer_passes == LayerPasses::Replay;
    std::vector<std::size_t> last_use(plan.segments.size(), 0);  // per signature: its last segment
    for (std::size_t k = 0; k < plan.segments.size(); ++k) last_use[plan.segments[k].signature] = k;
    for (std::size_t k = 0; k < plan.segments.size(); ++k) {
      const auto& seg = plan.segments[k];
      const Tick origin = *std::min_element(entry.begin(), entry.end());
      for (std::size_t i = 0; i < dn; ++i) {
        rel_entry[i] = entry[i] - origin;
        rel_last[i] = last_end[i] - origin;
      }
      auto& m = memo[seg.signature];
      // A trace being recorded needs every span, so replay waits until it is full.
      if (replay && (trace == nullptr || sink.truncated) && m && m->entry == rel_entry && m->last_end == rel_last) {
        ++r.passes_reused;
        ++m->pending;
        advance(m->out, origin);
        continue;
      }
      // Buffers of 2 x rounds x devices ticks: take them from the memo entry this pass replaces,
      // or from one no later segment can use, rather than fresh memory.
      PassOutcome recycled;
      auto retire = [&](std::optional<Memo>& old) {
        add_cells(old->out, old->pending);
        recycled = std::move(old->out);
        old.reset();
      };
      if (m) retire(m);
      for (std::size_t sig = 0; sig < memo.size() && recycled.wait.empty(); ++sig)
        if (memo[sig] && last_use[sig] < k) retire(memo[sig]);
      PassOutcome out = PassSim(plan, seg.begin, seg.end, origin, rel_entry, rel_last, trace, std::move(recycled)).run();
      r.events += out.events;
      ++r.passes_simulated;
      if (options.progress) options.progress(static_cast<std::int64_t>(k + 1), static_cast<std::int64_t>(plan.segments.size()));
      advance(out, origin);
      if (replay)
        m = Memo{rel_entry, rel_last, std::move(out), 1};
      else
        add_cells(out, 1);
    }
    for (auto& m : memo)
      if (m) add_cells(m->out, m->pending);
  }
  const Tick end = *std::max_element(entry.begin(), entry.end());
  r.step_s = plan.clock.to_seconds(end);
  r.tokens_per_s = static_cast<double>(s.spec.n_seq * s.spec.batch) / r.step_s;
  const auto analytic = models::predict(s);
  r.mfu = analytic.model_flops / (r.step_s * s.hardware.peak_flops_per_s(s.profile.matmul_precision));
  double busiest = 0;
  for (std::size_t i = 0; i < dn; ++i) {
    r.busy_s.push_back(plan.clock.to_seconds(busy[i]));
    r.idle_s.push_back(r.step_s - r.busy_s.back());
    busiest = std::max(busiest, r.busy_s.back());
  }
  r.exposed_communication_s = r.step_s - busiest;
  double imb = 0;
  for (std::int64_t i = 0; i < plan.n; ++i) {
    double mx = 0, sum = 0;
    for (std::int64_t d = 0; d < plan.d; ++d) {
      const double c = r.compute_s[static_cast<std::size_t>(d * plan.n + i)];
      mx = std::max(mx, c);
      sum += c;
    }
    imb += sum > 0 ? mx / (sum / static_cast<double>(plan.d)) : 1.0;
  }
  r.imbalance = imb / static_cast<double>(plan.n);
  const auto& g = plan.topology->graph();
  for (std::size_t l = 0; l < links; ++l) {
    if (sent[l] == 0 && received[l] == 0) continue;
    const auto& link = plan.topology->link(static_cast<std::int64_t>(l));
    r.link_bytes.push_back({static_cast<std::int64_t>(l), g[static_cast<Vertex>(link.src)].name,
                            g[static_cast<Vertex>(link.dst)].name, sent[l], received[l]});
  }
  if (options.record_trace) {
    for (std::int64_t d = 0; d < plan.d; ++d) {
      const auto phys = plan.embedding->device(d / plan.n, d % plan.n);
      r.lanes.push_back("device " + std::to_string(phys) + " compute (ring " + std::to_string(d / plan.n) + " pos " +
                        std::to_string(d % plan.n) + ")");
      r.lanes.push_back("device " + std::to_string(phys) + " copy engine");
    }
    r.trace = std::move(sink.spans);
    r.trace_truncated = sink.truncated;
  }
  return r;
}

}  // namespace ringsim::sim
