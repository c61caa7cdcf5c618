#include "cli/simulate_prefill.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/inference_setup.hpp"
#include "cli/scenario_options.hpp"
#include "models/catalog/resolve.hpp"
#include "models/inference/phase.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

std::string simulate_prefill_text(const cxxopts::ParseResult& r, const models::Catalog& catalog,
                                  const sim::PrefillSimOptions& options, const std::string& format) {
  // The same scenario as `predict --phase prefill` (its balanced sharding and implementation, its
  // weights' and cache's formats, its nodes).
  const auto in = inference_setup(r, catalog, models::RunPhase::Prefill);
  const auto& s = in.scenario;
  const auto cached = in.cached;
  const auto kv = sim::simulate_prefill(s, cached, models::PrefillVariant::PassKV, options);
  const auto q = sim::simulate_prefill(s, cached, models::PrefillVariant::PassQ, options);
  const char* sync = options.sync == sim::Sync::Barrier ? "barrier" : "async";
  if (format == "json") {
    nlohmann::json j{{"phase", "prefill"}, {"hardware", s.hardware.name}, {"model", s.model.name}, {"impl", s.impl.name},
                     {"mp", s.spec.mp}, {"sp", s.spec.sp}, {"new_tokens", s.spec.n_seq}, {"cached_tokens", cached},
                     {"batch", s.spec.batch}, {"topology", kv.topology}, {"sync", sync}};
    for (const auto* p : {&kv, &q})
      j["variants"].push_back({{"variant", models::to_string(p->variant)},
                               {"ttft_s", p->ttft_s},
                               {"analytic_ttft_s", p->analytic.ttft_s},
                               {"layer_s", p->layer_s},
                               {"analytic_layer_s", p->analytic.attention_layer_s},
                               {"busiest_s", p->busiest_s},
                               {"exposed_s", p->exposed_s},
                               {"events", p->events}});
    return j.dump(2) + "\n";
  }
  std::string out = fmt::format(
      "ringsim simulate --phase prefill: {} on {} x {} ({}), mesh {}x{}, {}: {} new tokens over {} cached, batch {}, {}\n\n",
      s.model.name, s.spec.mp * s.spec.sp, s.hardware.name, kv.topology, s.spec.mp, s.spec.sp, s.impl.name, s.spec.n_seq,
      cached, s.spec.batch, options.sync == sim::Sync::Barrier ? "lock-step rounds" : "asynchronous rounds");
  out += fmt::format("{:<9} {:>10} {:>10} {:>11} {:>11} {:>11} {:>10} {:>10} {:>9}\n", "variant", "TTFT", "analytic",
                     "vs analytic", "layer", "analytic", "busiest", "exposed", "events");
  for (const auto* p : {&kv, &q})
    out += fmt::format("{:<9} {:>10} {:>10} {:>+10.4f}% {:>11} {:>11} {:>10} {:>10} {:>9}\n", models::to_string(p->variant),
                       human_seconds(p->ttft_s), human_seconds(p->analytic.ttft_s),
                       100 * (p->ttft_s / p->analytic.ttft_s - 1), human_seconds(p->layer_s),
                       human_seconds(p->analytic.attention_layer_s), human_seconds(p->busiest_s),
                       human_seconds(p->exposed_s), human_count(static_cast<double>(p->events)));
  out += "\nTTFT = the simulated forward (every layer's projections, MLP and attention); layer = one layer's\n"
         "attention (the ring, and pass-Q's all-to-all and merge); analytic = ringsim predict --phase prefill\n"
         "(lock-step rounds, as --sync barrier runs them); busiest = the device with the most compute, exposed =\n"
         "TTFT minus that. Hops take the topology's links, at the measured hop's figures where the hardware\n"
         "has them (configs/links) and at its links' otherwise (docs/inference.md).\n";
  return out;
}

}  // namespace ringsim::cli
