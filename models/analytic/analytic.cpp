#include "models/analytic/analytic.hpp"
#include "models/analytic/ring_transfers.hpp"

#include "models/families/attention_cost.hpp"
#include "models/program/collective_cost.hpp"
#include "models/program/program.hpp"
#include "models/memory/memory.hpp"
#include "models/implementations/ring_steps.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <optional>
#include <cmath>

namespace ringsim::models {

double theoretical_max_speedup(const ModelConfig& m, std::int64_t sp, std::int64_t n_seq,
                               double attention_cost_ratio) noexcept {
  const double c = static_cast<double>(n_seq) / static_cast<double>(sp);
  const double d = static_cast<double>(m.d_model);
  const double hd = static_cast<double>(m.head_dim);
  const double q_width = static_cast<double>(m.heads) * hd;
  const double kv_width = static_cast<double>(m.kv_heads) * hd;
  // Forward matmul FLOPs per token (tensor parallelism divides both sides equally: it cancels).
  const double per_layer = 2 * d * (q_width + 2 * kv_width) + 2 * q_width * d + 2 * 2 * d * static_cast<double>(m.d_ff);
  const double other = 3 * c * (static_cast<double>(m.layers) * per_layer + 2 * d * static_cast<double>(m.vocab));
  // One full c x c block of attention, forward + backward (3x), all layers.
  const double block = 3 * 4 * c * c * q_width * static_cast<double>(m.layers) * attention_cost_ratio;
  const double diag = (c + 1) / (2 * c);  // c(c+1)/2 of c^2 pairs
  const double n = static_cast<double>(sp);
  const double ring = other + block * (diag + (n - 1));
  const double striped = other + block * diag * n;
  return ring / striped;
}

double theoretical_max_speedup(const ResolvedScenario& s) {
  const double ratio = s.hardware.peak_flops_per_s(s.profile.matmul_precision) /
                       s.hardware.peak_flops_per_s(s.profile.attention_precision);
  return theoretical_max_speedup(s.model, s.spec.sp, s.spec.n_seq, ratio);
}

namespace {

// Calls f(position, kv position, block, count) for the blocks of one round of the program's
// ring: the workload's classes for one ring (two per round where blocks depend only on the
// device difference or its sign), every position for a double ring's schedule.
// A class whose cost changes from some rank on (AttentionCost::variant_from_rank) is split in two,
// each part with its count: in round r of one ring the devices below r hold a later device's K/V
// (step class above) and the others an earlier one's or their own, so a class's devices are a
// range of ranks.
// AttentionCost::variant_from_rank of each step class, asked once per prediction (a library's
// rule is looked up by name: too slow to ask for every block of every round).
struct VariantRanks {
  std::array<std::int64_t, 3> from{-1, -1, -1};
  explicit VariantRanks(const ResolvedScenario& rs) {
    for (const auto cls : {StepClass::Diagonal, StepClass::Below, StepClass::Above})
      from[static_cast<std::size_t>(cls)] = rs.attention->variant_from_rank(rs, cls);
  }
  [[nodiscard]] std::int64_t of(StepClass cls) const noexcept { return from[static_cast<std::size_t>(cls)]; }
  // AttentionCost::block_variant.
  [[nodiscard]] int variant(std::int64_t q, std::int64_t k) const noexcept {
    return AttentionCost::variant_at(of(step_class(q, k)), q);
  }
};

template <class F>
void for_each_round_block(const ResolvedScenario& rs, const Program& prog, std::int64_t round, const VariantRanks& ranks,
                          F&& f) {
  const auto& w = *rs.workload;
  const std::int64_t n = w.devices();
  if (prog.window <= 0 || prog.window >= n) {
    w.for_each_class(round, [&](std::int64_t device, const BlockStats& b, std::int64_t count) {
      const std::int64_t k = Workload::kv_block_of(device, round, n);
      const StepClass cls = step_class(device, k);
      const std::int64_t from = ranks.of(cls);
      const std::int64_t lo = cls == StepClass::Below ? round : 0, hi = cls == StepClass::Above ? round : n;
      if (from < 0 || from >= hi || count == 1) {  // one variant in the class, or one device
        f(device, k, b, count);
        return;
      }
      // Classes are one device each or a step class's whole range of ranks: anything else would
      // charge some devices another device's variant.
      if (count != hi - lo) throw std::logic_error("for_each_round_block: a class of devices that is not a range of ranks");
      const std::int64_t first = std::max(lo, from);  // the first rank of the other variant
      if (first > lo) f(lo, Workload::kv_block_of(lo, round, n), b, first - lo);
      f(first, Workload::kv_block_of(first, round, n), b, hi - first);
    });
    return;
  }
  if (!w.classes_by_distance()) {
    for (std::int64_t q = 0; q < n; ++q) {
      const std::int64_t k = prog.kv_position(q, round);
      f(q, k, w.block(((q - k) % n + n) % n, q), std::int64_t{1});
    }
    return;
  }
  // Double ring: in round r = J W + s, position p = w W + i holds the block of window
  // (w - J) mod windows at index (i - s) mod W (Program::kv_position), so q - k is one value over
  // each of four rectangles of positions (w >= J or not, i >= s or not): one block each, visited
  // once with its count, split where the rank variant starts. O(1) per round, not O(n).
  const std::int64_t win = prog.window, windows = n / win, outer = round / win, step = round % win;
  const std::array<std::pair<std::int64_t, std::int64_t>, 2> rows{{{outer, windows}, {0, outer}}};
  const std::array<std::pair<std::int64_t, std::int64_t>, 2> cols{{{step, win}, {0, step}}};
  for (const auto& [w0, w1] : rows)
    for (const auto& [i0, i1] : cols) {
      if (w0 >= w1 || i0 >= i1) continue;
      const std::int64_t q0 = w0 * win + i0, k0 = prog.kv_position(q0, round);
      const BlockStats& b = w.block(((q0 - k0) % n + n) % n, q0);
      const std::int64_t total = (w1 - w0) * (i1 - i0);
      // Positions q = w W + i of the rectangle at or past the class's first rank of the other
      // variant: whole rows from the first row whose first column is past it, and part of the row
      // before.
      const std::int64_t from = ranks.of(step_class(q0, k0));
      std::int64_t past = 0, first_past = -1;
      if (from >= 0 && from <= q0) {
        past = total;
        first_past = q0;
      } else if (from >= 0) {
        const std::int64_t full = std::max(w0, (from - i0 + win - 1) / win);  // from - i0 > 0 here
        if (full < w1) {
          past += (w1 - full) * (i1 - i0);
          first_past = full * win + i0;
        }
        const std::int64_t part = full - 1;  // w0 <= part: q0 < from
        if (part < w1) {
          const std::int64_t i = std::max(i0, from - part * win);
          if (i < i1) {
            past += i1 - i;
            first_past = part * win + i;
          }
        }
      }
      if (total > past) f(q0, k0, b, total - past);
      if (past > 0) f(first_past, prog.kv_position(first_past, round), b, past);
    }
}

// The round's blocks as the workload counts them, timed through the implementation's kernel family.
// `by_class`: the family times a block by its step class and rank variant alone
// (times_by_step_class, block_variant); `classes` keeps each one's time across the rounds of one
// prediction.
RingRoundWork workload_round(const ResolvedScenario& rs, const Program& prog, std::int64_t round, bool by_class,
                             const VariantRanks& ranks, std::array<std::optional<RoundCost>, 6>& classes) {
  RingRoundWork w;
  const AttentionCost& attention = *rs.attention;
  for_each_round_block(rs, prog, round, ranks, [&](std::int64_t q, std::int64_t k, const BlockStats& b, std::int64_t count) {
    RoundCost c;
    if (by_class) {
      auto& slot = classes[static_cast<std::size_t>(step_class(q, k)) + 3 * static_cast<std::size_t>(ranks.variant(q, k))];
      if (!slot) slot = attention.block(rs, q, k, b);
      c = *slot;
    } else {
      c = attention.block(rs, q, k, b);
    }
    w.add_busiest(c);
    w.fwd_sum_s += c.fwd_s * static_cast<double>(count);
    w.bwd_sum_s += c.bwd_s * static_cast<double>(count);
    w.max_area = std::max(w.max_area, b.visited_area);
    w.sum_area += b.visited_area * count;
    w.sum_allowed += b.allowed_pairs * count;
  });
  return w;
}

// One layer of the program's ring stage, lock-step: each round lasts as long as its busiest
// device or its transfer, whichever the overlap lets through.
struct RingPass {
  double fwd_s = 0, bwd_s = 0, fwd_exposed = 0, bwd_exposed = 0;
  double busiest_fwd = 0, mean_fwd = 0, busiest_bwd = 0, mean_bwd = 0;
  double imbalance_sum = 0, area_frac_sum = 0, useful_layer = 0;
  double overhead = 0;  // per pass: every round's per-round overhead
  std::int64_t rounds_run = 0;
  std::vector<RoundTime> rounds;  // when asked for
};

RingPass ring_pass(const ResolvedScenario& s, const Program& prog, FunctionRef<RingRoundWork(std::int64_t)> round_work,
                   bool per_round) {
  const ResolvedScenario& rs = s.ring_scenario();
  const auto& w = *rs.workload;
  const auto& cost = *s.cost;
  const std::int64_t n = w.rounds();
  const double round_overhead = s.profile.round_overhead_s;
  RingPass r;
  r.rounds_run = n;
  r.overhead = static_cast<double>(n) * round_overhead;
  // What each round's compute overlaps, the transfers no round overlaps, and the compute slowed
  // by NCCL's kernel beside it (ring_transfers.cpp).
  const RingRoundTransfers xs = ring_round_transfers(s, prog);
  const bool double_ring = xs.double_ring;

  const double block_area = static_cast<double>(rs.layout->block()) * static_cast<double>(rs.layout->block());
  if (per_round) r.rounds.reserve(static_cast<std::size_t>(n));
  double window_f = 0, window_b = 0;  // double ring: the current window's inner rounds
  for (std::int64_t i = 0; i < n; ++i) {
    // The busiest device's compute (what a lock-step round waits for), the mean, and the
    // areas behind the imbalance figure.
    const RingRoundWork rw = round_work(i);
    const auto k = static_cast<std::size_t>(i);
    const double tf = xs.fwd[k], tb = xs.bwd[k];
    const double comp_f = std::max(rw.fwd_host_max_s, cost.beside_comm_s(rw.fwd_gpu_max_s, tf, xs.group_spans_nodes));
    const double comp_b = std::max(rw.bwd_host_max_s, cost.beside_comm_s(rw.bwd_gpu_max_s, tb, xs.group_spans_nodes));
    const double fwd_sum = rw.fwd_sum_s, bwd_sum = rw.bwd_sum_s;
    const std::int64_t max_area = rw.max_area, sum_area = rw.sum_area, sum_allowed = rw.sum_allowed;
    const bool last = i + 1 == n;
    double round_f = 0, round_b = 0;
    if (!double_ring) {
      // The transfers by round and protocol: ring_transfers.cpp. The walk's last hop home follows
      // the last round.
      round_f = round_overhead + cost.overlapped_s(comp_f, tf);
      round_b = round_overhead + cost.overlapped_s(comp_b, tb) + (last ? xs.home_s : 0.0);
      if (per_round) r.rounds.push_back({i, comp_f, fwd_sum / static_cast<double>(n), tf, round_f});
      r.fwd_s += round_f;
      r.bwd_s += round_b;
    } else {
      // Double ring (InternEvo): inner rounds of a window pass K/V (and the accumulators)
      // around the window; the next window's K/V crosses the outer hop during the whole window;
      // the accumulators go around the window once more, then to the next window, then home.
      const std::int64_t wsz = prog.window, step = i % wsz, win = i / wsz, windows = n / wsz;
      const bool last_step = step + 1 == wsz;
      round_f = round_overhead + cost.overlapped_s(comp_f, tf);
      round_b = round_overhead + cost.overlapped_s(comp_b, tb) + (last_step ? xs.window_dkv_s : 0.0);
      window_f += round_f;
      window_b += round_b;
      if (per_round) r.rounds.push_back({i, comp_f, fwd_sum / static_cast<double>(n), tf, round_f});
      if (last_step) {
        const bool more = win + 1 < windows;
        const double wf = cost.overlapped_s(window_f, more ? xs.outer_kv_s : 0.0);
        const double wb = cost.overlapped_s(window_b, more ? xs.outer_kv_s : 0.0) + (more ? 0.0 : xs.outer_dkv_s);
        r.fwd_s += wf;
        r.bwd_s += wb;
        // The outer transfer shows up in the window's last round.
        if (per_round) r.rounds.back().round_s += wf - window_f;
        window_f = window_b = 0;
      }
    }
    r.fwd_exposed += round_f - round_overhead - comp_f;
    r.bwd_exposed += round_b - round_overhead - comp_b;
    r.busiest_fwd += comp_f;
    r.busiest_bwd += comp_b;
    r.mean_fwd += fwd_sum / static_cast<double>(n);
    r.mean_bwd += bwd_sum / static_cast<double>(n);
    r.area_frac_sum += static_cast<double>(max_area) / block_area;
    const double mean_area = static_cast<double>(sum_area) / static_cast<double>(n);
    r.imbalance_sum += mean_area > 0 ? static_cast<double>(max_area) / mean_area : 1.0;
    BlockStats sum_block;
    sum_block.allowed_pairs = sum_allowed;
    r.useful_layer += rs.cost->attention_useful_fwd_flops(sum_block) / static_cast<double>(n);
  }
  if (double_ring) {
    // Exposure counted per window above includes the outer hops; recompute it from the totals.
    r.fwd_exposed = r.fwd_s - static_cast<double>(n) * round_overhead - r.busiest_fwd;
    r.bwd_exposed = r.bwd_s - static_cast<double>(n) * round_overhead - r.busiest_bwd;
  }
  return r;
}

struct PassTotals {
  double time_s = 0, exposed_ring = 0, exposed_ag = 0, exposed_rs = 0, exposed_a2a = 0;
  double busiest = 0, mean = 0, overhead = 0;
};

// One layer of a pass of the program, lock-step: stages one after the other, a stage and the
// next at once where the program says so.
PassTotals run_pass(const ResolvedScenario& s, const std::vector<Stage>& stages, const std::vector<TableCost>& tables,
                    const RingPass& ring, bool backward) {
  PassTotals t;
  const RankPlacement pl = placement_of(s);
  struct Timed {
    double time = 0, compute = 0;
  };
  auto one = [&](const Stage& st, PassTotals& acc) -> Timed {
    switch (st.kind) {
      case StageKind::Ring: {
        acc.exposed_ring += backward ? ring.bwd_exposed : ring.fwd_exposed;
        acc.busiest += backward ? ring.busiest_bwd : ring.busiest_fwd;
        acc.mean += backward ? ring.mean_bwd : ring.mean_fwd;
        acc.overhead += ring.overhead;
        const double time = backward ? ring.bwd_s : ring.fwd_s;
        return {time, time - (backward ? ring.bwd_exposed : ring.fwd_exposed)};
      }
      case StageKind::Compute: {
        const auto& sec = tables[st.table].seconds;
        double mx = 0, sum = 0;
        for (const double x : sec) {
          mx = std::max(mx, x);
          sum += x;
        }
        acc.busiest += mx;
        acc.mean += sum / static_cast<double>(sec.size());
        return {mx, mx};
      }
      case StageKind::Collective:
        return {std::max(collective_s(*s.cost, st.collective, st.groups, st.bytes, pl), collective_host_s(s.profile, st.groups)),
                0.0};
    }
    return {};
  };
  auto charge = [&](const Stage& st, double exposed) {
    if (st.kind != StageKind::Collective) return;
    (st.collective == CollectiveKind::AllGather       ? t.exposed_ag
     : st.collective == CollectiveKind::ReduceScatter ? t.exposed_rs
                                                      : t.exposed_a2a) += exposed;
  };
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const Stage& st = stages[i];
    const Timed a = one(st, t);
    if (st.with_next && i + 1 < stages.size()) {
      // A kernel and a collective at once: the compute hides what of the transfer it can.
      const Stage& nx = stages[++i];
      const Timed b = one(nx, t);
      const double pair = s.cost->overlapped_s(std::max(a.compute, b.compute), std::max(a.time - a.compute, b.time - b.compute));
      t.time_s += pair;
      charge(st.kind == StageKind::Collective ? st : nx, pair - std::max(a.compute, b.compute));
      continue;
    }
    t.time_s += a.time;
    charge(st, a.time);
  }
  return t;
}

}  // namespace

