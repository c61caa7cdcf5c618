#pragma once
// The phase a scenario runs in, as data: a training step, a context-parallel prefill over a KV
// cache, or a decode step over caches sharded on the ring. Training is priced by analytic/ and
// memory/; the two inference phases by prefill.hpp and decode.hpp, summarised here in the figures
// every front-end shows for one point (latency, tokens/s, memory), so predict, sweep and plan
// give the same numbers for the same point.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "models/catalog/catalog.hpp"
#include "models/implementations/run_phase.hpp"
#include "models/inference/prefill.hpp"
#include "models/memory/memory.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {


// The scenario an inference phase runs, from the one asked for. Prefill: the balanced sharding
// of new and cached tokens is the inference code's own, so the layout becomes zigzag whatever was
// asked. Decode: contiguous shards of the cache, and n_seq becomes the context (the cached
// tokens, when positive). With no implementation named, the catalog's choice among production
// libraries for that layout (what `predict --phase` runs). Train: the spec unchanged.
[[nodiscard]] ScenarioSpec inference_spec(const ScenarioSpec& spec, RunPhase phase, std::int64_t cached_tokens,
                                          const Catalog& catalog);

// One inference point in the figures a sweep row or a plan carries.
struct InferencePrediction {
  RunPhase phase = RunPhase::Prefill;
  std::int64_t cached_tokens = 0;
  double latency_s = 0;     // prefill: time to first token (TTFT); decode: time per output token (TPOT)
  double tokens_per_s = 0;  // prefill: new tokens per second; decode: generated tokens per second (batch / TPOT)
  double attention_s = 0;   // every layer's attention (prefill: its ring, all-to-all and merges)
  double exposed_s = 0;     // of the latency, communication nothing hides (decode: the two collectives per layer)
  double other_s = 0;       // the rest (prefill: projections, MLP, element-wise ops; decode: the weights read, the merges)
  double collective_s = 0;  // the tensor-parallel all-reduces (mp > 1), as a training row's collective_s
  // Per device (prefill: the faster variant's, whose buffers differ).
  double weights_bytes = 0, kv_cache_bytes = 0, activations_bytes = 0, buffer_bytes = 0, memory_bytes = 0;
  double capacity_bytes = 0, headroom_bytes = 0;
  bool fits = true;  // memory + headroom within the device
  // Prefill: both ring variants predicted, and the one this point runs (the faster of those that
  // fit; the faster when neither does).
  std::optional<PrefillVariant> variant;
  double pass_kv_s = 0, pass_q_s = 0;
  std::string kernel;  // the attention kernel the implementation calls on this GPU (configs/kernels/)
  std::string why;
};

// InputError as predict_prefill / predict_decode (fields "cp", "impl", "seq", "cached-tokens"),
// and field "phase" for RunPhase::Train.
[[nodiscard]] InferencePrediction predict_inference(const ResolvedScenario& s, RunPhase phase, std::int64_t cached_tokens,
                                                    double headroom_bytes = MemorySettings::kDefaultHeadroomBytes);

}  // namespace ringsim::models
