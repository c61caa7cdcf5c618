#include "models/inference/prefill.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "models/families/kernel_time.hpp"
#include "models/workload/inference_formats.hpp"
#include "models/inference/forward_rest.hpp"
#include "models/inference/wire.hpp"
#include "models/io/checked.hpp"
#include "models/io/error.hpp"
#include "models/program/collective_cost.hpp"
#include "models/memory/memory.hpp"

namespace ringsim::models {

namespace {

struct Chunks {
  std::int64_t cached = 0, fresh = 0;  // tokens per chunk: P / 2N and T / 2N
  std::int64_t p = 0;                  // the cached tokens (new tokens start at position p)
  std::int64_t n = 0;                  // devices
  // Device d holds chunks d and 2N-1-d of both: their first positions.
  [[nodiscard]] std::array<std::int64_t, 2> fresh_starts(std::int64_t d) const {
    return {p + d * fresh, p + (2 * n - 1 - d) * fresh};
  }
  [[nodiscard]] std::array<std::int64_t, 2> cached_starts(std::int64_t d) const {
    return {d * cached, (2 * n - 1 - d) * cached};
  }
};

// The calls the code makes for the queries of q_owner against the keys of k_owner: the cached
// keys in one non-causal call; the new keys as zigzag's ring does (one causal call over both
// chunks for its own, the first chunk of an earlier device's for both query chunks, every key of
// a later device's for the second query chunk).
std::vector<PrefillCall> calls_for(const Chunks& c, std::int64_t q_owner, std::int64_t k_owner) {
  std::vector<PrefillCall> out;
  const auto qs = c.fresh_starts(q_owner);
  const auto pairs_of = [&](const std::vector<std::int64_t>& q_starts, std::int64_t q_len_each,
                            const std::vector<std::int64_t>& k_starts, std::int64_t k_len_each) {
    std::int64_t sum = 0;
    for (const auto q0 : q_starts)
      for (const auto k0 : k_starts) sum += causal_pairs(q0, q_len_each, k0, k_len_each);
    return sum;
  };
  if (c.cached > 0) {
    const auto ks = c.cached_starts(k_owner);
    out.push_back({q_owner, k_owner, true, 2 * c.fresh, 2 * c.cached, false,
                   pairs_of({qs[0], qs[1]}, c.fresh, {ks[0], ks[1]}, c.cached), 0});
  }
  const auto ks = c.fresh_starts(k_owner);
  if (k_owner == q_owner)
    out.push_back({q_owner, k_owner, false, 2 * c.fresh, 2 * c.fresh, true, pairs_of({qs[0], qs[1]}, c.fresh, {ks[0], ks[1]}, c.fresh), 0});
  else if (k_owner < q_owner)
    out.push_back({q_owner, k_owner, false, 2 * c.fresh, c.fresh, false, pairs_of({qs[0], qs[1]}, c.fresh, {ks[0]}, c.fresh), 0});
  else
    out.push_back({q_owner, k_owner, false, c.fresh, 2 * c.fresh, false, pairs_of({qs[1]}, c.fresh, {ks[0], ks[1]}, c.fresh), 0});
  return out;
}

// The tensor-parallel all-reduces' share of the prefill, for the why-line, where there are any.
std::string tp_share(const PrefillPrediction& r) {
  if (r.tp_communication_s <= 0) return {};
  char buf[96];
  std::snprintf(buf, sizeof buf, ", tensor-parallel all-reduces %.1f%%", 100 * r.tp_communication_s / r.ttft_s);
  return buf;
}

// pass-Q's return: one all-to-all over each tensor-parallel rank's ring of N devices, a block of
// `block_bytes` to every other member. On hardware with a transport it is NCCL's all-to-all over
// the machine (models/transport/collectives.hpp: every pair's transfer at once, sharing the
// GPUs' links, PCIe trees and NICs; an all-to-all cannot aggregate a node's NIC rails); without
// one, N - 1 messages on the ring hop.
double return_all_to_all(const ResolvedScenario& s, double block_bytes, const Profile::Hop& hop, PrefillPrediction& r) {
  const std::int64_t n = s.spec.sp;
  const auto& cost = *s.ring_scenario().cost;
  const double rounded = std::round(block_bytes);
  const RankPlacement pl{n, s.spec.mp, std::max<std::int64_t>(1, s.hardware.devices_per_node)};
  if (on_transport(cost, pl) && rounded >= 1 && rounded < 0x1p62) {
    const RankGroups ring{n, 1};
    const auto bytes = static_cast<std::int64_t>(rounded);
    r.all_to_all_on_transport = true;
    r.all_to_all_bound = collective_bound(cost, CollectiveKind::AllToAll, ring, bytes, pl);
    return collective_s(cost, CollectiveKind::AllToAll, ring, bytes, pl);
  }
  return hop.latency_s + static_cast<double>(n - 1) * block_bytes / hop.bandwidth_bytes_per_s;
}

}  // namespace

std::vector<PrefillCall> PrefillPrediction::calls_of(std::int64_t device) const {
  const auto& sh = shapes;
  const std::int64_t n = sh.devices;
  std::vector<PrefillCall> out;
  if (device < 0 || device >= n) return out;
  const Chunks c{sh.cached_chunk, sh.fresh_chunk, sh.cached_tokens, n};
  out.reserve(static_cast<std::size_t>(n * (c.cached > 0 ? 2 : 1)));
  for (std::int64_t round = 0; round < n; ++round) {
    const std::int64_t other = ((device - round) % n + n) % n;
    for (auto call : sh.variant == PrefillVariant::PassKV ? calls_for(c, device, other) : calls_for(c, other, device)) {
      call.seconds = call.cached                       ? sh.cached_s
                     : call.k_owner == call.q_owner    ? sh.own_s
                     : call.k_owner < call.q_owner     ? sh.earlier_s
                                                       : sh.later_s;
      out.push_back(call);
    }
  }
  return out;
}

const char* to_string(PrefillVariant v) noexcept { return v == PrefillVariant::PassKV ? "pass-KV" : "pass-Q"; }

std::int64_t causal_pairs(std::int64_t q0, std::int64_t nq, std::int64_t k0, std::int64_t nk) noexcept {
  // For query q, keys k0 .. min(q, k0 + nk - 1): sum over q of clamp(q - k0 + 1, 0, nk).
  std::int64_t sum = 0;
  const std::int64_t q_end = q0 + nq;
  // Queries before k0 see nothing; queries at or past k0 + nk - 1 see all nk.
  const std::int64_t full_from = std::max(q0, k0 + nk - 1);
  if (full_from < q_end) sum += (q_end - full_from) * nk;
  const std::int64_t lo = std::max(q0, k0), hi = std::min(q_end, k0 + nk - 1);  // partial rows [lo, hi)
  if (hi > lo) {
    // sum_{q=lo}^{hi-1} (q - k0 + 1) = arithmetic series
    const std::int64_t a = lo - k0 + 1, b = hi - 1 - k0 + 1;
    sum += (a + b) * (hi - lo) / 2;
  }
  return sum;
}

Profile::Hop prefill_hop(const ResolvedScenario& s) {
  const bool crosses = s.ring_crosses_nodes();
  const auto& ring = s.ring_scenario();
  Profile::Hop hop = s.profile.ring_hop(s.hardware, crosses);
  if (ring.cost) {
    hop.bandwidth_bytes_per_s = ring.cost->ring_bandwidth_bytes_per_s(crosses);
    hop.latency_s = ring.cost->ring_latency_s(crosses);
  }
  return hop;
}

PrefillPrediction predict_prefill(const ResolvedScenario& s, std::int64_t cached_tokens, PrefillVariant variant,
                                  double headroom_bytes) {
  if (s.strategy.kind != StrategyKind::Ring || s.ring_part)
    throw InputError({}, 0, "cp", "prefill is modelled on a ring (pass-KV or pass-Q): use --cp ring");
  check_formats(s.spec.formats, s.hardware.peak_fp8_per_s.has_value(), s.hardware.name);
  if (!s.impl.kernel_model)
    throw InputError({}, 0, "impl",
                     "implementation " + s.impl.name + " has no flash kernel model; prefill times each call with it "
                     "(ring-flash-attn, te-p2p, ...)");
  const std::int64_t n = s.spec.sp, t = s.spec.n_seq, p = cached_tokens;
  if (p < 0) throw InputError({}, 0, "cached-tokens", "expected a non-negative number of cached tokens");
  if (t % (2 * n) != 0 || p % (2 * n) != 0)
    throw InputError({}, 0, p % (2 * n) != 0 ? "cached-tokens" : "seq",
                     "the new and the cached tokens are each cut into 2 x " + std::to_string(n) +
                         " balanced chunks: both must be multiples of " + std::to_string(2 * n));
  // Every count below (a call's pairs, a device's, their sums) is at most the ring's total pairs,
  // T P + T (T + 1) / 2, with room for causal_pairs' doubled partial sums: refused where that would
  // overflow (a 2^40-token cache behind billions of new tokens) rather than counted wrong.
  std::int64_t cross = 0, own = 0, total = 0;
  if (!mul_fits(t, p, cross) || !mul_fits(t, t + 1, own) || __builtin_add_overflow(cross, own / 2, &total) ||
      total > std::numeric_limits<std::int64_t>::max() / 2)
    throw InputError({}, 0, "cached-tokens",
                     "the (query, key) pairs of " + std::to_string(t) + " new tokens over " + std::to_string(p) +
                         " cached ones overflow 64-bit integers: fewer tokens");
  const Chunks c{p / (2 * n), t / (2 * n), p, n};
  const auto& m = s.model;
  const auto& cost = *s.cost;
  const double heads = static_cast<double>(cost.heads_per_device()), kv_heads = static_cast<double>(cost.kv_heads_per_device());
  const double d = static_cast<double>(m.head_dim), batch = static_cast<double>(s.spec.batch);
  const auto rates = KernelRates::of(s.hardware, s.profile);
  const auto hop = prefill_hop(s);
  const double hbm = s.hardware.hbm_bandwidth_bytes_per_s * s.profile.memory_efficiency;

  PrefillPrediction r;
  r.variant = variant;
  r.new_tokens = t;
  r.cached_tokens = p;
  r.devices = n;
  const double q_block_tokens = static_cast<double>(t) / static_cast<double>(n);
  const double kv_block_tokens = static_cast<double>(p + t) / static_cast<double>(n);
  // One device has no ring: nothing travels and nothing is merged, whichever variant is named.
  r.message_bytes = n == 1                              ? 0.0
                    : variant == PrefillVariant::PassKV ? kv_block_tokens * kv_heads * d * 2 * kInferenceWireBytes * batch
                                                        : q_block_tokens * heads * d * kInferenceWireBytes * batch;
  const double hop_s = hop.latency_s + r.message_bytes / hop.bandwidth_bytes_per_s;
  // Each call shape timed once (PrefillCallShapes): the forward only, whose CTA pattern has one
  // entry per query block; the backward's (one per key block of a cache of up to 2^40 tokens) is
  // not needed here.
  const auto seconds_of = [&](const PrefillCall& call) {
    const KernelCall kc{call.q_len, call.k_len, call.causal, call.k_len - call.q_len, cost.heads_per_device(),
                        cost.kv_heads_per_device(), s.spec.batch, m.head_dim};
    double sec = flash_fwd_s(*s.impl.kernel_model, rates, kc);
    // pass-KV merges each call's output into the running one (fp32 read and write, the bf16
    // block read: 10 bytes per element, configs/ring_steps/ring-flash-attn.json); pass-Q writes
    // its partial outputs, merged once at the end (below).
    if (variant == PrefillVariant::PassKV && n > 1) sec += 10.0 * static_cast<double>(call.q_len) * heads * d * batch / hbm;
    return sec;
  };
  auto& sh = r.shapes;
  sh = {c.cached, c.fresh, p, n, variant, 0, 0, 0, 0};
  const auto own_calls = calls_for(c, 0, 0);
  if (c.cached > 0) sh.cached_s = seconds_of(own_calls.front());
  sh.own_s = seconds_of(own_calls.back());
  if (n > 1) {
    sh.earlier_s = seconds_of(calls_for(c, 1, 0).back());
    sh.later_s = seconds_of(calls_for(c, 0, 1).back());
  }
  // A device's busy time in a round: its calls in issue order (the cached one first).
  const auto busy_with = [&](double new_s) {
    double busy = 0;
    if (c.cached > 0) busy += sh.cached_s;
    return busy + new_s;
  };
  for (std::int64_t round = 0; round < n; ++round) {
    PrefillRound pr;
    pr.round = round;
    if (round == 0) {
      pr.compute_max_s = pr.compute_mean_s = busy_with(sh.own_s);
    } else {
      // In round r device d works with device d - r (mod N): the N - r devices d >= r with an
      // earlier one, the r devices d < r with a later one. pass-KV: d's queries against that
      // device's keys; pass-Q: that device's queries against d's keys, so the roles swap.
      const bool kv = variant == PrefillVariant::PassKV;
      const double upper = busy_with(kv ? sh.earlier_s : sh.later_s);  // devices d >= r
      const double lower = busy_with(kv ? sh.later_s : sh.earlier_s);  // devices d < r
      pr.compute_max_s = std::max(upper, lower);
      pr.compute_mean_s = (static_cast<double>(n - round) * upper + static_cast<double>(round) * lower) / static_cast<double>(n);
    }
    pr.transfer_s = round + 1 < n ? hop_s : 0.0;
    pr.round_s = std::max(pr.compute_max_s, pr.transfer_s);
    r.attention_layer_s += pr.round_s;
    r.exposed_layer_s += pr.round_s - pr.compute_max_s;
    r.rounds.push_back(pr);
  }
  if (variant == PrefillVariant::PassQ && n > 1) {
    // Each device returns the partial outputs (bf16) and log-sum-exp (fp32) of the N-1 visiting
    // query blocks in one all-to-all, then merges N partials per query (read N, write one).
    const double out_bytes = q_block_tokens * heads * (d * kInferenceWireBytes + 4) * batch;
    r.return_bytes = static_cast<double>(n - 1) * out_bytes;
    r.all_to_all_s = return_all_to_all(s, out_bytes, hop, r);
    r.merge_s = static_cast<double>(n + 1) * out_bytes / hbm;
    r.attention_layer_s += r.all_to_all_s + r.merge_s;
    r.exposed_layer_s += r.all_to_all_s;
  }
  // Pairs per device over the layer's rounds, in closed form: the calls of a device together cover
  // every allowed pair of its queries (pass-KV) or keys (pass-Q) against all the others' (the
  // combinations calls_for leaves out hold none), so they are causal_pairs over whole ranges.
  for (std::int64_t dev = 0; dev < n; ++dev) {
    std::int64_t mine = 0;
    if (variant == PrefillVariant::PassKV) {
      for (const auto q0 : c.fresh_starts(dev)) mine += causal_pairs(q0, c.fresh, 0, p) + causal_pairs(q0, c.fresh, p, t);
    } else {
      for (const auto k0 : c.cached_starts(dev)) mine += causal_pairs(p, t, k0, c.cached);
      for (const auto k0 : c.fresh_starts(dev)) mine += causal_pairs(p, t, k0, c.fresh);
    }
    r.pairs_per_device_min = dev == 0 ? mine : std::min(r.pairs_per_device_min, mine);
    r.pairs_per_device_max = std::max(r.pairs_per_device_max, mine);
  }

  // The rest of the forward on the device's T/N new tokens (models/inference/forward_rest.hpp):
  // the projections, MLP and element-wise ops, and the tensor-parallel all-reduces at mp > 1.
  const double layers = static_cast<double>(std::max<std::int64_t>(1, m.layers));
  const auto rest = forward_rest(s, t / n, s.spec.batch);
  r.other_compute_s = rest.matmul_s + rest.elementwise_s;
  r.tp_communication_s = rest.tp_collective_s;
  r.ttft_s = layers * r.attention_layer_s + r.other_compute_s + r.tp_communication_s;
  r.tokens_per_s = static_cast<double>(t) * batch / r.ttft_s;

  // Memory per device.
  r.weights_bytes = weight_bytes(m, s.spec.mp, s.spec.formats.weights).bytes;
  r.kv_cache_bytes = kv_block_tokens * layers * kv_heads * d * 2 * cache_element_bytes(s.spec.formats.cache) * batch;
  r.activations_bytes = q_block_tokens * batch *
                        activation_bytes_per_token_layer(m, s.spec.mp, Recompute::None, PrecisionBytes::of(TrainingPrecision::Bf16), false);
  r.buffer_bytes = 2 * r.message_bytes + r.return_bytes;
  r.memory_bytes = r.weights_bytes + r.kv_cache_bytes + r.activations_bytes + r.buffer_bytes;
  r.fits_memory = r.memory_bytes + headroom_bytes <= s.hardware.hbm_bytes;

  char buf[512];
  const double exposed = layers * r.exposed_layer_s;
  if (exposed > 0.05 * r.ttft_s) {
    // The busiest device's calls differ by round (the cached part of a block is visible whole, its
    // new part causal): name their range and the rounds that wait for the hop, not round 0 alone.
    double calls_lo = 0, calls_hi = 0;
    std::int64_t waiting = 0, sending = 0;
    for (const auto& round : r.rounds) {
      if (round.transfer_s <= 0) continue;
      calls_lo = sending == 0 ? round.compute_max_s : std::min(calls_lo, round.compute_max_s);
      calls_hi = std::max(calls_hi, round.compute_max_s);
      ++sending;
      waiting += round.transfer_s > round.compute_max_s ? 1 : 0;
    }
    if (waiting > 0 || r.all_to_all_s <= 0)
      std::snprintf(buf, sizeof buf,
                    "transfer-bound: %s sends %.3g MB per hop (%.3g ms) against %.3g-%.3g ms of the busiest device's calls "
                    "per round, waiting for the hop in %lld of %lld rounds%s",
                    to_string(variant), r.message_bytes / 1e6, hop_s * 1e3, calls_lo * 1e3, calls_hi * 1e3,
                    static_cast<long long>(waiting), static_cast<long long>(sending),
                    r.all_to_all_s > 0 ? ", then returns its partial outputs" : "");
    else
      std::snprintf(buf, sizeof buf,
                    "transfer-bound: the all-to-all returning %s's partial outputs (%.3g ms per layer%s%s) is exposed; its "
                    "%.3g MB per hop (%.3g ms) hide behind %.3g-%.3g ms of the busiest device's calls per round",
                    to_string(variant), r.all_to_all_s * 1e3, r.all_to_all_bound.empty() ? "" : ", ",
                    r.all_to_all_bound.c_str(), r.message_bytes / 1e6, hop_s * 1e3, calls_lo * 1e3, calls_hi * 1e3);
  } else
    std::snprintf(buf, sizeof buf, "compute-bound: attention %.0f%% of the time to first token, exposed communication %.1f%%%s",
                  100 * layers * (r.attention_layer_s - r.exposed_layer_s) / r.ttft_s, 100 * exposed / r.ttft_s,
                  tp_share(r).c_str());
  r.why = buf;
  return r;
}

}  // namespace ringsim::models
