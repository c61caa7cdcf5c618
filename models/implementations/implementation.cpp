#include "models/implementations/implementation.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "models/io/json_fields.hpp"
#include "models/implementations/strategy.hpp"

namespace ringsim::models {

namespace {

bool contains(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<std::string> string_list(const JsonFields& f, const char* key) {
  const auto* v = f.find(key);
  if (!v || !v->is_array() || v->empty())
    throw InputError(f.file(), 0, key, "expected a non-empty array of strings");
  std::vector<std::string> out;
  for (const auto& x : *v) {
    if (!x.is_string() || x.get<std::string>().empty())
      throw InputError(f.file(), 0, key, "expected a non-empty array of strings");
    out.push_back(x.get<std::string>());
  }
  return out;
}

}  // namespace

bool Implementation::runs_on(std::string_view kind) const noexcept { return contains(hardware_kinds, kind); }

bool Implementation::runs_precision(std::string_view precision) const noexcept {
  return contains(precisions, precision);
}

std::string Implementation::precisions_text() const { return join_list(precisions); }

bool Implementation::runs_phase(RunPhase phase) const noexcept {
  return std::find(phases.begin(), phases.end(), phase) != phases.end();
}

std::string Implementation::phases_text() const {
  std::string out;
  for (std::size_t i = 0; i < phases.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == phases.size() ? " and " : ", ") + to_string(phases[i]);
  return out;
}

void Implementation::check_phase(RunPhase phase) const {
  if (runs_phase(phase)) return;
  const bool train = phase == RunPhase::Train;
  throw InputError({}, 0, "impl",
                   "implementation " + name + " runs " + phases_text() + " only, not " +
                       (train ? std::string("a training step") : std::string(to_string(phase))) + ": " +
                       (train ? "predict it with --phase prefill or decode, or name a training library with --impl"
                              : "name another implementation with --impl") +
                       " (configs/implementations/" + name + ".json says why in its notes)");
}
bool Implementation::offers_layout(const LayoutSpec& layout) const noexcept {
  return contains(layouts, layout.family_name());
}
bool Implementation::offers_mask(const MaskSpec& mask) const noexcept { return contains(masks, mask.family_name()); }
bool Implementation::offers_strategy(const Strategy& strategy) const noexcept {
  return contains(strategies, strategy.family_name());
}

void Implementation::check_offers(std::string_view kind, const LayoutSpec& layout, const MaskSpec& mask,
                                  const Strategy& strategy) const {
  if (!runs_on(kind))
    throw InputError({}, 0, "impl",
                     "implementation " + name + " does not run on " + std::string(kind) + " hardware (it runs on " +
                         join_list(hardware_kinds) + ")");
  if (!offers_strategy(strategy))
    throw InputError({}, 0, "cp",
                     "implementation " + name + " does not offer strategy '" + strategy.text() + "' (it offers " +
                         join_list(strategies) + ")");
  if (!offers_layout(layout))
    throw InputError({}, 0, "layout",
                     "implementation " + name + " does not offer layout '" + layout.text() + "' (it offers " +
                         join_list(layouts) + ")");
  if (!offers_mask(mask))
    throw InputError({}, 0, "mask",
                     "implementation " + name + " does not offer mask '" + mask.text() + "' (it offers " + join_list(masks) +
                         ")");
  // A library's steps exist per (mask, layout): zigzag and stripe rings are causal only, and
  // packed documents run as varlen calls on the layouts its varlen functions take.
  if (!ring_runs(layout, mask, strategy))
    throw InputError({}, 0, "layout",
                     "implementation " + name + " does not offer layout '" + layout.text() + "' with mask '" +
                         mask.text() + "' on a ring (it offers " + protocol.ring_steps.offered() + ")");
}

bool Implementation::ring_runs(const LayoutSpec& layout, const MaskSpec& mask, const Strategy& strategy) const {
  const auto& steps = protocol.ring_steps;
  return steps.empty() || !strategy.has_ring() || steps.runs(mask.family_name(), layout.family_name());
}

bool Implementation::offers(std::string_view kind, const LayoutSpec& layout, const MaskSpec& mask,
                            const Strategy& strategy) const noexcept {
  return runs_on(kind) && offers_strategy(strategy) && offers_layout(layout) && offers_mask(mask) &&
         ring_runs(layout, mask, strategy);
}

std::string_view to_string(Maturity m) noexcept {
  switch (m) {
    case Maturity::Production: return "production";
    case Maturity::Research: return "research";
    case Maturity::Reference: return "reference";
  }
  return "production";
}

Implementation Implementation::from_json(const nlohmann::json& j, const std::string& file,
                                         const std::string& configs_dir) {
  const auto kernels_dir = (std::filesystem::path(configs_dir) / "kernels").string();
  JsonFields f(j, file);
  Implementation im;
  im.name = f.string("name");
  im.description = f.string("description");
  {
    const auto m = f.string("maturity");
    if (m == "production") im.maturity = Maturity::Production;
    else if (m == "research") im.maturity = Maturity::Research;
    else if (m == "reference") im.maturity = Maturity::Reference;
    else throw InputError(file, 0, "maturity", "expected production, research or reference, got '" + m + "'");
  }
  if (const auto p = f.optional_number("preference")) {
    if (*p < 0 || *p > 1e6 || *p != static_cast<double>(static_cast<std::int64_t>(*p)))
      throw InputError(file, 0, "preference", "expected an integer in [0, 1000000]");
    im.preference = static_cast<std::int64_t>(*p);
  }
  im.kernel = f.string("kernel");
  im.hardware_kinds = string_list(f, "hardware_kinds");
  for (const auto& k : im.hardware_kinds)
    if (k != "gpu" && k != "tpu") throw InputError(file, 0, "hardware_kinds", "expected \"gpu\" or \"tpu\", got '" + k + "'");
  im.layouts = string_list(f, "layouts");
  im.masks = string_list(f, "masks");
  // Unknown names are this file's mistakes: located here rather than when a scenario asks.
  for (const auto& l : im.layouts)
    if (!contains(known_layout_families(), l == "ring" ? std::string("contiguous") : l))
      throw InputError(file, 0, "layout", "unknown layout '" + l + "' (known: ring, " + join_list(known_layout_families()) + ")");
  for (const auto& m : im.masks)
    if (!contains(known_mask_families(), m))
      throw InputError(file, 0, "mask", "unknown mask '" + m + "' (known: " + join_list(known_mask_families()) + ")");
  im.strategies = string_list(f, "strategies");
  for (const auto& st : im.strategies)
    if (!contains(Strategy::families(), st))
      throw InputError(file, 0, "strategies",
                       "unknown strategy '" + st + "' (known: " + join_list(Strategy::families()) + ")");
  im.precisions = string_list(f, "precisions");
  for (const auto& p : im.precisions)
    if (p != "bf16" && p != "fp32" && p != "fp8")
      throw InputError(file, 0, "precisions", "expected \"bf16\", \"fp32\" or \"fp8\", got '" + p + "'");
  if (f.find("phases")) {
    im.phases.clear();
    for (const auto& name : string_list(f, "phases")) {
      const auto phase = [&] {
        try {
          return parse_phase(name);
        } catch (const InputError&) {
          throw InputError(file, 0, "phases", "expected \"train\", \"prefill\" or \"decode\", got '" + name + "'");
        }
      }();
      if (std::find(im.phases.begin(), im.phases.end(), phase) != im.phases.end())
        throw InputError(file, 0, "phases", "'" + name + "' named twice");
      im.phases.push_back(phase);
    }
  }
  im.notes = f.string_or("notes", "");
  if (const auto loss = f.string_or("loss", ""); !loss.empty()) im.loss = parse_loss_kernel(loss, file);
  im.protocol = Protocol::from_json(f.find("protocol"), file, (std::filesystem::path(configs_dir) / "ring_steps").string());
  im.sources = code_sources_from_json(f.find("sources"), file, "an implementation");
  {
    auto choice = kernel_choice_from_json(f, kernels_dir);
    im.kernel_model = std::move(choice.kernel_model);
    im.kernel_from_compute_capability = std::move(choice.from_compute_capability);
  }
  im.release = f.string_or("release", "");
  im.releases = releases_from_json(f.find("releases"), file, kernels_dir);
  if (!im.releases.empty() && im.release.empty())
    throw InputError(file, 0, "release", "a file with earlier releases names its own (the newest): \"release\": NAME");
  for (const auto& r : im.releases)
    if (r.name == im.release) throw InputError(file, 0, "releases", "release '" + r.name + "' is the file's own");
  im.first_release = f.string_or("first_release", "");
  if (!im.release.empty()) {
    const auto newest = release_version(im.release);
    if (!newest) throw InputError(file, 0, "release", "expected a version (digits first: 2.20.dev0), got '" + im.release + "'");
    for (std::size_t i = 0; i < im.releases.size(); ++i) {
      const auto v = release_version(im.releases[i].name);
      if (!v || compare_versions(*v, *newest) >= 0)
        throw InputError(file, 0, "releases[" + std::to_string(i) + "].name",
                         "expected a version older than the file's own release " + im.release + ", got '" +
                             im.releases[i].name + "'");
    }
  }
  if (!im.first_release.empty()) {
    const auto first = release_version(im.first_release);
    if (im.release.empty() || !first || compare_versions(*first, *release_version(im.release)) > 0)
      throw InputError(file, 0, "first_release",
                       "expected a version no newer than the file's own \"release\", got '" + im.first_release + "'");
    for (const auto& r : im.releases)
      if (compare_versions(*release_version(r.name), *first) < 0)
        throw InputError(file, 0, "first_release", "release '" + r.name + "' is listed, older than " + im.first_release);
  }
  if (im.kernel == "flash") {
    if (!im.kernel_model) throw InputError(file, 0, "kernel_model", "kernel family flash needs the kernel it times");
    // A training step's ring rounds are timed from the library's step calls (a prefill's calls are
    // composed by models/inference/prefill.cpp whatever the library).
    for (const auto& st : im.strategies)
      if (im.runs_phase(RunPhase::Train) && Strategy::family_has_ring(st) && im.protocol.ring_steps.empty())
        throw InputError(file, 0, "protocol.ring_steps",
                         "kernel family flash on strategy " + st + " needs the calls of each ring step");
  }
  f.reject_unread("implementation file");
  return im;
}

Implementation Implementation::with_release(const std::string& release_name) const {
  if (release_name == release && !release.empty()) {
    Implementation out = *this;
    out.name = name + "@" + release;
    return out;
  }
  for (const auto& r : releases)
    if (r.name == release_name) {
      Implementation out = *this;
      out.name = name + "@" + r.name;
      out.release = r.name;
      out.kernel_model = r.kernel.kernel_model;
      out.kernel_from_compute_capability = r.kernel.from_compute_capability;
      out.notes = "release " + r.name + " (" + r.date + "): " + r.changes + (notes.empty() ? "" : " " + notes);
      out.sources.insert(out.sources.begin(), r.sources.begin(), r.sources.end());
      out.releases.clear();
      return out;
    }
  std::string known = release.empty() ? std::string() : release + " (the newest)";
  for (const auto& r : releases) known += (known.empty() ? "" : ", ") + r.name;
  const auto refuse = [&](const std::string& why) -> Implementation {
    throw InputError({}, 0, "impl",
                     "implementation " + name + " has no release '" + release_name + "'" + why + " (" +
                         (known.empty() ? std::string("it names no releases: use ") + name : "known: " + known) + ")");
  };
  const auto asked = release_version(release_name);
  if (release.empty() || !asked) return refuse("");
  if (!first_release.empty() && compare_versions(*asked, *release_version(first_release)) < 0)
    return refuse(": it first appears in " + first_release);
  if (compare_versions(*asked, *release_version(release)) > 0) return refuse(": newer than the newest this file describes");
  // The oldest listed release at or above the version stands for it; none: the newest.
  const Release* covering = nullptr;
  for (const auto& r : releases)
    if (compare_versions(*release_version(r.name), *asked) >= 0 &&
        (!covering || compare_versions(*release_version(r.name), *release_version(covering->name)) < 0))
      covering = &r;
  Implementation out = with_release(covering ? covering->name : release);
  out.notes = "release " + release_name + " runs as " + (covering ? covering->name : release + " (the newest)") +
              " (nothing listed between them changes time). " + out.notes;
  return out;
}

Implementation Implementation::load_file(const std::string& path, const std::string& configs_dir) {
  return from_json(read_json_file(path), path, configs_dir);
}

const KernelSpec* Implementation::kernel_for(std::int64_t compute_capability) const noexcept {
  const KernelSpec* chosen = kernel_model ? &*kernel_model : nullptr;
  if (compute_capability > 0)
    for (const auto& [from, spec] : kernel_from_compute_capability)
      if (compute_capability >= from) chosen = &spec;
  return chosen;
}

void Implementation::select_kernel_for(std::int64_t compute_capability) {
  if (const KernelSpec* k = kernel_for(compute_capability); k && (!kernel_model || k != &*kernel_model)) kernel_model = *k;
}

}  // namespace ringsim::models
