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
  return fmt::format("topology {}: {} devices per node; the ring {}; weights {}, K/V cache {}", in.topology,
                     s.hardware.devices_per_node, s.ring_crosses_nodes() ? "crosses nodes" : "stays inside a node",
                     models::to_string(in.spec.formats.weights), models::to_string(in.spec.formats.cache));
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
  if (!kv.fits_memory && !q.fits_memory)
    out += fmt::format("this prefill does not run on this mesh: neither variant fits in memory (weights {:.1f} GiB per "
                       "device of {:.1f} GiB); the times below are the work's, not a run's (the weights shard over "
                       "tensor parallelism: a larger MP in --mesh MPxSP)\n\n",
                       kv.weights_bytes / gib, s.hardware.hbm_bytes / gib);
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
    else
      out += fmt::format("\n{} is faster by {:.3g}x: {:.3g} MB per hop against {:.3g} MB {}\n", models::to_string(best.variant),
                         other.ttft_s / best.ttft_s, best.message_bytes / 1e6, other.message_bytes / 1e6, kWhatMoves);
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
  out += fmt::format("{:<16} {:>11} {:>11} {:>9} {:>12} {:>11}  {}\n", "", "TPOT", "tokens/s", "comm", "KV cache", "memory", "");
  // A ring of one device is the device alone: one row.
  const bool ring_of_one = ring.devices <= 1;
  for (const auto* p : {&ring, &alone}) {
    if (ring_of_one && p == &ring) continue;
    out += fmt::format("{:<16} {:>9.4g}ms {:>11.4g} {:>8.0f}% {:>8.1f} GiB {:>7.1f} GiB  {}\n",
                       p->devices > 1 ? fmt::format("ring of {}", p->devices) : std::string("one device"), p->tpot_s * 1e3,
                       p->tokens_per_s, 100 * p->communication_share, p->kv_cache_bytes / gib, p->memory_bytes / gib,
                       p->fits_memory ? "" : "DOES NOT FIT");
  }
  out += "\nwhy:\n";
  if (!ring_of_one) out += fmt::format("  ring of {:<4} {}\n", ring.devices, ring.why);
  out += fmt::format("  one device   {}\n", alone.why);
  out += "(per layer: the query broadcast, each device's split-KV attention over its shard, the partial outputs "
         "gathered and merged, and at mp > 1 two tensor-parallel all-reduces; the weights read once per step; "
         "docs/inference.md)\n";
  return out;
}

}  // namespace ringsim::cli
