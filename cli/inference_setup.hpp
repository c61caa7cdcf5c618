#pragma once
// What `predict --phase prefill|decode` and `simulate --phase prefill` set up the same way: the
// scenario flags, one strategy, the phase's own scenario (models::inference_spec: its sharding and
// implementation), --cached-tokens, --weights and --kv-cache, and the nodes of --topology (as
// training's predict, sweep and plan place them), so that both commands price one scenario.
#include <cstdint>
#include <string>

#include <cxxopts.hpp>

#include "models/catalog/catalog.hpp"
#include "models/catalog/resolve.hpp"
#include "models/implementations/run_phase.hpp"

namespace ringsim::cli {

struct InferenceSetup {
  models::ScenarioSpec spec;
  models::ResolvedScenario scenario;
  std::string topology;  // --topology as given, or "default" (the hardware's nodes)
  std::int64_t cached = 0;
};

// InputError naming the flag for a bad value, a second strategy, or a topology that does not fit.
[[nodiscard]] InferenceSetup inference_setup(const cxxopts::ParseResult& r, const models::Catalog& catalog,
                                             models::RunPhase phase);

}  // namespace ringsim::cli
