#include "models/catalog/catalog.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "models/cost/profile_params.hpp"
#include "models/families/attention_cost.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "models/io/json_fields.hpp"
#include "models/io/names.hpp"

namespace ringsim::models {

namespace fs = std::filesystem;

std::string Catalog::default_root() {
  if (const char* env = std::getenv("RINGSIM_DATA_DIR"); env && *env) return env;
  return RINGSIM_SOURCE_ROOT;
}

Catalog::Catalog(std::string root) : root_(std::move(root)) {}

std::vector<std::string> Catalog::names_in(const std::string& sub) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(root_) / "configs" / sub, ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> Catalog::hardware_names() const { return names_in("hardware"); }
std::vector<std::string> Catalog::model_names() const { return names_in("models"); }
std::vector<std::string> Catalog::implementation_names() const { return names_in("implementations"); }

namespace {
}  // namespace

Hardware Catalog::hardware(const std::string& name) const {
  check_catalog_name(name, "hardware", "hardware");
  const auto path = fs::path(root_) / "configs" / "hardware" / (name + ".json");
  if (!fs::exists(path))
    throw InputError({}, 0, "hardware", "unknown hardware '" + name + "' (known: " + join_list(hardware_names()) + ")");
  auto hw = Hardware::load_file(path.string());
  // Measured ring hops, when probes of this hardware were fitted (ringsim calibrate --from-probes).
  if (const auto links = fs::path(root_) / "configs" / "links" / (name + ".json"); fs::exists(links)) {
    hw.point_to_point = PointToPoint::load_file(links.string());
    if (hw.point_to_point->hardware != name)
      throw InputError(links.string(), 0, "hardware",
                       "expected \"" + name + "\" (the file's name), got \"" + hw.point_to_point->hardware + "\"");
  }
  return hw;
}

ModelConfig Catalog::model(const std::string& name) const {
  if (name.starts_with("attn:")) return ModelConfig::attention_pseudo(name);
  check_catalog_name(name, "model", "model");
  const auto path = fs::path(root_) / "configs" / "models" / (name + ".json");
  if (!fs::exists(path))
    throw InputError({}, 0, "model",
                     "unknown model '" + name + "' (known: " + join_list(model_names()) + ", or attn:HQ:HKV:D)");
  return ModelConfig::load_file(path.string());
}

const std::vector<Implementation>& Catalog::implementations() const {
  const std::lock_guard lock(impls_->mutex);
  if (!impls_->all) {
    std::vector<Implementation> all;
    for (const auto& name : implementation_names()) {
      const auto path = (fs::path(root_) / "configs" / "implementations" / (name + ".json")).string();
      all.push_back(Implementation::load_file(path, (fs::path(root_) / "configs").string()));
      if (all.back().name != name)
        throw InputError(path, 0, "name", "expected \"" + name + "\" (the file's name), got \"" + all.back().name + "\"");
      // The kernel family is looked up in the cost model's registry here, where the file is known.
      const auto& families = attention_cost_families();
      if (std::find(families.begin(), families.end(), all.back().kernel) == families.end())
        throw InputError(path, 0, "kernel", "unknown kernel family '" + all.back().kernel + "' (known: " + join_list(families) + ")");
    }
    impls_->all = std::move(all);
  }
  return *impls_->all;
}

Implementation Catalog::implementation(const std::string& name) const {
  // NAME@RELEASE: an earlier release of NAME (models/implementations/release.hpp).
  if (const auto at = name.find('@'); at != std::string::npos) {
    const auto release = name.substr(at + 1);
    check_catalog_name(release, "impl", "release");
    return implementation(name.substr(0, at)).with_release(release);
  }
  check_catalog_name(name, "impl", "implementation");
  for (const auto& im : implementations())
    if (im.name == name) return im;
  throw InputError({}, 0, "impl", "unknown implementation '" + name + "' (known: " + join_list(implementation_names()) + ")");
}

Implementation Catalog::default_implementation(const Hardware& hw, const MaskSpec& mask, const Strategy& cp,
                                               const std::vector<LayoutSpec>& layouts, bool production_only,
                                               RunPhase phase) const {
  const Implementation* best = nullptr;
  auto rank = [](const Implementation& im) { return std::pair{static_cast<int>(im.maturity), im.preference}; };
  for (const auto& im : implementations()) {
    if (production_only && im.maturity != Maturity::Production) continue;
    if (!im.runs_phase(phase)) continue;
    if (!im.runs_on(hw.kind) || !im.offers_mask(mask) || !im.offers_strategy(cp)) continue;
    if (!std::all_of(layouts.begin(), layouts.end(), [&](const LayoutSpec& l) { return im.offers(hw.kind, l, mask, cp); }))
      continue;
    if (!best || rank(im) < rank(*best)) best = &im;
  }
  if (!best)
    throw InputError({}, 0, "impl",
                     std::string(production_only ? "no production library" : "no implementation") + " runs " +
                         mask.family_name() + " attention" +
                         (layouts.empty() ? std::string() : " with layout(s) " + join_texts(layouts)) + " and strategy " +
                         cp.text() + (phase == RunPhase::Train ? std::string() : std::string(" for ") + to_string(phase)) +
                         " on " + hw.name + " (" + hw.kind + "); known: " + join_list(implementation_names()));
  return *best;
}

std::string Catalog::choose_implementation(const ScenarioSpec& spec, const Hardware& hw,
                                           const std::vector<LayoutSpec>& layouts, bool production_only) const {
  const auto fixed = profile_implementation(spec.profile);
  if (!spec.impl.empty() && fixed && *fixed != spec.impl)
    throw InputError({}, 0, "profile",
                     "profile '" + spec.profile + "' is for implementation " + *fixed + ", not " + spec.impl);
  if (!spec.impl.empty()) return implementation(spec.impl).name;
  if (fixed) return implementation(*fixed).name;
  return default_implementation(hw, effective_mask(spec), spec.cp, layouts, production_only, spec.phase).name;
}

std::optional<std::string> Catalog::profile_implementation(const std::string& name_or_path) const {
  if (name_or_path.ends_with(".json")) {
    check_path(name_or_path, "profile");
    if (!fs::exists(name_or_path)) return std::nullopt;  // profile() reports it
    const auto j = read_json_file(name_or_path);
    if (j.is_object() && j.contains("implementation") && j["implementation"].is_string()) {
      const auto impl = j["implementation"].get<std::string>();
      // An unknown implementation is the profile file's mistake: named with its file and field.
      try {
        (void)implementation(impl);
      } catch (const InputError& e) {
        throw InputError(name_or_path, 0, "implementation", e.message());
      }
      return impl;
    }
    return std::nullopt;
  }
  if (const auto slash = name_or_path.find('/'); slash != std::string::npos) {
    check_profile_name(name_or_path);
    return name_or_path.substr(0, slash);
  }
  return std::nullopt;
}

namespace {

// configs/profiles/IMPL/HARDWARE.json: an implementation's own profile for a hardware.
fs::path own_profile_path(const std::string& root, const std::string& impl, const Hardware& hw) {
  return fs::path(root) / "configs" / "profiles" / impl / (hw.name + ".json");
}


// A profile file's parameter that the implementation's kernel family does not read would be
// silently ignored while the output says "calibrated": refused, naming the families that read it.
void check_family_fields(const nlohmann::json& j, const std::string& file, const Profile& base, const std::string& impl) {
  if (!j.is_object()) return;  // from_json says what is wrong
  for (const auto& [key, value] : j.items()) {
    if (!find_profile_parameter(key) || base.reads(key)) continue;
    std::string users;
    for (const auto& name : attention_cost_families()) {
      const auto other = make_attention_cost(name);
      const auto own = other->own_parameters();
      if (std::find(own.begin(), own.end(), key) != own.end()) users += (users.empty() ? "" : ", ") + name;
    }
    throw InputError(file, 0, key,
                     "implementation " + impl + " runs kernel family " + base.kernel_family +
                         ", which does not read this parameter (it belongs to " +
                         (users.empty() ? std::string("no family") : "the " + users + " famil" + (users.find(',') == std::string::npos ? "y" : "ies")) + ")");
  }
}

}  // namespace

Profile Catalog::spec_profile(const Hardware& hw, const std::string& impl) const {
  Profile base = Profile::spec_default(hw);
  base.implementation = impl;
  base.name = impl + "/" + hw.name + "-spec";
  // The profile holds the parameters of the implementation's kernel family (and the common ones).
  const auto family = make_attention_cost(implementation(impl).kernel);
  base.kernel_family = std::string(family->family());
  for (const auto& n : family->own_parameters()) base.family_parameters.emplace_back(n);
  return base;
}

Profile Catalog::profile(const std::string& name_or_path, const Hardware& hw, const std::string& impl) const {
  const Profile base = spec_profile(hw, impl);
  const fs::path dir = fs::path(root_) / "configs" / "profiles";
  fs::path path;
  if (name_or_path.empty()) {
    path = own_profile_path(root_, impl, hw);
    if (!fs::exists(path)) {
      // A release without a profile of its own on this GPU calls the kernel the newest release
      // calls there: the newest release's profile.
      if (const auto at = impl.find('@'); at != std::string::npos) {
        const auto newest = impl.substr(0, at);
        const auto release = implementation(impl), newest_release = implementation(newest);
        const auto* mine = release.kernel_for(hw.compute_capability);
        const auto* theirs = newest_release.kernel_for(hw.compute_capability);
        if ((mine == nullptr) == (theirs == nullptr) && (!mine || mine->name == theirs->name)) {
          Profile p = profile("", hw, newest);
          p.implementation = impl;
          return p;
        }
      }
      return base;
    }
  } else if (name_or_path.ends_with(".json")) {
    check_path(name_or_path, "profile");
    path = name_or_path;
  } else if (name_or_path.find('/') != std::string::npos) {
    check_profile_name(name_or_path);
    path = dir / (name_or_path + ".json");
  } else {
    check_profile_name(name_or_path);
    path = dir / impl / (name_or_path + ".json");
  }
  if (!fs::exists(path))
    throw InputError({}, 0, "profile", "no profile '" + name_or_path + "' for implementation " + impl + " (looked for " +
                                           path.string() + ")");
  const auto json = read_json_file(path.string());
  check_family_fields(json, path.string(), base, impl);
  Profile p = Profile::from_json(json, path.string(), base);
  if (!p.implementation.empty() && p.implementation != impl)
    throw InputError(path.string(), 0, "implementation",
                     "profile " + p.name + " is for implementation " + p.implementation + ", not " + impl);
  p.implementation = impl;
  return p;
}

bool Catalog::has_profile(const Hardware& hw, const std::string& impl) const {
  std::error_code ec;
  return fs::is_regular_file(own_profile_path(root_, impl, hw), ec);
}

Profile Catalog::profile(const std::string& name_or_path, const Hardware& hw) const {
  const auto fixed = profile_implementation(name_or_path);
  return profile(name_or_path, hw, fixed ? *fixed : default_implementation(hw, MaskSpec{}, Strategy{}).name);
}

}  // namespace ringsim::models