StepRest step_rest(const ResolvedScenario& s) {
  const auto& cost = *s.cost;
  const auto& m = s.model;
  const double layers = static_cast<double>(m.layers);
  StepRest r;
  StepShape shape;
  shape.tokens = s.layout->block();
  shape.batch = s.spec.batch;
  shape.mp = s.spec.mp;
  shape.recompute = s.profile.recompute;
  shape.fp8 = s.profile.fp8_matmuls;
  const bool mp_inter = s.tp_crosses_nodes();
  thread_local std::vector<Op> ops;  // a sweep predicts many scenarios: one buffer per thread
  step_ops(m, shape, ops);
  for (const Op& op : ops) {
    const double reps = op.per_layer ? layers : 1.0;
    const double t = cost.op_s(op, mp_inter) * reps;
    if (op.kind == OpKind::Collective)
      r.collective_s += t;
    else
      r.other_compute_s += t;
    if (!op.per_layer)
      (op.phase == Phase::Forward ? r.head_fwd_s : r.head_bwd_s) += t;
    else if (op.phase == Phase::Forward)
      (op.kind == OpKind::Collective ? r.layer_collective_fwd_s : r.layer_other_fwd_s) += t;
    if (op.kind == OpKind::Matmul && op.phase != Phase::Recompute) r.matmul_flops += op.flops * reps;
  }
  // Memory per device (models/memory/memory.hpp): model states sharded over sp, the profile's
  // recomputation, the ring's K/V buffers and the strategy's own (gathered K/V, Ulysses' tensors).
  const MemoryEstimate mem = estimate_memory(s, MemoryOptions::from_profile(s));
  r.memory_bytes = mem.total_bytes;
  r.fits_memory = mem.fits;
  return r;
}

