#include "cli/inference_setup.hpp"

#include "cli/scenario_options.hpp"
#include "models/inference/phase.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "planning/grid.hpp"

namespace ringsim::cli {

using models::InputError;

InferenceSetup inference_setup(const cxxopts::ParseResult& r, const models::Catalog& catalog, models::RunPhase phase) {
  auto args = parse_scenario_args(r);
  require_one_strategy(args, std::string("--phase ") + models::to_string(phase));
  // The inference rings attend causally over one request's cache and new tokens.
  const std::string phase_name = models::to_string(phase);
  if (args.base.docs)
    throw InputError({}, 0, "docs", "--phase " + phase_name + " serves one request's tokens: no packed --docs");
  if (args.base.mask.text() != "causal")
    throw InputError({}, 0, "mask",
                     "--phase " + phase_name + " attends causally over the cache and the new tokens: --mask causal (the "
                     "default), got '" + args.base.mask.text() + "'");
  InferenceSetup out;
  out.cached = models::parse_token_count_or_zero(r["cached-tokens"].as<std::string>(), "cached-tokens", std::int64_t{1} << 40);
  out.spec = models::inference_spec(args.base, phase, out.cached, catalog);
  // The phase shards the tokens itself (prefill: balanced chunks, as zigzag; decode: the
  // implementation's layout): a --layout other than that one is refused, not ignored.
  if (args.layouts_given)
    for (const auto& l : args.layouts)
      if (l.text() != out.spec.layout.text())
        throw InputError({}, 0, "layout",
                         "--phase " + phase_name + " runs the " + out.spec.layout.text() + " layout (" +
                             (phase == models::RunPhase::Prefill ? "the balanced chunks of new and cached tokens"
                                                                  : "the first its implementation offers") +
                             "), not " + l.text());
  out.spec.formats.weights = models::parse_weight_format(r["weights"].as<std::string>());
  out.spec.formats.cache = models::parse_cache_format(r["kv-cache"].as<std::string>());
  try {
    out.scenario = models::resolve(out.spec, catalog);
  } catch (const InputError& e) {
    // Decode's context is the scenario's sequence (models::inference_spec): a cache the ring
    // cannot shard is the --cached-tokens the user gave, not an n_seq they never wrote.
    if (phase == models::RunPhase::Decode && e.field() == "n_seq")
      throw InputError({}, 0, "cached-tokens", "the cache of " + std::to_string(out.cached) + " tokens: " + e.message());
    throw;
  }
  out.topology = r["topology"].as<std::string>();
  planning::apply_topology(out.scenario, out.topology);
  if (out.topology.empty()) out.topology = "default";
  return out;
}

}  // namespace ringsim::cli
