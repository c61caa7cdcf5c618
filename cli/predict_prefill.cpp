#include "cli/predict_prefill.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/inference_setup.hpp"
#include "cli/memory_flags.hpp"
#include "cli/scenario_options.hpp"
#include "models/inference/decode.hpp"
#include "models/inference/phase.hpp"
#include "models/inference/prefill.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "planning/evaluate.hpp"
#include "planning/grid.hpp"
#include "planning/predict_runs.hpp"

namespace ringsim::cli {

using models::PrefillVariant;

namespace {

// The shared setup, and the memory headroom (--headroom) the fit is judged with.
struct Setup : InferenceSetup {
  double headroom_bytes = 0;
};

Setup setup(const cxxopts::ParseResult& r, const models::Catalog& catalog, models::RunPhase phase) {
  Setup out{inference_setup(r, catalog, phase), memory_settings_from(r).headroom_bytes};
  return out;
}

// Where the devices sit (the topology, whether the ring's hops cross nodes) and what the weights and
// the K/V cache are stored in.
std::string placement(const InferenceSetup& in) {
  const auto& s = in.scenario;
  return fmt::format("topology {}: {} devices per node; the ring {}; weights {}, K/V cache {}\nprofile {} ({}{})",
                     in.topology, s.hardware.devices_per_node,
                     s.ring_crosses_nodes() ? "crosses nodes" : "stays inside a node",
                     models::to_string(in.spec.formats.weights), models::to_string(in.spec.formats.cache), s.profile.name,
                     planning::profile_origin(s.profile),
                     s.profile.provenance.calibrated ? ""
                     : planning::profile_origin(s.profile) == "derived"
                         ? ": another GPU's fitted parameters copied"
                         : ": the hardware's datasheet figures, nothing fitted");
}

}  // namespace

std::string predict_prefill_text(const cxxopts::ParseResult& r, const models::Catalog& catalog, const std::string& format) {
  const auto in = setup(r, catalog, models::RunPhase::Prefill);
  const auto& s = in.scenario;
  const auto cached = in.cached;
  const auto kv = models::predict_prefill(s, cached, PrefillVariant::PassKV, in.headroom_bytes);
  const auto q = models::predict_prefill(s, cached, PrefillVariant::PassQ, in.headroom_bytes);
  const auto& best = q.ttft_s < kv.ttft_s ? q : kv;
  const auto& other = q.ttft_s < kv.ttft_s ? kv : q;
  const double hit = static_cast<double>(cached) / static_cast<double>(cached + s.spec.n_seq);
  if (format == "json") {
    nlohmann::json j{{"phase", "prefill"}, {"hardware", s.hardware.name}, {"model", s.model.name}, {"impl", s.impl.name},
                     {"kernel", planning::kernel_on(s.impl, s.hardware)}, {"mp", s.spec.mp}, {"sp", s.spec.sp}, {"new_tokens", s.spec.n_seq}, {"cached_tokens", cached},
                     {"batch", s.spec.batch}, {"cache_hit_rate", hit}, {"best", models::to_string(best.variant)},
                     {"topology", in.topology},
                     {"profile", in.scenario.profile.name},
                     {"profile_origin", planning::profile_origin(in.scenario.profile)},
                     {"weights", std::string(models::to_string(in.spec.formats.weights))},
                     {"kv_cache", std::string(models::to_string(in.spec.formats.cache))},
                     {"devices_per_node", s.hardware.devices_per_node}};
    // The ring hop both variants send on (and pass-Q's all-to-all): the B of docs/inference.md's
    // closed forms, as the machine's transport gives it (models::prefill_hop).
    const auto hop = models::prefill_hop(s);
    j["hop"] = {{"bandwidth_bytes_per_s", hop.bandwidth_bytes_per_s}, {"latency_s", hop.latency_s},
                {"crosses_nodes", s.ring_crosses_nodes()}};
    for (const auto* p : {&kv, &q}) {
      // Every round's busiest device's calls, all layers: the time the kernel model gives the
      // (query, key) pairs of the busiest device (pairs_per_device_max per head and layer), so
      // pairs x 4 d heads / this is the kernel's rate R at this point.
      double compute_s = 0;
      for (const auto& round : p->rounds) compute_s += round.compute_max_s;
      j["variants"].push_back({{"variant", models::to_string(p->variant)},
                               {"ttft_s", p->ttft_s},
                               {"tokens_per_s", p->tokens_per_s},
                               {"attention_s", p->attention_layer_s * static_cast<double>(s.model.layers)},
                               {"exposed_communication_s", p->exposed_layer_s * static_cast<double>(s.model.layers)},
                               {"other_compute_s", p->other_compute_s},
                               {"tp_communication_s", p->tp_communication_s},
                               {"message_bytes_per_hop", p->message_bytes},
                               {"returned_bytes", p->return_bytes},
                               {"memory_bytes", p->memory_bytes},
                               {"kv_cache_bytes", p->kv_cache_bytes},
                               {"weights_bytes", p->weights_bytes},
                               {"fits_memory", p->fits_memory},
                               {"attention_compute_s", compute_s * static_cast<double>(s.model.layers)},
                               {"all_to_all_s", p->all_to_all_s * static_cast<double>(s.model.layers)},
                               {"all_to_all_bound", p->all_to_all_bound},
                               {"pairs_per_device_max", p->pairs_per_device_max},
                               {"why", p->why}});
    }
    return j.dump(2) + "\n";
  }
  constexpr double gib = 1024.0 * 1024 * 1024;
  std::string out = fmt::format(
      "ringsim predict --phase prefill: {} on {} ({}, kernel {}), mesh {}x{}: {} new tokens over {} cached (cache hit {:.0f} %), "
      "batch {}\n"
      "sharding: new and cached tokens each in {} balanced chunks, device d holding chunks d and {}-d\n"
      "{}\n\n",
      s.model.name, s.hardware.name, s.impl.name, planning::kernel_on(s.impl, s.hardware), s.spec.mp, s.spec.sp, s.spec.n_seq,
      cached, 100 * hit, s.spec.batch, 2 * s.spec.sp, 2 * s.spec.sp - 1, placement(in));
  // A mesh that cannot hold the run: the times are what it would take, not what it takes; say so first.
  if (!kv.fits_memory && !q.fits_memory) {
    // Named by the larger of the two terms that grow with the request and the model, with what shards it.
    const bool cache = kv.kv_cache_bytes > kv.weights_bytes;
    out += fmt::format("this prefill does not run on this mesh: neither variant fits in memory ({} {:.1f} GiB per device, "
                       "{} {:.1f} GiB, of {:.1f} GiB); the times below are the work's, not a run's ({})\n\n",
                       cache ? "KV cache" : "weights", (cache ? kv.kv_cache_bytes : kv.weights_bytes) / gib,
                       cache ? "weights" : "KV cache", (cache ? kv.weights_bytes : kv.kv_cache_bytes) / gib,
                       s.hardware.hbm_bytes / gib,
                       cache ? "the cache shards over the ring: a larger SP in --mesh MPxSP, or --kv-cache fp8"
                             : "the weights shard over tensor parallelism: a larger MP in --mesh MPxSP, or --weights fp8-ffn");
  }
  out += fmt::format("{:<9} {:>10} {:>11} {:>11} {:>11} {:>11} {:>11} {:>12} {:>11}  {}\n", "variant", "TTFT", "tokens/s",
                     "attention", "exposed", "other", "tp comm", "per hop", "memory", "");
  const double layers = static_cast<double>(s.model.layers);
  for (const auto* p : {&kv, &q})
    out += fmt::format("{:<9} {:>9.4g}s {:>11.4g} {:>10.4g}s {:>10.4g}s {:>10.4g}s {:>10.4g}s {:>9.4g} MB {:>7.1f} GiB  {}\n",
                       models::to_string(p->variant), p->ttft_s, p->tokens_per_s, p->attention_layer_s * layers,
                       p->exposed_layer_s * layers, p->other_compute_s, p->tp_communication_s, p->message_bytes / 1e6,
                       p->memory_bytes / gib, p->fits_memory ? "" : "DOES NOT FIT");
  out += fmt::format("\nwhy:\n  pass-KV  {}\n  pass-Q   {}\n", kv.why, q.why);
  if (s.spec.sp == 1)
    out += "\none device: no ring, so both variants run the same calls and move nothing\n";
  else {
    constexpr const char* kWhatMoves =
        "(pass-KV sends K and V of (P + T)/N tokens, pass-Q the queries of T/N tokens and returns their partial outputs)";
    // "faster by 1x" says nothing: within half a percent the two are the same.
    if (other.ttft_s / best.ttft_s < 1.005)
      out += fmt::format("\npass-KV and pass-Q take the same time (within 0.5 %): {:.3g} MB per hop against {:.3g} MB {}\n",
                         kv.message_bytes / 1e6, q.message_bytes / 1e6, kWhatMoves);
    else {
      // Where the difference is: the communication no compute hides (the hops' excess and pass-Q's
      // all-to-all), or the attention's own time (pass-KV merges after every call, pass-Q once).
      const double exposed_gap = (other.exposed_layer_s - best.exposed_layer_s) * layers;
      const double gap = other.ttft_s - best.ttft_s;
      std::string cause;
      if (exposed_gap >= 0.5 * gap) {
        cause = fmt::format("{} exposes {:.3g} s of communication against {:.3g} s", models::to_string(other.variant),
                            other.exposed_layer_s * layers, best.exposed_layer_s * layers);
        const auto* q_side = other.variant == PrefillVariant::PassQ ? &other : &best;
        if (q_side->all_to_all_s > 0)
          cause += fmt::format(" (pass-Q's all-to-all returning partial outputs: {:.3g} s)", q_side->all_to_all_s * layers);
      } else {
        cause = fmt::format("{}'s attention takes {:.3g} s against {:.3g} s (pass-KV merges each call's output, pass-Q "
                            "all of them once after its all-to-all)",
                            models::to_string(other.variant), (other.attention_layer_s - other.exposed_layer_s) * layers,
                            (best.attention_layer_s - best.exposed_layer_s) * layers);
      }
      out += fmt::format("\n{} is faster by {:.3g}x: {}; per hop pass-KV sends {:.3g} MB, pass-Q {:.3g} MB {}\n",
                         models::to_string(best.variant), other.ttft_s / best.ttft_s, cause, kv.message_bytes / 1e6,
                         q.message_bytes / 1e6, kWhatMoves);
    }
  }
  out += fmt::format("memory per device: weights {:.1f} GiB, KV cache {:.1f} GiB of {:.1f} GiB (docs/inference.md)\n",
                     kv.weights_bytes / gib, kv.kv_cache_bytes / gib, s.hardware.hbm_bytes / gib);
  return out;
}

std::string predict_decode_text(const cxxopts::ParseResult& r, const models::Catalog& catalog, const std::string& format) {
  const auto in = setup(r, catalog, models::RunPhase::Decode);
  const auto& spec = in.spec;
  const auto context = in.cached;
  const double layers = static_cast<double>(std::max<std::int64_t>(1, in.scenario.model.layers));
  const auto ring = models::predict_decode(in.scenario, context, in.headroom_bytes);
  auto alone_spec = spec;
  alone_spec.sp = 1;
  // The same nodes, and a transport rebuilt on them (its tensor-parallel group may leave a node).
  auto alone_scenario = models::resolve(alone_spec, catalog);
  planning::place_in_nodes(alone_scenario, in.scenario.hardware.devices_per_node, in.topology);
  const auto alone = models::predict_decode(alone_scenario, context, in.headroom_bytes);
  constexpr double gib = 1024.0 * 1024 * 1024;
  if (format == "json") {
    nlohmann::json j{{"phase", "decode"}, {"hardware", spec.hardware}, {"model", spec.model}, {"impl", in.scenario.impl.name},
                     {"kernel", planning::kernel_on(in.scenario.impl, in.scenario.hardware)}, {"mp", spec.mp},
                     {"batch", spec.batch}, {"cached_tokens", context},
                     {"topology", in.topology},
                     {"profile", in.scenario.profile.name},
                     {"profile_origin", planning::profile_origin(in.scenario.profile)},
                     {"weights", std::string(models::to_string(in.spec.formats.weights))},
                     {"kv_cache", std::string(models::to_string(in.spec.formats.cache))},
                     {"devices_per_node", in.scenario.hardware.devices_per_node}};
    for (const auto* p : {&ring, &alone})
      j["rows"].push_back({{"sp", p->devices},
                           {"tpot_s", p->tpot_s},
                           {"tokens_per_s", p->tokens_per_s},
                           {"attention_s", p->attention_layer_s * layers},
                           {"communication_share", p->communication_share},
                           {"weights_read_s", p->weights_read_s},
                           {"tp_communication_s", p->tp_communication_s},
                           {"kv_cache_bytes", p->kv_cache_bytes},
                           {"memory_bytes", p->memory_bytes},
                           {"fits_memory", p->fits_memory},
                           {"why", p->why}});
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "ringsim predict --phase decode: {} on {} ({}, kernel {}), mp {}: one token for each of {} sequences over caches "
      "of {} tokens\n{}\n\n",
      spec.model, spec.hardware, in.scenario.impl.name, planning::kernel_on(in.scenario.impl, in.scenario.hardware), spec.mp,
      spec.batch, context, placement(in));
  // A ring of one device is the device alone: one row.
  const bool ring_of_one = ring.devices <= 1;
  // A ring rank is mp GPUs (its tensor-parallel group): the labels say how many GPUs a row uses.
  const auto label = [&](const models::DecodePrediction& p) {
    const std::string what = p.devices > 1 ? fmt::format("ring of {}", p.devices) : std::string(spec.mp > 1 ? "no ring" : "one device");
    return spec.mp > 1 ? fmt::format("{} ({} GPUs)", what, p.devices * spec.mp) : what;
  };
  std::size_t w = 12;
  for (const auto* p : {&ring, &alone}) w = std::max(w, label(*p).size());
  out += fmt::format("{:<{}} {:>11} {:>11} {:>9} {:>12} {:>11}  {}\n", "", w + 4, "TPOT", "tokens/s", "comm", "KV cache",
                     "memory", "");
  for (const auto* p : {&ring, &alone}) {
    if (ring_of_one && p == &ring) continue;
    out += fmt::format("{:<{}} {:>9.4g}ms {:>11.4g} {:>8.0f}% {:>8.1f} GiB {:>7.1f} GiB  {}\n", label(*p), w + 4,
                       p->tpot_s * 1e3, p->tokens_per_s, 100 * p->communication_share, p->kv_cache_bytes / gib,
                       p->memory_bytes / gib, p->fits_memory ? "" : "DOES NOT FIT");
  }
  out += "\nwhy:\n";
  if (!ring_of_one) out += fmt::format("  {:<{}} {}\n", label(ring), w, ring.why);
  out += fmt::format("  {:<{}} {}\n", label(alone), w, alone.why);
  out += "(per layer: the query broadcast, each device's split-KV attention over its shard, the partial outputs "
         "gathered and merged, and at mp > 1 two tensor-parallel all-reduces; the weights read once per step; "
         "docs/inference.md)\n";
  return out;
}

}  // namespace ringsim::cli