Prediction predict(const ResolvedScenario& s) {
  const Program& prog = *s.program;
  std::vector<TableCost> tables;
  tables.reserve(prog.compute.size());
  for (const auto& t : prog.compute) tables.push_back(table_cost(s, t));
  std::int64_t table_pairs = 0;
  if (!prog.compute.empty())
    for (const auto x : prog.compute.front().pairs) table_pairs += x;
  const ResolvedScenario& rs = s.ring_scenario();
  const bool by_class = rs.attention->times_by_step_class(rs);
  std::array<std::optional<RoundCost>, 6> classes;  // by (step class, rank variant)
  const VariantRanks ranks(rs);
  const auto round_work = [&](std::int64_t round) { return workload_round(rs, prog, round, by_class, ranks, classes); };
  const AttentionWork work{round_work, &tables, table_pairs};
  return predict(s, work, step_rest(s), true);
}

Prediction predict(const ResolvedScenario& s, const AttentionWork& work, const StepRest& rest, bool per_round) {
  const auto& cost = *s.cost;
  const auto& m = s.model;
  const Program& prog = *s.program;
  const double layers = static_cast<double>(m.layers);
  Prediction p;

  RingPass ring;
  if (prog.has_ring()) ring = ring_pass(s, prog, work.ring_round, per_round);
  static const std::vector<TableCost> no_tables;
  const auto& tables = work.tables ? *work.tables : no_tables;
  const PassTotals fwd = run_pass(s, prog.fwd, tables, ring, false);
  const PassTotals bwd = run_pass(s, prog.bwd, tables, ring, true);
  double fwd_layer = fwd.time_s, bwd_layer = bwd.time_s;
  // SCFA's gathers/sort before and scatter after the kernel, once per layer for the device's
  // own block: K/V are prepared where they live and travel prepared (0 unless index-based).
  const double prep_fwd = cost.sparse_prep_fwd_s(s.layout->block()), prep_bwd = cost.sparse_prep_bwd_s(s.layout->block());
  fwd_layer += prep_fwd;
  bwd_layer += prep_bwd;
  p.attention_overhead_s = (fwd.overhead + bwd.overhead + prep_fwd + prep_bwd) * layers;
  p.rounds_fwd = std::move(ring.rounds);
  p.attention_fwd_s = fwd_layer * layers;
  p.attention_bwd_s = bwd_layer * layers;
  p.exposed_transfer_s = (fwd.exposed_ring + bwd.exposed_ring) * layers;
  p.exposed_allgather_s = (fwd.exposed_ag + bwd.exposed_ag) * layers;
  p.exposed_reduce_scatter_s = (fwd.exposed_rs + bwd.exposed_rs) * layers;
  p.exposed_all_to_all_s = (fwd.exposed_a2a + bwd.exposed_a2a) * layers;
  p.exposed_fwd_s = (fwd.exposed_ring + fwd.exposed_ag + fwd.exposed_rs + fwd.exposed_a2a) * layers;
  p.attention_busiest_s = (fwd.busiest + bwd.busiest) * layers;
  p.attention_mean_s = (fwd.mean + bwd.mean) * layers;
  p.attention_mean_fwd_s = fwd.mean * layers;
  // Imbalance: the ring's per-round busiest / mean area, averaged over rounds; for stages of
  // local compute the busiest device's compute over the mean.
  if (prog.kind == StrategyKind::Ring || prog.kind == StrategyKind::DoubleRing)
    p.imbalance = ring.rounds_run == 0 ? 1.0 : ring.imbalance_sum / static_cast<double>(ring.rounds_run);
  else
    p.imbalance = fwd.mean > 0 ? fwd.busiest / fwd.mean : 1.0;

  p.other_compute_s = rest.other_compute_s;
  p.collective_s = rest.collective_s;
  p.layer_other_fwd_s = rest.layer_other_fwd_s;
  p.layer_collective_fwd_s = rest.layer_collective_fwd_s;
  p.head_fwd_s = rest.head_fwd_s;
  p.head_bwd_s = rest.head_bwd_s;
  p.step_s = p.columns_s();
  const double tokens = static_cast<double>(s.spec.n_seq) * static_cast<double>(s.spec.batch);
  // Every device of the mp x sp mesh works on the same sequence(s).
  p.tokens_per_s = tokens / p.step_s;
  // Useful attention FLOPs per device: allowed pairs, forward + standard 2x backward.
  double useful_layer = ring.useful_layer;
  if (!prog.has_ring()) {
    BlockStats all;
    all.allowed_pairs = work.table_pairs;
    // A table's pairs are one head's, summed over ranks: all-gather ranks split the pairs,
    // Ulysses ranks each take every pair for sp-th of the heads. Per device, either way, the
    // mask's pairs / sp with all the device's heads (CostModel counts heads / mp).
    const double split = s.strategy.kind == StrategyKind::Ulysses ? static_cast<double>(s.spec.sp) : 1.0;
    useful_layer = cost.attention_useful_fwd_flops(all) / static_cast<double>(s.spec.sp) / split;
  }
  p.model_flops = rest.matmul_flops + 3 * useful_layer * layers;
  p.mfu = p.model_flops / (p.step_s * s.hardware.peak_flops_per_s(s.profile.matmul_precision));
  p.memory_bytes = rest.memory_bytes;
  p.fits_memory = rest.fits_memory;
  // What bounds the transfers, for the why-line: the ring's hop, and the slowest collective stage.
  if (prog.has_ring()) p.ring_bound = s.ring_scenario().cost->ring_bound(ring_inter(s, prog));
  {
    const RankPlacement pl = placement_of(s);
    double slowest = 0;
    for (const auto* pass : {&prog.fwd, &prog.bwd})
      for (const Stage& st : *pass) {
        if (st.kind != StageKind::Collective) continue;
        const double t = collective_s(cost, st.collective, st.groups, st.bytes, pl);
        if (t > slowest) {
          slowest = t;
          p.collective_bound = collective_bound(cost, st.collective, st.groups, st.bytes, pl);
        }
      }
  }

  // Hide threshold (rings): the forward compute per round grows as f c^2 (f: the busiest
  // device's visited fraction of the block, averaged over rounds) and the transfer as
  // L + beta c; solve f a c^2 = L + beta c for the smallest c (a: seconds per pair of a full block).
  if (prog.has_ring() && ring.rounds_run > 0) {
    const bool inter = s.ring_crosses_nodes();
    const double frac = ring.area_frac_sum / static_cast<double>(ring.rounds_run);
    const auto& rcost = *s.ring_scenario().cost;
    BlockStats one_pair;
    one_pair.visited_area = 1;
    const double a = rcost.attention_fwd_flops(one_pair) /
                     (s.hardware.peak_flops_per_s(s.profile.attention_precision) * s.profile.attention_efficiency);
    const double cr = static_cast<double>(s.ring_scenario().layout->block());
    const double kv_bytes = static_cast<double>(s.ring_scenario().workload->kv_block_bytes());
    const double beta = kv_bytes / cr / cost.ring_bandwidth_bytes_per_s(inter);
    const double lat = cost.ring_latency_s(inter);
    const double fa = std::max(frac, 1e-12) * a;
    p.hide_threshold_tokens = (beta + std::sqrt(beta * beta + 4 * fa * lat)) / (2 * fa);
  }
  return p;
}

}  // namespace ringsim::models
