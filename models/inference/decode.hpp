#pragma once
// Context-parallel decode: one new token per sequence per step, for a batch of B sequences whose
// KV caches of L tokens are sharded evenly over a ring of N devices (L/N tokens each, as a CP
// prefill leaves them). Every device runs the token through the layers (the weights are
// replicated over the CP group; tensor parallelism shards them over mp), and per layer:
//
//   1. the token's query reaches every device (it is computed where the layer's input is, and
//      broadcast: B x h x d values);
//   2. each device attends it to its own L/N cached tokens (Flash-Decoding's split of the keys:
//      the kernel streams the cache from HBM, a few FLOPs per byte, so memory-bound);
//   3. the N partial outputs and their log-sum-exp are gathered and merged (all-gather of
//      B x h x (d + 1) values per device), and the new token's K/V are appended to one device's
//      shard (the owner of the next position: the cache stays balanced).
//
// At mp > 1 each layer also pays Megatron's two all-reduces of the token's activations over the
// tensor-parallel group, as training does (models/inference/forward_rest.hpp).
//
// Two collectives per layer whose messages are small: at small batches decode is bound by their
// latency and by reading the weights once per step, not by the attention (docs/inference.md).
#include <cstdint>
#include <string>

#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

struct DecodePrediction {
  std::int64_t batch = 0, context = 0, devices = 0;
  double cache_bytes_read_per_layer = 0;  // one device: K/V of its B x L/N tokens
  double attention_layer_s = 0;           // one device's split-KV attention, one layer
  double query_broadcast_s = 0;           // per layer
  double output_gather_s = 0;             // per layer
  double merge_s = 0;                     // per layer: N partials per output
  double weights_read_s = 0;              // the step's weights streamed once from HBM (and their FLOPs)
  double elementwise_s = 0;               // the token's norms, RoPE and activation, all layers
  double tp_communication_s = 0;          // the tensor-parallel all-reduces, all layers (mp > 1)
  double tpot_s = 0;                      // time per output token (one decode step)
  double tokens_per_s = 0;                // B / tpot
  double communication_share = 0;         // of tpot
  double weights_bytes = 0, kv_cache_bytes = 0, memory_bytes = 0;
  bool fits_memory = true;
  std::string why;
};

// `context`: L, the tokens already in each sequence's cache (the new token attends to them and
// itself). InputError: context not positive or not a multiple of N (field "cached-tokens"), a
// strategy other than a ring (field "cp"). It fits when its memory plus `headroom_bytes` stays
// within the device's (docs/memory.md's headroom, --headroom).
[[nodiscard]] DecodePrediction predict_decode(const ResolvedScenario& s, std::int64_t context,
                                              double headroom_bytes = MemorySettings::kDefaultHeadroomBytes);

}  // namespace ringsim::models
