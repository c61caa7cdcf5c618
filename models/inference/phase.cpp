#include "models/inference/phase.hpp"

#include <algorithm>
#include <cstdio>

#include "models/inference/decode.hpp"
#include "models/io/checked.hpp"
#include "models/io/error.hpp"

namespace ringsim::models {

ScenarioSpec inference_spec(const ScenarioSpec& spec, RunPhase phase, std::int64_t cached_tokens, const Catalog& catalog) {
  if (phase == RunPhase::Train) return spec;
  ScenarioSpec out = spec;
  out.phase = phase;
  const auto hw = out.hardware_file.empty() ? catalog.hardware(out.hardware) : Hardware::load_file(out.hardware_file);
  if (phase == RunPhase::Prefill) {
    out.layout = LayoutSpec::parse("zigzag");
    if (out.impl.empty()) out.impl = catalog.choose_implementation(out, hw, {out.layout}, true);
    return out;
  }
  // Decode is priced on the scenario of its context (n_seq becomes the cached tokens), and every
  // scenario counts its n_seq^2 pairs in 64 bits: that bounds --cached-tokens here, said as the
  // flag's own limit rather than as an n_seq the user never gave.
  std::int64_t pairs = 0;
  if (!mul_fits(cached_tokens, cached_tokens, pairs))
    throw InputError({}, 0, "cached-tokens",
                     "decode over caches of " + std::to_string(cached_tokens) +
                         " tokens: the context is the scenario's sequence, whose pair count (tokens^2) must fit "
                         "64-bit integers: at most 3037000499 tokens");
  if (cached_tokens > 0) out.n_seq = cached_tokens;
  // The new token attends to every cached token wherever the cache's shards sit, so the layout
  // changes no work: the implementation (named, or the phase's default whatever its layouts) decodes
  // on the first layout it offers (TransformerEngine's ring and a serving stack's balanced sharding:
  // zigzag under a causal mask).
  out.layout = LayoutSpec{};
  if (out.impl.empty()) out.impl = catalog.choose_implementation(out, hw, {}, true);
  const auto im = catalog.implementation(out.impl);
  for (const char* name : {"contiguous", "zigzag", "striped"})
    if (const auto l = LayoutSpec::parse(name); im.offers(hw.kind, l, effective_mask(out), out.cp)) {
      out.layout = l;
      break;
    }
  return out;
}

namespace {

InferencePrediction prefill(const ResolvedScenario& s, std::int64_t cached, double headroom) {
  const auto kv = predict_prefill(s, cached, PrefillVariant::PassKV, headroom);
  const auto q = predict_prefill(s, cached, PrefillVariant::PassQ, headroom);
  // The faster of the variants that fit: a point is a configuration someone could run.
  const bool q_first = q.fits_memory != kv.fits_memory ? q.fits_memory : q.ttft_s < kv.ttft_s;
  const auto& best = q_first ? q : kv;
  const auto& other = q_first ? kv : q;
  const double layers = static_cast<double>(std::max<std::int64_t>(1, s.model.layers));
  InferencePrediction r;
  r.phase = RunPhase::Prefill;
  r.cached_tokens = cached;
  r.latency_s = best.ttft_s;
  r.tokens_per_s = best.tokens_per_s;
  r.attention_s = layers * best.attention_layer_s;
  r.exposed_s = layers * best.exposed_layer_s;
  r.other_s = best.other_compute_s;
  r.collective_s = best.tp_communication_s;
  r.weights_bytes = best.weights_bytes;
  r.kv_cache_bytes = best.kv_cache_bytes;
  r.activations_bytes = best.activations_bytes;
  r.buffer_bytes = best.buffer_bytes;
  r.memory_bytes = best.memory_bytes;
  r.fits = best.fits_memory;
  r.variant = best.variant;
  r.pass_kv_s = kv.ttft_s;
  r.pass_q_s = q.ttft_s;
  char buf[96];
  if (s.spec.sp == 1)  // no ring: the two variants are the same calls (prefill.cpp)
    std::snprintf(buf, sizeof buf, "one device, no ring: ");
  else if (best.ttft_s <= other.ttft_s)
    std::snprintf(buf, sizeof buf, "%s, %.3gx faster than %s: ", to_string(best.variant), other.ttft_s / best.ttft_s,
                  to_string(other.variant));
  else
    std::snprintf(buf, sizeof buf, "%s (%s, %.3gx faster, does not fit): ", to_string(best.variant),
                  to_string(other.variant), best.ttft_s / other.ttft_s);
  r.why = buf + best.why;
  return r;
}

InferencePrediction decode(const ResolvedScenario& s, std::int64_t context, double headroom) {
  const auto d = predict_decode(s, context, headroom);
  const double layers = static_cast<double>(std::max<std::int64_t>(1, s.model.layers));
  InferencePrediction r;
  r.phase = RunPhase::Decode;
  r.cached_tokens = context;
  r.latency_s = d.tpot_s;
  r.tokens_per_s = d.tokens_per_s;
  r.attention_s = layers * d.attention_layer_s;
  r.exposed_s = layers * (d.query_broadcast_s + d.output_gather_s);
  r.other_s = d.weights_read_s + layers * d.merge_s + d.elementwise_s;
  r.collective_s = d.tp_communication_s;
  r.weights_bytes = d.weights_bytes;
  r.kv_cache_bytes = d.kv_cache_bytes;
  r.memory_bytes = d.memory_bytes;
  r.fits = d.fits_memory;
  r.why = d.why;
  return r;
}

}  // namespace

InferencePrediction predict_inference(const ResolvedScenario& s, RunPhase phase, std::int64_t cached_tokens,
                                      double headroom_bytes) {
  if (phase == RunPhase::Train) throw InputError({}, 0, "phase", "a training step is predicted by analytic/, not here");
  auto r = phase == RunPhase::Prefill ? prefill(s, cached_tokens, headroom_bytes) : decode(s, cached_tokens, headroom_bytes);
  r.capacity_bytes = s.hardware.hbm_bytes;
  r.headroom_bytes = headroom_bytes;
  r.kernel = s.impl.kernel_model ? s.impl.kernel_model->name : s.impl.kernel;
  return r;
}

}  // namespace ringsim::models
