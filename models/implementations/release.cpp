#include "models/implementations/release.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"
#include "models/io/names.hpp"

namespace ringsim::models {

KernelChoice kernel_choice_from_json(const JsonFields& f, const std::string& kernels_dir, const std::string& prefix) {
  const auto& file = f.file();
  KernelChoice out;
  if (const auto* km = f.find("kernel_model")) {
    if (!km->is_string() || km->get<std::string>().empty())
      throw InputError(file, 0, prefix + "kernel_model", "expected the name of a kernel in configs/kernels/");
    out.kernel_model = KernelSpec::load_named(kernels_dir, km->get<std::string>(), file, prefix + "kernel_model");
  }
  if (const auto* list = f.find("kernel_model_from_compute_capability")) {
    const std::string field = prefix + "kernel_model_from_compute_capability";
    if (!list->is_array() || list->empty())
      throw InputError(file, 0, field, "expected a list of {\"compute_capability\": 9.0, \"kernel_model\": NAME}");
    if (!out.kernel_model) throw InputError(file, 0, field, "needs a kernel_model for the GPUs below the first entry");
    for (const auto& e : *list) {
      if (!e.is_object() || !e.contains("compute_capability") || !e["compute_capability"].is_number() ||
          !e.contains("kernel_model") || !e["kernel_model"].is_string() || e.size() != 2)
        throw InputError(file, 0, field, "expected entries {\"compute_capability\": 9.0, \"kernel_model\": NAME} and nothing else");
      const double cc = e["compute_capability"].get<double>();
      if (!(cc >= 1 && cc < 100)) throw InputError(file, 0, field + ".compute_capability", "expected a compute capability in [1, 100)");
      const auto cc10 = static_cast<std::int64_t>(std::lround(cc * 10));
      if (!out.from_compute_capability.empty() && cc10 <= out.from_compute_capability.back().first)
        throw InputError(file, 0, field, "expected compute capabilities in ascending order");
      out.from_compute_capability.emplace_back(
          cc10, KernelSpec::load_named(kernels_dir, e["kernel_model"].get<std::string>(), file, field + ".kernel_model"));
    }
  }
  return out;
}

std::vector<Release> releases_from_json(const nlohmann::json* list, const std::string& file, const std::string& kernels_dir) {
  std::vector<Release> out;
  if (!list) return out;
  if (!list->is_array() || list->empty())
    throw InputError(file, 0, "releases", "expected a non-empty list of {name, date, changes, sources, kernel_model, ...}");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string at = "releases[" + std::to_string(i) + "].";
    const auto& e = (*list)[i];
    if (!e.is_object()) throw InputError(file, 0, "releases[" + std::to_string(i) + "]", "expected an object");
    const JsonFields f(e, file);
    Release r;
    r.name = f.string("name");
    check_catalog_name(r.name, at + "name", "release");
    for (const auto& other : out)
      if (other.name == r.name) throw InputError(file, 0, at + "name", "release '" + r.name + "' named twice");
    r.date = f.string("date");
    if (r.date.size() != 10 || r.date[4] != '-' || r.date[7] != '-')
      throw InputError(file, 0, at + "date", "expected YYYY-MM-DD, got '" + r.date + "'");
    r.changes = f.string("changes");
    r.sources = code_sources_from_json(f.find("sources"), file, "a release");
    r.kernel = kernel_choice_from_json(f, kernels_dir, at);
    // What a release may change is what changes time and has a seam here: the kernel it calls.
    if (!r.kernel.kernel_model)
      throw InputError(file, 0, at + "kernel_model", "a release names the kernel it calls (what differs from the newer one)");
    f.reject_unread("release");
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<std::vector<std::int64_t>> release_version(std::string_view name) {
  std::vector<std::int64_t> out;
  std::size_t start = 0;
  while (start <= name.size()) {
    const auto end = std::min(name.find('.', start), name.size());
    std::int64_t v = 0;
    std::size_t digits = 0;
    // At most 9 digits a component: a release number, not an arbitrary integer.
    for (std::size_t k = start; k < end && digits < 9 && name[k] >= '0' && name[k] <= '9'; ++k, ++digits)
      v = v * 10 + (name[k] - '0');
    if (out.empty() && digits == 0) return std::nullopt;
    out.push_back(v);
    if (end == name.size() || out.size() >= 8) break;
    start = end + 1;
  }
  return out;
}

int compare_versions(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) noexcept {
  for (std::size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
    const std::int64_t x = k < a.size() ? a[k] : 0, y = k < b.size() ? b[k] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

}  // namespace ringsim::models
