#include "cli/inference_setup.hpp"

#include "cli/scenario_options.hpp"
#include "models/inference/phase.hpp"
#include "models/io/parse.hpp"
#include "planning/grid.hpp"

namespace ringsim::cli {

InferenceSetup inference_setup(const cxxopts::ParseResult& r, const models::Catalog& catalog, models::RunPhase phase) {
  auto args = parse_scenario_args(r);
  require_one_strategy(args, std::string("--phase ") + models::to_string(phase));
  InferenceSetup out;
  out.cached = models::parse_int_in(r["cached-tokens"].as<std::string>(), "cached-tokens", 0, std::int64_t{1} << 40);
  out.spec = models::inference_spec(args.base, phase, out.cached, catalog);
  out.spec.formats.weights = models::parse_weight_format(r["weights"].as<std::string>());
  out.spec.formats.cache = models::parse_cache_format(r["kv-cache"].as<std::string>());
  out.scenario = models::resolve(out.spec, catalog);
  out.topology = r["topology"].as<std::string>();
  planning::apply_topology(out.scenario, out.topology);
  if (out.topology.empty()) out.topology = "default";
  return out;
}

}  // namespace ringsim::cli
