#pragma once
// A scenario as a user writes it (names and numbers), and the same scenario resolved into the
// objects the solvers need: hardware, model, profile, layout, mask, tile, workload, cost model.
// Names resolve through the catalog in configs/ (hardware/, models/, profiles/).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/cost.hpp"
#include "models/hardware.hpp"
#include "models/layout.hpp"
#include "models/mask.hpp"
#include "models/transformer.hpp"
#include "models/workload.hpp"

namespace ringsim::models {

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
  std::string profile;            // name or path; empty: the hardware's default profile
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
  // Name (configs/profiles/NAME.json), path to a JSON file, or empty for the hardware's default
  // profile (configs/profiles/<hardware>.json if present, else spec defaults).
  [[nodiscard]] Profile profile(const std::string& name_or_path, const Hardware& hw) const;
  [[nodiscard]] std::vector<std::string> hardware_names() const;
  [[nodiscard]] std::vector<std::string> model_names() const;

 private:
  [[nodiscard]] std::vector<std::string> names_in(const std::string& sub) const;
  std::string root_;
};

struct ResolvedScenario {
  ScenarioSpec spec;
  Hardware hardware;
  ModelConfig model;
  Profile profile;
  std::unique_ptr<Layout> layout;
  std::unique_ptr<Mask> mask;
  TileShape tile;
  bool tile_clamped = false;  // the profile's default tile was larger than the block
  std::unique_ptr<Workload> workload;
  std::unique_ptr<CostModel> cost;
  [[nodiscard]] bool ring_crosses_nodes() const noexcept;
};

// Throws InputError for anything impossible (unknown names, sizes that don't divide, an
// explicit tile larger than the block, ...).
[[nodiscard]] ResolvedScenario resolve(const ScenarioSpec& spec, const Catalog& catalog);

}  // namespace ringsim::models
