#pragma once
// The kernel an implementation calls, and its earlier releases that call another: a library's
// kernel depends on its version, not only on the GPU (TransformerEngine's context parallelism ran
// through flash-attn only until its cuDNN fused attention gained it and became the Hopper
// default). An implementation file describes its newest release; "releases" lists the earlier ones
// whose differences change time, each with what changed and where that was read. A scenario names
// one as IMPL@RELEASE (Catalog::implementation), the newest when it names none.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/implementations/kernel_spec.hpp"
#include "models/io/code_source.hpp"

namespace ringsim::models {

class JsonFields;

// "kernel_model" (a file of configs/kernels/) and "kernel_model_from_compute_capability" ([{compute
// capability, kernel_model}], ascending: from that compute capability up, that kernel) of `f`'s object.
struct KernelChoice {
  std::optional<KernelSpec> kernel_model;
  std::vector<std::pair<std::int64_t, KernelSpec>> from_compute_capability;  // capability x 10
};
[[nodiscard]] KernelChoice kernel_choice_from_json(const JsonFields& f, const std::string& kernels_dir,
                                                   const std::string& prefix = "");

struct Release {
  std::string name;     // as the project tags it ("1.2")
  std::string date;     // its release date (YYYY-MM-DD)
  std::string changes;  // what differs from the next newer release, in what changes time
  std::vector<CodeSource> sources;
  KernelChoice kernel;  // its kernel choice, replacing the newer one's
};

// A release name's numeric components ("2.20.dev0" -> 2, 20, 0: a component's leading digits, 0
// without any); nullopt when its first component has no digit. Compared with zeros appended, so
// "2.20" and "2.20.dev0" are one version.
[[nodiscard]] std::optional<std::vector<std::int64_t>> release_version(std::string_view name);
// a < b, a == b, a > b: -1, 0, 1.
[[nodiscard]] int compare_versions(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) noexcept;

// The optional "releases" array (nullptr: none) of `file`: InputError naming the field for a
// missing or malformed entry, a name used twice, or a release that changes nothing.
[[nodiscard]] std::vector<Release> releases_from_json(const nlohmann::json* list, const std::string& file,
                                                      const std::string& kernels_dir);

}  // namespace ringsim::models
