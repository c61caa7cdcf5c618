#include "sim/prefill_sim.hpp"

#include <algorithm>

namespace ringsim::sim {

namespace {

// Where a device is within its current layer.
enum class Stage : std::uint8_t {
  LayerStart,     // about to run the layer's projections and MLP
  Other,          // running them
  RoundWait,      // waiting to start round `round + 1` (its block, or the barrier)
  Round,          // computing round `round`
  ExchangeWait,   // pass-Q: ring done, waiting for its last block to leave, then for the group
  Exchange,       // pass-Q: in the all-to-all
  Merge,          // pass-Q: merging the returned partial outputs
  Finished,
};

struct Device {
  Stage stage = Stage::LayerStart;
  std::int64_t layer = 0;
  std::int64_t round = -1;
  std::int64_t started = 0;    // rounds started, over all layers (round r of layer l is number l N + r)
  std::int64_t sent = 0;       // blocks put on the hop to the successor, over all layers
  std::int64_t delivered = 0;  // of them, arrived
  std::int64_t arrived = 0;    // blocks received from the predecessor, over all layers
  bool busy = false;
  bool at_barrier = false;
  Tick busy_ticks = 0;
  Tick finish = 0;
};

class PrefillRing {
 public:
  PrefillRing(const PrefillRingPlan& plan, Sync sync, double ticks_per_s)
      : plan_(plan), sync_(sync), engine_(ticks_per_s), n_(plan.devices), devs_(static_cast<std::size_t>(n_)) {
    // Every duration is rounded to a tick once, here: the run then only adds integers.
    for (const auto& row : plan.compute_s) {
      std::vector<Tick> ticks;
      for (const double s : row) ticks.push_back(engine_.to_ticks(s));
      compute_.push_back(std::move(ticks));
    }
    for (const auto& hop : plan.hops) {
      hop_.push_back(engine_.to_ticks(hop.seconds(plan.message_bytes)));
      return_.push_back(engine_.to_ticks(hop.seconds(plan.return_bytes)));
    }
    other_ = engine_.to_ticks(plan.other_layer_s);
    merge_ = engine_.to_ticks(plan.merge_s);
    exchange_ = n_ > 1 && plan.return_bytes > 0;
    exchange_ticks_ = plan.exchange_s >= 0 ? engine_.to_ticks(plan.exchange_s) : -1;
    h_done_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t d) {
      dev(d).busy = false;
      progress(d);
    });
    h_arrive_ = engine_.add_handler<std::uint32_t>([this](std::uint32_t to) { on_arrive(to); });
    h_exchanged_ = engine_.add_handler<NoArg>([this](NoArg) { on_exchanged(); });
  }

  PrefillRun run() {
    for (std::int64_t d = 0; d < n_; ++d) progress(d);
    engine_.run();
    PrefillRun out;
    Tick end = 0;
    for (const auto& dv : devs_) {
      end = std::max(end, dv.finish);
      out.busy_s.push_back(engine_.to_seconds(dv.busy_ticks));
    }
    out.end_s = engine_.to_seconds(end);
    out.events = engine_.executed();
    return out;
  }

 private:
  [[nodiscard]] Device& dev(std::int64_t d) { return devs_[static_cast<std::size_t>(d)]; }
  [[nodiscard]] std::int64_t succ(std::int64_t d) const { return (d + 1) % n_; }
  [[nodiscard]] std::int64_t pred(std::int64_t d) const { return (d + n_ - 1) % n_; }
  [[nodiscard]] std::int64_t sends_per_layer() const { return n_ - 1; }

  void compute(std::int64_t d, Tick t) {
    auto& dv = dev(d);
    dv.busy = true;
    dv.busy_ticks += t;
    engine_.schedule_after(t, h_done_, static_cast<std::uint32_t>(d));
  }

  // Moves a device on as far as it can go now; called whenever something it may wait for happens.
  void progress(std::int64_t d) {
    auto& dv = dev(d);
    while (!dv.busy) {
      switch (dv.stage) {
        case Stage::LayerStart:
          dv.stage = Stage::Other;
          dv.round = -1;
          if (other_ > 0) {
            compute(d, other_);
            return;
          }
          break;
        case Stage::Other: dv.stage = Stage::RoundWait; break;
        case Stage::RoundWait: {
          const std::int64_t next = dv.round + 1;
          // The block of round r > 0 is the predecessor's message r - 1 of this layer.
          if (next > 0 && dv.arrived < dv.layer * sends_per_layer() + next) return;
          if (sync_ == Sync::Barrier) {
            barrier(d);
            return;
          }
          begin_round(d);
          return;
        }
        case Stage::Round:
          if (dv.round + 1 < n_) {
            dv.stage = Stage::RoundWait;
            break;
          }
          if (!exchange_) {
            layer_done(d);
            break;
          }
          dv.stage = Stage::ExchangeWait;
          break;
        case Stage::ExchangeWait:
          // The partials leave by the same egress as the ring's blocks: after the last of them
          // (which may still wait for the successor to start its last round but one).
          if (dv.sent < (dv.layer + 1) * sends_per_layer() || dv.delivered < dv.sent) return;
          dv.stage = Stage::Exchange;
          if (++entered_ == n_) start_exchange();
          return;
        case Stage::Exchange: return;  // on_exchanged moves it on
        case Stage::Merge: layer_done(d); break;
        case Stage::Finished: return;
      }
    }
  }

