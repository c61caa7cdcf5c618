#include "models/inference/prefill.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "models/families/kernel_time.hpp"
#include "models/inference/forward_rest.hpp"
#include "models/inference/wire.hpp"
#include "models/io/error.hpp"
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

}  // namespace

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

PrefillPrediction predict_prefill(const ResolvedScenario& s, std::int64_t cached_tokens, PrefillVariant variant,
                                  double headroom_bytes) {
  if (s.strategy.kind != StrategyKind::Ring || s.ring_part)
    throw InputError({}, 0, "cp", "prefill is modelled on a ring (pass-KV or pass-Q): use --cp ring");
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
  const Chunks c{p / (2 * n), t / (2 * n), p, n};
  const auto& m = s.model;
  const auto& cost = *s.cost;
  const double heads = static_cast<double>(cost.heads_per_device()), kv_heads = static_cast<double>(cost.kv_heads_per_device());
  const double d = static_cast<double>(m.head_dim), batch = static_cast<double>(s.spec.batch);
  const auto rates = KernelRates::of(s.hardware, s.profile);
  const auto hop = s.profile.ring_hop(s.hardware, s.ring_crosses_nodes());
  const double hbm = s.hardware.hbm_bandwidth_bytes_per_s * s.profile.memory_efficiency;

  PrefillPrediction r;
  r.variant = variant;
  r.new_tokens = t;
  r.cached_tokens = p;
  r.devices = n;
  r.calls.resize(static_cast<std::size_t>(n));
  const double q_block_tokens = static_cast<double>(t) / static_cast<double>(n);
  const double kv_block_tokens = static_cast<double>(p + t) / static_cast<double>(n);
  // One device has no ring: nothing travels and nothing is merged, whichever variant is named.
  r.message_bytes = n == 1                              ? 0.0
                    : variant == PrefillVariant::PassKV ? kv_block_tokens * kv_heads * d * 2 * kInferenceWireBytes * batch
                                                        : q_block_tokens * heads * d * kInferenceWireBytes * batch;
  const double hop_s = hop.latency_s + r.message_bytes / hop.bandwidth_bytes_per_s;
  std::vector<std::int64_t> pairs(static_cast<std::size_t>(n), 0);
  for (std::int64_t round = 0; round < n; ++round) {
    PrefillRound pr;
    pr.round = round;
    for (std::int64_t dev = 0; dev < n; ++dev) {
      const std::int64_t other = ((dev - round) % n + n) % n;
      // pass-KV: this device's queries against the visiting K/V; pass-Q: the visiting queries
      // against this device's K/V.
      const auto calls = variant == PrefillVariant::PassKV ? calls_for(c, dev, other) : calls_for(c, other, dev);
      double busy = 0;
      for (auto call : calls) {
        const KernelCall kc{call.q_len, call.k_len, call.causal, call.k_len - call.q_len, cost.heads_per_device(),
                            cost.kv_heads_per_device(), s.spec.batch, m.head_dim};
        call.seconds = flash_call_time(*s.impl.kernel_model, rates, kc).fwd_s;
        // pass-KV merges each call's output into the running one (fp32 read and write, the
        // bf16 block read: 10 bytes per element, configs/ring_steps/ring-flash-attn.json);
        // pass-Q writes its partial outputs, merged once at the end (below).
        if (variant == PrefillVariant::PassKV && n > 1)
          call.seconds += 10.0 * static_cast<double>(call.q_len) * heads * d * batch / hbm;
        busy += call.seconds;
        pairs[static_cast<std::size_t>(dev)] += call.pairs;
        r.calls[static_cast<std::size_t>(dev)].push_back(call);
      }
      pr.compute_max_s = std::max(pr.compute_max_s, busy);
      pr.compute_mean_s += busy / static_cast<double>(n);
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
    r.all_to_all_s = hop.latency_s + r.return_bytes / hop.bandwidth_bytes_per_s;
    r.merge_s = static_cast<double>(n + 1) * out_bytes / hbm;
    r.attention_layer_s += r.all_to_all_s + r.merge_s;
    r.exposed_layer_s += r.all_to_all_s;
  }
  const auto [lo, hi] = std::minmax_element(pairs.begin(), pairs.end());
  r.pairs_per_device_min = *lo;
  r.pairs_per_device_max = *hi;

  // The rest of the forward on the device's T/N new tokens (models/inference/forward_rest.hpp):
  // the projections, MLP and element-wise ops, and the tensor-parallel all-reduces at mp > 1.
  const double layers = static_cast<double>(std::max<std::int64_t>(1, m.layers));
  const auto rest = forward_rest(s, t / n, s.spec.batch);
  r.other_compute_s = rest.matmul_s + rest.elementwise_s;
  r.tp_communication_s = rest.tp_collective_s;
  r.ttft_s = layers * r.attention_layer_s + r.other_compute_s + r.tp_communication_s;
  r.tokens_per_s = static_cast<double>(t) * batch / r.ttft_s;

  // Memory per device.
  r.weights_bytes = 2.0 * static_cast<double>(m.parameters()) / static_cast<double>(s.spec.mp);
  r.kv_cache_bytes = kv_block_tokens * layers * kv_heads * d * 2 * kInferenceWireBytes * batch;
  r.activations_bytes = q_block_tokens * batch *
                        activation_bytes_per_token_layer(m, s.spec.mp, Recompute::None, PrecisionBytes::of(TrainingPrecision::Bf16), false);
  r.buffer_bytes = 2 * r.message_bytes + r.return_bytes;
  r.memory_bytes = r.weights_bytes + r.kv_cache_bytes + r.activations_bytes + r.buffer_bytes;
  r.fits_memory = r.memory_bytes + headroom_bytes <= s.hardware.hbm_bytes;

  char buf[256];
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
                    "transfer-bound: the all-to-all returning %s's partial outputs (%.3g ms per layer) is exposed; its "
                    "%.3g MB per hop (%.3g ms) hide behind %.3g-%.3g ms of the busiest device's calls per round",
                    to_string(variant), r.all_to_all_s * 1e3, r.message_bytes / 1e6, hop_s * 1e3, calls_lo * 1e3,
                    calls_hi * 1e3);
  } else
    std::snprintf(buf, sizeof buf, "compute-bound: attention %.0f%% of the time to first token, exposed communication %.1f%%%s",
                  100 * layers * (r.attention_layer_s - r.exposed_layer_s) / r.ttft_s, 100 * exposed / r.ttft_s,
                  tp_share(r).c_str());
  r.why = buf;
  return r;
}

}  // namespace ringsim::models
