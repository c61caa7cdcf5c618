#include "models/inference/decode.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/workload/inference_formats.hpp"
#include "models/inference/forward_rest.hpp"
#include "models/inference/wire.hpp"
#include "models/io/error.hpp"
#include "models/program/collective_cost.hpp"
#include "models/workload/transformer.hpp"

namespace ringsim::models {

DecodePrediction predict_decode(const ResolvedScenario& s, std::int64_t context, double headroom_bytes) {
  if (s.strategy.kind != StrategyKind::Ring || s.ring_part)
    throw InputError({}, 0, "cp", "decode is modelled on a ring's sharded cache: use --cp ring");
  check_formats(s.spec.formats, s.hardware.peak_fp8_per_s.has_value(), s.hardware.name);
  const std::int64_t n = s.spec.sp;
  if (context <= 0 || context % n != 0)
    throw InputError({}, 0, "cached-tokens",
                     "decode needs the tokens in each cache (--cached-tokens), a positive multiple of the " +
                         std::to_string(n) + " devices that share it");
  const auto& m = s.model;
  const auto& cost = *s.cost;
  const double b = static_cast<double>(s.spec.batch);
  const double h = static_cast<double>(cost.heads_per_device()), h_kv = static_cast<double>(cost.kv_heads_per_device());
  const double d = static_cast<double>(m.head_dim);
  const double layers = static_cast<double>(std::max<std::int64_t>(1, m.layers));
  const double shard = static_cast<double>(context) / static_cast<double>(n);
  // The cache and the weights are streamed, read once; the merge of partial outputs is element-wise.
  const double hbm = s.hardware.hbm_bandwidth_bytes_per_s * s.profile.stream_read_efficiency;
  const double hbm_rw = s.hardware.hbm_bandwidth_bytes_per_s * s.profile.memory_efficiency;
  const double attn_rate = s.hardware.peak_flops_per_s(Precision::BF16) * s.profile.attention_efficiency;
  const double matmul_rate = s.hardware.peak_flops_per_s(Precision::BF16) * s.profile.matmul_efficiency;

  DecodePrediction r;
  r.batch = s.spec.batch;
  r.context = context;
  r.devices = n;
  // Split-KV attention of one query token per sequence against the device's shard: the K/V are
  // read once (memory-bound); its FLOPs (4 d per key and head) at the attention rate, whichever
  // is longer.
  const double cache_bytes = cache_element_bytes(s.spec.formats.cache);
  r.cache_bytes_read_per_layer = b * shard * h_kv * d * 2 * cache_bytes;
  r.attention_layer_s = std::max(r.cache_bytes_read_per_layer / hbm, 4.0 * d * h * shard * b / attn_rate);
  if (n > 1) {
    // The query reaching every device and the partial outputs (with their log-sum-exp) gathered:
    // each NCCL's all-gather over the ring's N ranks, every tensor-parallel lane at once, over
    // the scenario's fabric (models/program/collective_cost.hpp: ring or tree, LL / LL128 /
    // Simple, NCCL's latency per step and the NICs'): the query as a buffer each rank holds 1/N of
    // (a broadcast's N - 1 ring steps of the same bytes), the outputs one per rank.
    const double q_bytes = b * h * d * kInferenceWireBytes;
    const double out_bytes = b * h * (d * kInferenceWireBytes + 4);
    const RankPlacement placement{n, s.spec.mp, std::max<std::int64_t>(1, s.hardware.devices_per_node)};
    const RankGroups ring{n, 1};
    const auto per_rank = [&](double bytes) { return static_cast<std::int64_t>(std::ceil(bytes)); };
    r.query_broadcast_s = collective_s(cost, CollectiveKind::AllGather, ring, per_rank(q_bytes / static_cast<double>(n)), placement);
    r.output_gather_s = collective_s(cost, CollectiveKind::AllGather, ring, per_rank(out_bytes), placement);
    r.merge_s = static_cast<double>(n + 1) * out_bytes / hbm_rw;
  }
  // The rest of the step: every weight read once (batch-1 decode is a matrix-vector product per
  // weight: memory-bound) or its FLOPs for the batch, whichever is longer; the LM head included.
  // FP8 weights (fp8-ffn) halve their bytes and run their products on FP8 tensor cores.
  // The FP8 products at the cost model's FP8 rate (CostModel::op_s of an FP8 matmul).
  const auto w = weight_bytes(m, s.spec.mp, s.spec.formats.weights);
  const Op fp8_products{"fp8_weights", Phase::Forward, OpKind::Matmul, true, 2.0 * b * w.fp8_parameters, 0, true};
  r.weights_bytes = w.bytes;
  r.weights_read_s = std::max(r.weights_bytes / hbm, 2.0 * b * w.bf16_parameters / matmul_rate + cost.op_s(fp8_products, false));
  // The token's element-wise ops and, at mp > 1, the two tensor-parallel all-reduces per layer
  // (models/inference/forward_rest.hpp); its matrix products are the weights' streaming above.
  const auto rest = forward_rest(s, 1, s.spec.batch);
  r.elementwise_s = rest.elementwise_s;
  r.tp_communication_s = rest.tp_collective_s;
  const double comm = layers * (r.query_broadcast_s + r.output_gather_s) + r.tp_communication_s;
  r.tpot_s = layers * (r.attention_layer_s + r.merge_s) + comm + r.weights_read_s + r.elementwise_s;
  r.tokens_per_s = b / r.tpot_s;
  r.communication_share = comm / r.tpot_s;
  r.kv_cache_bytes = b * shard * layers * h_kv * d * 2 * cache_bytes;
  r.memory_bytes = r.weights_bytes + r.kv_cache_bytes;
  r.fits_memory = r.memory_bytes + headroom_bytes <= s.hardware.hbm_bytes;
  const double attention = layers * r.attention_layer_s;
  char buf[256];
  if (r.communication_share >= std::max(attention, r.weights_read_s) / r.tpot_s)
    std::snprintf(buf, sizeof buf,
                  "latency-bound: collectives %.0f%% of the step (the ring's two per layer for %.3g KB of queries and "
                  "outputs%s)",
                  100 * r.communication_share, b * h * (2 * d * kInferenceWireBytes + 4) / 1e3,
                  r.tp_communication_s > 0 ? ", and the tensor-parallel all-reduces" : "");
  else if (attention >= r.weights_read_s)
    // The cache read or, with a large batch on a short shard, the attention's FLOPs: whichever
    // set the time (attention_layer_s above).
    std::snprintf(buf, sizeof buf,
                  r.cache_bytes_read_per_layer / hbm >= r.attention_layer_s
                      ? "cache-bound: reading %.3g GB of K/V per step (%.0f%% of the step)"
                      : "compute-bound: the attention of %.3g GB of K/V per step at the tensor cores' rate (%.0f%% of "
                        "the step)",
                  layers * r.cache_bytes_read_per_layer / 1e9, 100 * attention / r.tpot_s);
  else if (r.weights_bytes / hbm >= r.weights_read_s)
    std::snprintf(buf, sizeof buf, "weight-bound: reading %.3g GB of weights per step (%.0f%% of the step)",
                  r.weights_bytes / 1e9, 100 * r.weights_read_s / r.tpot_s);
  else
    std::snprintf(buf, sizeof buf,
                  "compute-bound: the weights' products for a batch of %lld (%.0f%% of the step; reading their %.3g GB "
                  "would take %.0f%%)",
                  static_cast<long long>(r.batch), 100 * r.weights_read_s / r.tpot_s, r.weights_bytes / 1e9,
                  100 * r.weights_bytes / hbm / r.tpot_s);
  r.why = buf;
  return r;
}

}  // namespace ringsim::models
