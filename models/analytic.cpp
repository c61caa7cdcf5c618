#include "models/analytic.hpp"

#include "models/attention_cost.hpp"
#include "models/memory.hpp"

#include <algorithm>
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

Prediction predict(const ResolvedScenario& s) {
  const auto& w = *s.workload;
  const auto& cost = *s.cost;
  const auto& m = s.model;
  const std::int64_t n = w.rounds();
  const bool inter = s.ring_crosses_nodes();
  const double layers = static_cast<double>(m.layers);
  const double round_overhead = s.profile.round_overhead_s;
  Prediction p;

  const double kv_bytes = static_cast<double>(w.kv_block_bytes());
  const double dkv_bytes =
      kv_bytes * static_cast<double>(s.profile.dkv_wire_bytes) / static_cast<double>(s.profile.kv_wire_bytes);
  const double t_kv = cost.transfer_s(kv_bytes, inter);
  const double t_kv_dkv = cost.transfer_s(kv_bytes + dkv_bytes, inter);
  // A ring of one device moves nothing: its dK/dV never leave home.
  const double t_dkv = n > 1 ? cost.transfer_s(dkv_bytes, inter) : 0.0;

  double fwd_layer = 0, bwd_layer = 0, fwd_exposed = 0, bwd_exposed = 0, imbalance_sum = 0, useful_layer = 0;
  double area_frac_sum = 0;
  const double block_area = static_cast<double>(s.layout->block()) * static_cast<double>(s.layout->block());
  p.rounds_fwd.reserve(static_cast<std::size_t>(n));
  const AttentionCost& attention = *s.attention;
  for (std::int64_t i = 0; i < n; ++i) {
    // One visit of the round's block classes gives the busiest device's compute (what a
    // lock-step round waits for), the mean, and the areas behind the imbalance figure.
    double comp_f = 0, comp_b = 0, fwd_sum = 0;
    std::int64_t max_area = 0, sum_area = 0, sum_allowed = 0;
    w.for_each_class(i, [&](std::int64_t device, const BlockStats& b, std::int64_t count) {
      const RoundCost c = attention.block(s, device, Workload::kv_block_of(device, i, n), b);
      comp_f = std::max(comp_f, c.fwd_s);
      comp_b = std::max(comp_b, c.bwd_s);
      fwd_sum += c.fwd_s * static_cast<double>(count);
      max_area = std::max(max_area, b.visited_area);
      sum_area += b.visited_area * count;
      sum_allowed += b.allowed_pairs * count;
    });
    const bool last = i + 1 == n;
    // Forward: the last round sends nothing. Backward: dK/dV travel with K/V every round, and
    // after the last round the accumulators still go home, after the compute.
    const double tf = last ? 0 : t_kv;
    const double round_f = round_overhead + cost.overlapped_s(comp_f, tf);
    const double round_b = last ? round_overhead + comp_b + t_dkv : round_overhead + cost.overlapped_s(comp_b, t_kv_dkv);
    fwd_layer += round_f;
    bwd_layer += round_b;
    fwd_exposed += round_f - round_overhead - comp_f;
    bwd_exposed += round_b - round_overhead - comp_b;
    area_frac_sum += static_cast<double>(max_area) / block_area;
    const double mean_area = static_cast<double>(sum_area) / static_cast<double>(n);
    imbalance_sum += mean_area > 0 ? static_cast<double>(max_area) / mean_area : 1.0;
    BlockStats sum_block;
    sum_block.allowed_pairs = sum_allowed;
    useful_layer += cost.attention_useful_fwd_flops(sum_block) / static_cast<double>(n);
    RoundTime rt;
    rt.round = i;
    rt.compute_max_s = comp_f;
    rt.compute_mean_s = fwd_sum / static_cast<double>(n);
    rt.transfer_s = tf;
    rt.round_s = round_f;
    p.rounds_fwd.push_back(rt);
  }
  // SCFA's gathers/sort before and scatter after the kernel, once per layer for the device's
  // own block: K/V are prepared where they live and travel prepared (0 unless index-based).
  fwd_layer += cost.sparse_prep_fwd_s(s.layout->block());
  bwd_layer += cost.sparse_prep_bwd_s(s.layout->block());
  p.attention_fwd_s = fwd_layer * layers;
  p.attention_bwd_s = bwd_layer * layers;
  p.exposed_transfer_s = (fwd_exposed + bwd_exposed) * layers;
  p.imbalance = imbalance_sum / static_cast<double>(n);

  StepShape shape;
  shape.tokens = s.layout->block();
  shape.batch = s.spec.batch;
  shape.mp = s.spec.mp;
  shape.recompute = s.profile.recompute;
  // mp groups sit inside a node while they fit there.
  const bool mp_inter = s.spec.mp > s.hardware.devices_per_node;
  double matmul_flops = 0;
  thread_local std::vector<Op> ops;  // a sweep predicts many scenarios: one buffer per thread
  step_ops(m, shape, ops);
  for (const Op& op : ops) {
    const double reps = op.per_layer ? layers : 1.0;
    const double t = cost.op_s(op, mp_inter) * reps;
    if (op.kind == OpKind::Collective)
      p.collective_s += t;
    else
      p.other_compute_s += t;
    if (op.kind == OpKind::Matmul && op.phase != Phase::Recompute) matmul_flops += op.flops * reps;
  }
  p.step_s = p.attention_fwd_s + p.attention_bwd_s + p.other_compute_s + p.collective_s;
  const double tokens = static_cast<double>(s.spec.n_seq) * static_cast<double>(s.spec.batch);
  // Every device of the mp x sp mesh works on the same sequence(s).
  p.tokens_per_s = tokens / p.step_s;
  // Useful attention FLOPs: allowed pairs, forward + standard 2x backward.
  p.model_flops = matmul_flops + 3 * useful_layer * layers;
  p.mfu = p.model_flops / (p.step_s * s.hardware.peak_flops_per_s(s.profile.matmul_precision));

  // Memory per device (models/memory.hpp): model states sharded over sp, the profile's recomputation.
  const MemoryEstimate mem = estimate_memory(s, MemoryOptions::from_profile(s));
  p.memory_bytes = mem.total_bytes;
  p.fits_memory = mem.fits;

  // Hide threshold: the forward compute per round grows as f c^2 (f: the busiest device's
  // visited fraction of the block, averaged over rounds) and the transfer as L + beta c; solve
  // f a c^2 = L + beta c for the smallest c (a: seconds per pair of a full block).
  const double frac = area_frac_sum / static_cast<double>(n);
  BlockStats one_pair;
  one_pair.visited_area = 1;
  const double a = cost.attention_fwd_flops(one_pair) / (s.hardware.peak_flops_per_s(s.profile.attention_precision) *
                                                         s.profile.attention_efficiency);
  const double c = static_cast<double>(s.layout->block());
  const double beta = kv_bytes / c / cost.link_bandwidth_bytes_per_s(inter);
  const double lat = cost.link_latency_s(inter);
  const double fa = std::max(frac, 1e-12) * a;
  p.hide_threshold_tokens = (beta + std::sqrt(beta * beta + 4 * fa * lat)) / (2 * fa);
  return p;
}

}  // namespace ringsim::models
