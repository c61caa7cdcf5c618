#pragma once
// Context-parallel prefill: T new tokens of one request, attending causally to themselves and to P
// tokens already in the KV cache, over a ring of N devices, each holding a balanced share of both
// (the new and the cached tokens each cut into 2N chunks, device d holding chunks d and 2N-1-d, as
// zigzag does; Meta's CP inference code balances them this way). Two ways to run the ring:
//
//  - pass-KV: every device keeps its queries and the K/V of its cached and new tokens travel round
//    the ring (as in training, forward only): N-1 hops of (P + T)/N tokens' K and V.
//  - pass-Q: the K/V stay where they are (a cache is large) and the queries travel: N-1 hops of T/N
//    tokens' queries; each device computes every visiting query block against its own K/V, and the
//    partial outputs (with their log-sum-exp) return to the queries' owners in one all-to-all, where
//    they are merged.
//
// Both compute the same (query, key) pairs, only on other devices: the causal pairs of the new
// tokens among themselves and every new query against every cached key. Which is faster depends
// on what travels: (P + T)/N tokens x 2 x kv_heads against T/N tokens x heads (plus the returned
// outputs), so the cache-hit rate P/(P + T) and the GQA ratio heads/kv_heads decide (docs/inference.md).
//
// Each device's calls per round are timed by the flash kernel-time model (the kernel family of the
// implementation: models/families/kernel_time.hpp), transfers by the ring hop on the machine's
// transport (prefill_hop), the all-to-all as NCCL's over the machine (N - 1 messages on the hop
// where the hardware has no transport); rounds are lock-step (a round lasts as long as
// its busiest device's calls or its transfer). The rest of the forward (projections, MLP) runs on
// the device's T/N new tokens at the profile's matmul efficiency.
#include <cstdint>
#include <string>
#include <vector>

#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

enum class PrefillVariant { PassKV, PassQ };
[[nodiscard]] const char* to_string(PrefillVariant v) noexcept;

// One attention call a device makes in one round of one layer: queries of `q_owner` against the
// keys of `k_owner`, the cached part (all visible) or the new part (causal).
struct PrefillCall {
  std::int64_t q_owner = 0, k_owner = 0;
  bool cached = false;
  std::int64_t q_len = 0, k_len = 0;
  bool causal = false;     // bottom-right aligned when q_len != k_len (FlashAttention >= 2.1)
  std::int64_t pairs = 0;  // allowed (query, key) pairs of one head
  double seconds = 0;      // the kernel-time model's forward
};

struct PrefillRound {
  std::int64_t round = 0;
  double compute_max_s = 0, compute_mean_s = 0;
  double transfer_s = 0;  // what travels to the next device this round (none in the last)
  double round_s = 0;     // max(compute_max_s, transfer_s)
};

// The few call shapes a balanced ring has, each timed once: a device's queries against the cache
// (one non-causal call), against its own new chunks (causal), against an earlier device's (both
// query chunks, that device's first key chunk) and against a later device's (the second query
// chunk, both key chunks). Every call of the ring is one of them, so a prediction holds these
// instead of the N x N calls (a ring of 10^5 devices would need 10^10 of them).
struct PrefillCallShapes {
  std::int64_t cached_chunk = 0, fresh_chunk = 0;  // P / 2N and T / 2N tokens
  std::int64_t cached_tokens = 0, devices = 0;
  PrefillVariant variant = PrefillVariant::PassKV;
  // Seconds of each shape: the kernel-time model's forward, with pass-KV's running merge.
  double cached_s = 0, own_s = 0, earlier_s = 0, later_s = 0;
};

struct PrefillPrediction {
  PrefillVariant variant = PrefillVariant::PassKV;
  std::int64_t new_tokens = 0, cached_tokens = 0, devices = 0;
  PrefillCallShapes shapes;
  std::vector<PrefillRound> rounds;  // one layer
  double message_bytes = 0;          // per hop: K/V of (P + T)/N tokens, or queries of T/N tokens
  double return_bytes = 0;           // pass-Q: partial outputs (and log-sum-exp) each device sends back
  double all_to_all_s = 0;           // pass-Q: returning them, one layer
  // pass-Q: what bounds that all-to-all where NCCL's all-to-all over the machine's transport
  // priced it ("direct, Simple: node0 NIC0 out (15 transfers share ...)"); empty where the
  // hardware has no transport and N - 1 messages on the ring hop priced it.
  std::string all_to_all_bound;
  bool all_to_all_on_transport = false;
  double merge_s = 0;                // pass-Q: merging N partial outputs per query, one layer
  double attention_layer_s = 0;      // the ring, plus the all-to-all and merge of pass-Q
  double exposed_layer_s = 0;        // of it, time no device computes attention (transfer-bound rounds, the all-to-all)
  double other_compute_s = 0;        // projections, MLP and element-wise ops of the T/N new tokens, all layers
  double tp_communication_s = 0;     // the tensor-parallel all-reduces of their activations, all layers (mp > 1)
  double ttft_s = 0;                 // time to first token: every layer's attention and the rest
  double tokens_per_s = 0;           // new tokens per second of prefill
  std::int64_t pairs_per_device_max = 0, pairs_per_device_min = 0;  // one head, one layer
  // Per device: the weights (bf16, mp-sharded), the KV cache of its (P + T)/N tokens (all
  // layers), one layer's activations of its T/N new tokens, the ring's buffers.
  double weights_bytes = 0, kv_cache_bytes = 0, activations_bytes = 0, buffer_bytes = 0, memory_bytes = 0;
  bool fits_memory = true;
  std::string why;  // what bounds it, in words

  // One device's calls of one layer in issue order (round by round): N or 2N calls, built on
  // demand from `shapes` (the simulator's plan and the tests read them).
  [[nodiscard]] std::vector<PrefillCall> calls_of(std::int64_t device) const;
};

// Throws InputError: cached tokens negative or the new or cached tokens not divisible by 2N (the
// balanced chunks), more (query, key) pairs than 64-bit integers count (field "cached-tokens"), a
// strategy other than a ring (field "cp"), an implementation without a flash kernel model (field
// "impl"). Time and memory are O(N) in the ring's devices and do not grow with the tokens beyond
// one call's query blocks (the kernel model's CTA pattern of the T/N new tokens).
// The scenario's n_seq is the new tokens T; its layout is ignored (the balanced sharding above).
// It fits when its memory plus `headroom_bytes` stays within the device's (--headroom).
[[nodiscard]] PrefillPrediction predict_prefill(const ResolvedScenario& s, std::int64_t cached_tokens,
                                                PrefillVariant variant,
                                                double headroom_bytes = MemorySettings::kDefaultHeadroomBytes);

// The ring hop both variants send on: the rate a ring round
// gets on the scenario's machine (models/transport: PCIe trees, staged copies, NIC rails, the
// fabric's sharing, as a training ring's hops), which the prefill simulation's hops take too.
[[nodiscard]] Profile::Hop prefill_hop(const ResolvedScenario& s);

// Allowed (query, key) pairs between query positions [q0, q0 + nq) and key positions
// [k0, k0 + nk) of one causal sequence (key <= query), in closed form: what brute force counts.
[[nodiscard]] std::int64_t causal_pairs(std::int64_t q0, std::int64_t nq, std::int64_t k0, std::int64_t nk) noexcept;

}  // namespace ringsim::models