  // Lock-step: the last device ready for the round starts it on every device.
  void barrier(std::int64_t d) {
    auto& dv = dev(d);
    if (dv.at_barrier) return;
    dv.at_barrier = true;
    if (++waiting_ < n_) return;
    waiting_ = 0;
    for (std::int64_t e = 0; e < n_; ++e) {
      dev(e).at_barrier = false;
      begin_round(e);
    }
  }

  void begin_round(std::int64_t d) {
    auto& dv = dev(d);
    ++dv.round;
    ++dv.started;
    dv.stage = Stage::Round;
    compute(d, compute_[static_cast<std::size_t>(d)][static_cast<std::size_t>(dv.round)]);
    // Posted before the calls: this device's block, and the predecessor's, whose buffer here is free now.
    try_send(d);
    try_send(pred(d));
  }

  // Sends the device's next block once both ends have started the round it belongs to.
  void try_send(std::int64_t d) {
    if (n_ == 1) return;
    auto& dv = dev(d);
    const std::int64_t m = dv.sent;
    const std::int64_t round_number = (m / sends_per_layer()) * n_ + m % sends_per_layer();
    if (dv.started <= round_number || dev(succ(d)).started <= round_number) return;
    ++dv.sent;
    engine_.schedule_after(hop_[static_cast<std::size_t>(d)], h_arrive_, static_cast<std::uint32_t>(succ(d)));
  }

  void on_arrive(std::uint32_t to) {
    ++dev(to).arrived;
    const std::int64_t from = pred(to);
    ++dev(from).delivered;
    progress(to);
    progress(from);
  }

  // Each device sends its partials to every other at once; every device has all its partials
  // when the slowest device's return is out: the transport's all-to-all where the plan has one,
  // else each device's hop time of its whole return (its egress shared fairly by its messages).
  void start_exchange() {
    entered_ = 0;
    Tick slowest = exchange_ticks_;
    if (slowest < 0) {
      slowest = 0;
      for (const Tick t : return_) slowest = std::max(slowest, t);
    }
    engine_.schedule_after(slowest, h_exchanged_, NoArg{});
  }

  void on_exchanged() {
    for (std::int64_t d = 0; d < n_; ++d) {
      dev(d).stage = Stage::Merge;
      compute(d, merge_);
    }
  }

  void layer_done(std::int64_t d) {
    auto& dv = dev(d);
    if (++dv.layer == plan_.layers) {
      dv.stage = Stage::Finished;
      dv.finish = engine_.now();
      return;
    }
    dv.stage = Stage::LayerStart;
  }

  const PrefillRingPlan& plan_;
  Sync sync_;
  Engine engine_;
  std::int64_t n_;
  std::vector<Device> devs_;
  std::vector<std::vector<Tick>> compute_;
  std::vector<Tick> hop_, return_;
  Tick other_ = 0, merge_ = 0;
  bool exchange_ = false;
  Tick exchange_ticks_ = -1;  // the transport's all-to-all, or -1: the hops' (start_exchange)
  std::int64_t waiting_ = 0, entered_ = 0;
  Handler<std::uint32_t> h_done_, h_arrive_;
  Handler<NoArg> h_exchanged_;
};

}  // namespace

PrefillRun run_prefill_ring(const PrefillRingPlan& plan, Sync sync, double ticks_per_s) {
  return PrefillRing(plan, sync, ticks_per_s).run();
}

PrefillSimResult simulate_prefill(const models::ResolvedScenario& s, std::int64_t cached_tokens,
                                  models::PrefillVariant variant, const PrefillSimOptions& options) {
  PrefillSimResult r;
  r.analytic = models::predict_prefill(s, cached_tokens, variant);
  auto plan = plan_prefill(s, r.analytic, options.topology, options.placement);
  r.variant = variant;
  r.topology = plan.topology;
  r.devices = plan.devices;
  r.layers = plan.layers;
  const auto forward = run_prefill_ring(plan, options.sync, options.ticks_per_s);
  r.ttft_s = forward.end_s;
  r.events = forward.events;
  r.busiest_s = *std::max_element(forward.busy_s.begin(), forward.busy_s.end());
  r.exposed_s = r.ttft_s - r.busiest_s;
  // One layer's attention on its own, as the analytic model reports it per layer.
  plan.layers = 1;
  plan.other_layer_s = 0;
  r.layer_s = run_prefill_ring(plan, options.sync, options.ticks_per_s).end_s;
  return r;
}

}  // namespace ringsim::sim
