#pragma once
// Internal to the step simulator: one engine pass over phases [begin, end) of a step, from given
// per-device entry times. The ring rules (sim/pass_ring.cpp), per protocol:
// - round r computes on the K/V block of round r; round r+1 starts when round r is done and the
//   block of round r+1 has arrived (round 0's block is the device's own);
// - buffers = 2: a device forwards its round-r block while computing on it, as soon as its
//   successor has started its round r; buffers = 1: only once both have finished computing
//   round r;
// - backward: the dK/dV accumulator of a block leaves a device once it has finished adding to
//   it (round complete), and a round completes only once the accumulator it adds to has
//   arrived; after the last round the accumulators travel one more hop, home, unless the
//   implementation's walk ends at home (models/implementations/protocol.hpp);
// - protocols: concurrent K/V and dK/dV transfers share the hop; ordered ones leave a device one
//   at a time, in the order they were issued; fused ones are one message per round, K/V of the
//   next round with the accumulator of the last, sent when the round starts;
// - double ring: K/V blocks go around a window of W positions (inner hops) and, once per window,
//   to the same position of the next window (outer hops, sent when the window starts); in the
//   backward the accumulators go around the window once more and then on to the next window;
// - collectives (sim/pass_collective.cpp): a group starts when all its members have entered,
//   and every member leaves when its last flow has arrived;
// - no global barrier unless `sync = Barrier`, which makes every round and phase lock-step.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/collective.hpp"
#include "sim/engine.hpp"
#include "sim/network.hpp"
#include "sim/ps_hops.hpp"
#include "sim/step_plan.hpp"

namespace ringsim::sim::detail {

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
  std::int64_t round = -1;       // current round of a ring phase (-1: not started)
  bool busy = false;
  bool started = false;          // Other / Compute phase started; collective entered
  bool done = false;             // current round / Other phase computed
  bool completed = false;        // current round complete (backward: accumulator arrived and forwarded)
  bool entered = false;          // the pass has reached this device's entry time
  bool concurrent = false;       // a compute started by the previous phase is still running
  std::int64_t kv_arrived = 0;   // K/V blocks (inner blocks of a double ring; fused messages) received
  std::int64_t dkv_arrived = 0;  // dK/dV accumulators (inner) received
  std::int64_t kv_sent = 0;      // next round whose block is to be forwarded (inner, double ring)
  std::int64_t dkv_sent = 0;     // next round whose accumulator is to be forwarded (inner, double ring)
  std::int64_t outer_kv_arrived = 0, outer_dkv_arrived = 0, outer_kv_sent = 0, outer_dkv_sent = 0;
  std::int64_t ar_sent = 0;      // all-reduce steps sent / chunks received in this phase
  std::int64_t ar_received = 0;
  Tick phase_start = 0;
  Tick last_end = 0;
  bool at_barrier = false;
  bool in_progress = false, again = false;
  bool barrier_passed = false;
  std::int64_t tiles_left = 0;
  Tick tile_ticks = 0, tile_rem = 0;
  InFlight kv_out, dkv_out, tp_out, outer_kv_out, outer_dkv_out;
  // Ordered protocol: transfers issued while one is on the wire wait here, in issue order.
  std::vector<TransferKind> queued;
  std::size_t queued_head = 0;
  bool wire_busy = false;
  Tick busy_ticks = 0;
  Tick finish = 0;
};

class PassSim {
 public:
  PassSim(const StepPlan& plan, std::size_t begin, std::size_t end, Tick origin, const std::vector<Tick>& entry,
          const std::vector<Tick>& last_end, TraceSink* trace, PassOutcome recycled = {});
  PassOutcome run();

 private:
  [[nodiscard]] Dev& dev(std::int64_t d) { return devs_[static_cast<std::size_t>(d)]; }
  [[nodiscard]] const Phase& phase_of(const Dev& dv) const { return p_.phases[dv.phase]; }
  [[nodiscard]] bool ring_phase(const Dev& dv) const {
    return dv.phase < end_ && (phase_of(dv).kind == PhaseKind::RingFwd || phase_of(dv).kind == PhaseKind::RingBwd);
  }
  [[nodiscard]] bool backward(const Dev& dv) const { return phase_of(dv).kind == PhaseKind::RingBwd; }
  [[nodiscard]] bool tracing() const { return trace_ != nullptr && !trace_->truncated; }
  void span(std::int64_t lane, std::string name, Tick start, Tick end, std::int64_t round = -1);

  void enter(std::uint32_t d);
  [[nodiscard]] bool barrier(std::int64_t d);
  void progress(std::int64_t d);
  void progress_once(std::int64_t d);
  void next_phase(std::int64_t d);
  void start_compute(std::int64_t d, Tick t, std::int64_t tiles);
  void on_tile_done(std::uint32_t d);
  void on_compute_done(std::uint32_t d);

  // Tensor-parallel all-reduce.
  [[nodiscard]] std::int64_t ar_steps() const { return 2 * (p_.mp - 1); }
  void ar_send_ready(std::int64_t d);
  void on_chunk(std::uint32_t d);

  // Ring (sim/pass_ring.cpp).
  // Advances a device in a ring phase; `more` when it left the phase (progress_once goes on).
  void ring_step(std::int64_t d, bool& more);
  void begin_round(std::int64_t d, std::int64_t r);
  [[nodiscard]] bool round_complete_ready(const Dev& dv, std::int64_t r) const;
  [[nodiscard]] bool next_block_ready(const Dev& dv, std::int64_t r) const;
  [[nodiscard]] bool ring_exit_ready(const Dev& dv) const;
  void send_ready(std::int64_t d);
  void send_ready_double(std::int64_t d);
  void transfer(std::int64_t d, TransferKind kind);
  void put_on_wire(std::int64_t d, TransferKind kind);
  void on_arrive(std::uint32_t d, TransferKind kind);

  // Collectives (sim/pass_collective.cpp).
  struct GroupState {
    std::size_t phase = 0;
    std::size_t instance = 0;
    std::int64_t entered = 0;
    std::int64_t left = 0;
    bool complete = false;
    Tick start = 0;
  };
  void enter_collective(std::int64_t d);
  void on_collective_done(std::uint32_t slot);
  [[nodiscard]] const GroupState* group_of(std::int64_t d) const;
  void leave_collective(std::int64_t d);

  const StepPlan& p_;
  const StepOptions& o_;
  std::size_t begin_, end_;
  Tick origin_;
  const std::vector<Tick>& entry_;
  TraceSink* trace_;
  Engine engine_;
  Network network_;
  ProcessorSharingHops hops_;
  CollectiveDriver collectives_;
  std::int64_t n_ = 1, d_ = 1;
  std::vector<Dev> devs_;
  PassOutcome out_;
  std::int64_t barrier_count_ = 0;
  std::vector<GroupState> groups_;
  std::vector<std::uint32_t> free_groups_;
  std::unordered_map<std::uint64_t, std::uint32_t> group_slot_;  // (phase, instance) -> slot
  Handler<std::uint32_t> h_start_, h_done_, h_tile_, h_kv_, h_dkv_, h_tp_, h_okv_, h_odkv_, h_fused_, h_coll_;
};

}  // namespace ringsim::sim::detail
