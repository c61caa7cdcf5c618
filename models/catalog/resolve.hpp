#pragma once
// A scenario resolved: a ScenarioSpec's names read through the catalog and built into the
// objects the solvers run (models/scenario/scenario.hpp): layout, mask, tile, workload, cost
// model, the implementation's kernel family and the strategy's program.
#include <memory>

#include "models/catalog/catalog.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

// Throws InputError for anything impossible (unknown names, sizes that don't divide, an
// explicit tile larger than the block, ...).
[[nodiscard]] ResolvedScenario resolve(const ScenarioSpec& spec, const Catalog& catalog);

// What a scenario reads from files: hardware, model, the implementation it runs (chosen for
// spec.layout) and its profile. A sweep resolves many scenarios that share them: it reads them
// once per distinct (hardware, model, impl, profile) and resolves each point from them.
struct ScenarioParts {
  Hardware hardware;
  ModelConfig model;
  Implementation impl;
  Profile profile;
  std::shared_ptr<const AttentionCost> attention;
};
[[nodiscard]] ScenarioParts resolve_parts(const ScenarioSpec& spec, const Catalog& catalog);
// resolve(spec, catalog) == resolve(spec, resolve_parts(spec, catalog)); `parts` must be those
// of a spec naming the same hardware, model, implementation and profile.
[[nodiscard]] ResolvedScenario resolve(const ScenarioSpec& spec, const ScenarioParts& parts);
// The same with the packed documents given rather than read from spec.docs (which must still
// name them, non-empty: it sets the mask family). Their lengths must sum to n_seq.
[[nodiscard]] ResolvedScenario resolve(const ScenarioSpec& spec, const ScenarioParts& parts,
                                       std::shared_ptr<const Documents> documents);

}  // namespace ringsim::models
