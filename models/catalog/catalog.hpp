#pragma once
// The catalog: hardware, models, implementations and profiles by name, read from configs/
// (hardware/, models/, implementations/, profiles/IMPL/HARDWARE.json), and the choices made
// when a scenario leaves them out (the default implementation, a profile's implementation).
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace ringsim::models {

class Catalog {
 public:
  // root: the folder holding configs/ (the source tree by default, or $RINGSIM_DATA_DIR).
  explicit Catalog(std::string root = default_root());
  [[nodiscard]] static std::string default_root();
  [[nodiscard]] const std::string& root() const noexcept { return root_; }

  [[nodiscard]] Hardware hardware(const std::string& name) const;
  [[nodiscard]] ModelConfig model(const std::string& name) const;
  [[nodiscard]] Implementation implementation(const std::string& name) const;
  // The most preferred implementation that runs on the hardware and offers the mask, the
  // strategy and every layout in `layouts` (none: any): a production library before a research
  // kernel before ringsim's reference kernels (a user can deploy the first), then the lowest
  // `preference`, then the name; only implementations that run `phase` (a serving stack for
  // prefill and decode, a training library for a step). `production_only`: no research or
  // reference kernel at all. InputError when none does. Layouts compared side by side share one
  // implementation.
  [[nodiscard]] Implementation default_implementation(const Hardware& hw, const MaskSpec& mask, const Strategy& cp,
                                                      const std::vector<LayoutSpec>& layouts = {},
                                                      bool production_only = false,
                                                      RunPhase phase = RunPhase::Train) const;
  // The implementation a scenario runs with all of `layouts` (compared side by side, they share
  // one): spec.impl when given, else the one spec.profile is for, else the default for them all
  // in spec.phase.
  [[nodiscard]] std::string choose_implementation(const ScenarioSpec& spec, const Hardware& hw,
                                                  const std::vector<LayoutSpec>& layouts,
                                                  bool production_only = false) const;
  // Profiles are keyed by (hardware, implementation): configs/profiles/IMPL/HARDWARE.json.
  // name_or_path: empty for that file (spec defaults, marked uncalibrated, when there is none);
  // NAME for configs/profiles/IMPL/NAME.json (another hardware's fit, say); IMPL2/NAME; or a path
  // to a JSON file. A profile that names its implementation must name `impl`.
  [[nodiscard]] Profile profile(const std::string& name_or_path, const Hardware& hw, const std::string& impl) const;
  // The spec defaults for `impl` on `hw` (Profile::spec_default), holding the parameters of the
  // implementation's kernel family: where a fit starts, and what profile() gives without a file.
  [[nodiscard]] Profile spec_profile(const Hardware& hw, const std::string& impl) const;
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

}  // namespace ringsim::models
