// The phase seam of the evaluator: a prefill or decode point is the scenario the inference phase
// runs (models::inference_spec), priced by models::predict_inference, in the same row a training
// point fills, so sweep and plan rank every phase alike.
#include "models/catalog/resolve.hpp"
#include "models/inference/phase.hpp"
#include "models/io/error.hpp"
#include "planning/evaluate.hpp"

namespace ringsim::planning {

void Evaluator::evaluate_inference(const SweepPoint& p, SweepResult& r) {
  try {
    const auto spec = models::inference_spec(p.spec, p.phase, p.cached_tokens, catalog_);
    // No recomputation in inference: the profile as it is.
    auto s = models::resolve(spec, parts(spec, std::nullopt)->second);
    apply_topology(s, p.topology);
    const auto x = models::predict_inference(s, p.phase, p.cached_tokens, grid_.memory.headroom_bytes);
    describe_scenario(r, s);
    // The row shows what runs: the phase's layout (the balanced sharding, or the implementation's
    // own for decode), no ZeRO stage (no optimizer states in inference).
    r.point.spec.layout = spec.layout;
    r.point.spec.tile = std::nullopt;  // the kernel's own tiles: inference takes no --tile
    r.point.zero = models::Sharding::None;
    r.engine = Engine::Analytic;  // no simulation of inference rows: `simulate --phase prefill` runs one
    auto& q = r.prediction;
    q.step_s = x.latency_s;
    q.tokens_per_s = x.tokens_per_s;
    q.attention_fwd_s = x.attention_s;
    q.other_compute_s = x.other_s;
    q.collective_s = x.collective_s;
    q.exposed_transfer_s = x.exposed_s;
    q.imbalance = 1;  // the balanced sharding of new and cached tokens (prefill), even shards (decode)
    q.mfu = 0;
    r.step_s = x.latency_s;
    // dp replicas serve independent requests: their throughputs add, the latency stays.
    r.tokens_per_s = x.tokens_per_s * static_cast<double>(p.dp);
    auto& m = r.memory;
    m.parameters_bytes = x.weights_bytes;
    m.activations_bytes = x.activations_bytes;
    m.workspace_bytes = x.buffer_bytes;
    m.strategy = {"kv_cache", x.kv_cache_bytes};
    m.total_bytes = x.memory_bytes;
    m.capacity_bytes = x.capacity_bytes;
    m.headroom_bytes = x.headroom_bytes;
    m.fits = x.fits;
    r.recompute = models::Recompute::None;
    r.inference = x;
    r.ok = true;
  } catch (const models::InputError& e) {
    r.ok = false;
    r.note = e.field().empty() ? e.message() : e.field() + ": " + e.message();
    r.note_field = e.field();
  }
}

}  // namespace ringsim::planning
