#pragma once
// A scenario as a user writes it (names and numbers), and the same scenario resolved into the
// objects the solvers need: hardware, model, profile, layout, mask, tile, workload, cost model.
// Names resolve through the catalog in configs/ (hardware/, models/, profiles/).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "models/cost/cost.hpp"
#include "models/hardware/hardware.hpp"
#include "models/implementations/implementation.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"
#include "models/implementations/strategy.hpp"
#include "models/workload/transformer.hpp"
#include "models/workload/workload.hpp"

namespace ringsim::models {

class AttentionCost;
struct Program;
struct Documents;

struct ScenarioSpec {
  std::string hardware = "a100-80gb";
  std::string hardware_file;  // overrides `hardware` when set
  std::string model = "ringattn-1b";
  std::string model_file;     // overrides `model` when set
  std::int64_t mp = 1;
  std::int64_t sp = 8;
  std::int64_t n_seq = 0;
  std::int64_t batch = 1;
  std::string layout = "contiguous";
  std::string mask = "causal";
  // The sparse mask that mask-derived layouts (bucket-striped, bucket-rotated) are built from;
  // empty: `mask`. Lets a baseline mask (predict --compare-mask) keep the same token permutation.
  std::string layout_mask;
  std::optional<TileShape> tile;  // else the profile's default, clamped to the block
  std::string profile;            // name, IMPL/NAME or path; empty: the (hardware, implementation) profile
  // The implementation (configs/implementations/NAME.json); empty: the one the profile names, else
  // the most preferred one that runs on the hardware and offers the mask and strategy
  // (Catalog::default_implementation).
  std::string impl;
  std::string cp = "ring";        // context-parallel strategy (models/implementations/strategy.hpp)
  // Packed documents (models/workload/documents.hpp: a lengths file or lognormal:MEAN:SIGMA:SEED[:Q]);
  // they set the mask to per-document causal. Empty: one sequence.
  std::string docs;
  std::uint64_t seed = 1;         // for generated sparse masks
};

class Catalog {
 public:
  // root: the folder holding configs/ (the source tree by default, or $RINGSIM_DATA_DIR).
  explicit Catalog(std::string root = default_root());
  [[nodiscard]] static std::string default_root();
  [[nodiscard]] const std::string& root() const noexcept { return root_; }

  [[nodiscard]] Hardware hardware(const std::string& name) const;
  [[nodiscard]] ModelConfig model(const std::string& name) const;
  [[nodiscard]] Implementation implementation(const std::string& name) const;
  // The most preferred implementation (lowest `preference`, then name) that runs on the hardware
  // and offers the mask, the strategy and every layout in `layouts` (none: any); InputError when
  // none does. Layouts compared side by side share one implementation.
  [[nodiscard]] Implementation default_implementation(const Hardware& hw, const std::string& mask, const std::string& cp,
                                                      const std::vector<std::string>& layouts = {}) const;
  // The implementation a scenario runs with all of `layouts` (compared side by side, they share
  // one): spec.impl when given, else the one spec.profile is for, else the default for them all.
  [[nodiscard]] std::string choose_implementation(const ScenarioSpec& spec, const Hardware& hw,
                                                  const std::vector<std::string>& layouts) const;
  // Profiles are keyed by (hardware, implementation): configs/profiles/IMPL/HARDWARE.json.
  // name_or_path: empty for that file (spec defaults, marked uncalibrated, when there is none);
  // NAME for configs/profiles/IMPL/NAME.json (another hardware's fit, say); IMPL2/NAME; or a path
  // to a JSON file. A profile that names its implementation must name `impl`.
  [[nodiscard]] Profile profile(const std::string& name_or_path, const Hardware& hw, const std::string& impl) const;
  // Whether configs/profiles/IMPL/HARDWARE.json exists: a profile fitted to measurements on that
  // hardware or derived from one (its provenance says which), rather than spec defaults.
  [[nodiscard]] bool has_profile(const Hardware& hw, const std::string& impl) const;
  // The same for the default implementation of the hardware with a causal mask on a ring.
  [[nodiscard]] Profile profile(const std::string& name_or_path, const Hardware& hw) const;
  // The implementation a profile reference fixes (IMPL/NAME, or a file naming one), if any.
  [[nodiscard]] std::optional<std::string> profile_implementation(const std::string& name_or_path) const;
  [[nodiscard]] std::vector<std::string> hardware_names() const;
  [[nodiscard]] std::vector<std::string> model_names() const;
  [[nodiscard]] std::vector<std::string> implementation_names() const;

 private:
  [[nodiscard]] std::vector<std::string> names_in(const std::string& sub) const;
  [[nodiscard]] const std::vector<Implementation>& implementations() const;
  std::string root_;
  // Implementations are read once per catalog (resolve() consults all of them for the default);
  // shared by copies of the catalog, guarded so threads of a sweep may share one.
  struct ImplCache {
    std::mutex mutex;
    std::optional<std::vector<Implementation>> all;
  };
  std::shared_ptr<ImplCache> impls_ = std::make_shared<ImplCache>();
};

struct ResolvedScenario {
  ScenarioSpec spec;
  Hardware hardware;
  ModelConfig model;
  Implementation impl;
  Strategy strategy;
  Profile profile;
  std::unique_ptr<Layout> layout;
  std::unique_ptr<Mask> mask;
  TileShape tile;
  bool tile_clamped = false;  // the profile's default tile was larger than the block
  std::unique_ptr<Workload> workload;
  std::unique_ptr<CostModel> cost;
  // The implementation's kernel family: seconds of one device's attention work (attention_cost.hpp).
  std::shared_ptr<const AttentionCost> attention;
  // The packed documents (--docs, or a docs:FILE mask's), if any.
  std::shared_ptr<const Documents> documents;
  // usp:UxR: the ring part, a ring of R ranks over the whole sequence whose model has the heads
  // one device attends after the all-to-all (heads / U). Null for the other strategies.
  std::shared_ptr<ResolvedScenario> ring_part;
  // The strategy's attention program (models/program/program.hpp), built last.
  std::shared_ptr<const Program> program;
  [[nodiscard]] bool ring_crosses_nodes() const noexcept;
  // After hardware or profile changed (a fit, an interval's perturbed profile, a test's ideal
  // links): the cost model rebuilt from them, and the ring part given the same ones.
  void rebuild_cost();
  // The scenario whose workload and cost the ring stage runs on: ring_part, else this one.
  [[nodiscard]] const ResolvedScenario& ring_scenario() const noexcept { return ring_part ? *ring_part : *this; }
};

// The mask family a scenario's implementation must offer: "docs" with packed documents.
[[nodiscard]] std::string effective_mask(const ScenarioSpec& spec);

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
