#include "sim/step.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

#include "models/analytic/analytic.hpp"
#include "models/io/error.hpp"
#include "sim/pass_sim.hpp"
#include "sim/step_plan.hpp"
#include "sim/step_size.hpp"
#include "sim/topology.hpp"

namespace ringsim::sim {

using models::InputError;
using detail::PassOutcome;
using detail::PassSim;
using detail::PhaseKind;
using detail::StepPlan;
using detail::TraceSink;

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

// Layer by layer, when every hop is isolated. A pass's trajectory then depends only on the
// per-device entry times (and when each device's last compute ended): nothing of layer l is on
// a hop when layer l + 1 uses it, because a device sends layer l + 1 traffic only once its
// successor has entered layer l + 1, which it does only after receiving all its layer-l K/V and
// dK/dV. So simulating the layers one after another is the same as simulating them together,
// and since the simulation is invariant under a shift of all its inputs (it only ever adds
// durations and subtracts times), a layer whose relative entry times equal those of an earlier,
// identical layer repeats that layer's outcome shifted in time: exactly, in integer ticks.
// Rings whose hops share links (tensor-parallel rings beside the ring, tori with mp > 1,
// crossing routes) may interact across layers: they are simulated layer by layer while no link
// is used by two layers at once (checked), else as one pass.
StepResult simulate_step(const models::ResolvedScenario& s, const StepOptions& options) {
  check_step_memory(s, options);  // before the plan's (round x device) tables are allocated
  const StepPlan plan(s, options);
  const auto dn = static_cast<std::size_t>(plan.d);
  const auto cells = static_cast<std::size_t>(plan.d * plan.rounds);
  const auto links = static_cast<std::size_t>(plan.topology->link_count());
  TraceSink sink;
  sink.limit = options.trace_event_limit;
  TraceSink* trace = options.record_trace ? &sink : nullptr;

  StepResult r;
  r.topology = plan.topology->spec();
  r.devices = plan.d;
  r.rounds = plan.rounds;
  std::vector<Tick> entry(dn, 0), last_end(dn, 0), busy(dn, 0);
  std::vector<std::int64_t> sent(links, 0), received(links, 0);

  // Attention compute per cell does not depend on timing: every ring phase runs each round
  // once; a non-ring strategy's kernels count in round 0.
  r.compute_s.assign(cells, 0.0);
  r.wait_s.assign(cells, 0);
  r.transfer_s.assign(cells, 0);
  {
    Tick fwd_phases = 0, bwd_phases = 0;
    std::vector<Tick> table_uses(plan.table_ticks.size(), 0);
    for (const auto& ph : plan.phases) {
      fwd_phases += ph.kind == PhaseKind::RingFwd;
      bwd_phases += ph.kind == PhaseKind::RingBwd;
      if (ph.kind == PhaseKind::Compute) ++table_uses[ph.table];
    }
    for (std::int64_t dev = 0; dev < plan.d; ++dev) {
      if (plan.prog.has_ring())
        for (std::int64_t round = 0; round < plan.rounds; ++round) {
          const auto& cost = plan.cost(plan.pos_of(dev), round);
          r.compute_s[static_cast<std::size_t>(dev * plan.rounds + round)] =
              plan.clock.to_seconds(fwd_phases * cost.fwd + bwd_phases * cost.bwd);
        }
      Tick local = 0;
      for (std::size_t t = 0; t < plan.table_ticks.size(); ++t)
        local += table_uses[t] * plan.table_ticks[t][static_cast<std::size_t>(plan.rank_of(dev))];
      r.compute_s[static_cast<std::size_t>(dev * plan.rounds)] += plan.clock.to_seconds(local);
    }
  }
  // Per-device and per-link figures are added at once; the device x round cells `times` times
  // at once, which for a replayed layer is deferred until its memo entry is replaced.
  auto add_cells = [&](const PassOutcome& out, Tick times) {
    if (times == 0) return;
    // A transpose (round-major to device-major) in 64 x 64 blocks, to stay in cache.
    const auto rounds = static_cast<std::size_t>(plan.rounds);
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

  // Layer by layer where layers cannot interact; where links are shared (tensor-parallel rings
  // beside the context-parallel ring, crossing routes), layer by layer too, as long as no link
  // carries traffic of two layer passes at once: then the flows of different passes never share
  // a link, the max-min sharing of the whole step splits into the passes' own, and the passes
  // simulated apart are the step. Each pass's first and last use of every link (absolute, a
  // replayed pass's shifted) is checked against the passes before it; at the first overlap the
  // step is simulated again as one pass.
  const bool check_links = !plan.isolated;
  auto layer_by_layer = [&]() -> bool {
    struct Memo {
      std::vector<Tick> entry, last_end;  // relative to the origin
      PassOutcome out;
      Tick pending = 0;                   // replays whose cells are not added yet
    };
    std::vector<std::optional<Memo>> memo(plan.segments.size());
    std::vector<Tick> rel_entry(dn), rel_last(dn);
    // Per link: the end of the last use by an earlier pass (absolute ticks).
    std::vector<Tick> busy_until(check_links ? links : 0, -1);
    auto apart = [&](const PassOutcome& out, Tick origin) {
      if (!check_links) return true;
      for (std::size_t l = 0; l < links; ++l) {
        if (out.link_first_use[l] == Network::kNeverUsed) continue;
        if (origin + out.link_first_use[l] < busy_until[l]) return false;
        busy_until[l] = std::max(busy_until[l], origin + out.link_last_use[l]);
      }
      return true;
    };
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
        if (!apart(m->out, origin)) return false;
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
      if (!apart(out, origin)) return false;
      if (options.progress) options.progress(static_cast<std::int64_t>(k + 1), static_cast<std::int64_t>(plan.segments.size()));
      advance(out, origin);
      if (replay)
        m = Memo{rel_entry, rel_last, std::move(out), 1};
      else
        add_cells(out, 1);
    }
    for (auto& m : memo)
      if (m) add_cells(m->out, m->pending);
    return true;
  };
  bool done = false;
  if (options.layer_passes != LayerPasses::Whole) {
    done = layer_by_layer();
    if (!done) {
      // Start over: what the abandoned passes added goes.
      std::fill(entry.begin(), entry.end(), 0);
      std::fill(last_end.begin(), last_end.end(), 0);
      std::fill(busy.begin(), busy.end(), 0);
      std::fill(sent.begin(), sent.end(), 0);
      std::fill(received.begin(), received.end(), 0);
      std::fill(r.wait_s.begin(), r.wait_s.end(), 0.0);
      std::fill(r.transfer_s.begin(), r.transfer_s.end(), 0.0);
      r.tiles_executed = 0;
      r.passes_reused = 0;
      sink.spans.clear();
      sink.truncated = false;
    }
  }
  if (!done) {
    PassOutcome out = PassSim(plan, 0, plan.phases.size(), 0, entry, last_end, trace).run();
    r.events += out.events;
    ++r.passes_simulated;
    advance(out, 0);
    add_cells(out, 1);
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
  for (std::int64_t i = 0; i < plan.rounds; ++i) {
    double mx = 0, sum = 0;
    for (std::int64_t d = 0; d < plan.d; ++d) {
      const double c = r.compute_s[static_cast<std::size_t>(d * plan.rounds + i)];
      mx = std::max(mx, c);
      sum += c;
    }
    imb += sum > 0 ? mx / (sum / static_cast<double>(plan.d)) : 1.0;
  }
  r.imbalance = imb / static_cast<double>(plan.rounds);
  const auto& g = plan.topology->graph();
  for (std::size_t l = 0; l < links; ++l) {
    if (sent[l] == 0 && received[l] == 0) continue;
    const auto& link = plan.topology->link(static_cast<std::int64_t>(l));
    r.link_bytes.push_back({static_cast<std::int64_t>(l), g[static_cast<Vertex>(link.src)].name,
                            g[static_cast<Vertex>(link.dst)].name, sent[l], received[l]});
  }
  if (options.record_trace) {
    for (std::int64_t d = 0; d < plan.d; ++d) {
      const auto phys = plan.embedding->device(plan.tp_of(d), plan.rank_of(d));
      r.lanes.push_back("device " + std::to_string(phys) + " compute (tp " + std::to_string(plan.tp_of(d)) + " cp rank " +
                        std::to_string(plan.rank_of(d)) + ")");
      r.lanes.push_back("device " + std::to_string(phys) + " copy engine");
    }
    r.trace = std::move(sink.spans);
    r.trace_truncated = sink.truncated;
  }
  return r;
}

}  // namespace ringsim::sim
