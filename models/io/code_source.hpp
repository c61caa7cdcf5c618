#pragma once
// Where a statement about an implementation or a kernel was read: repository, path and commit.
// Implementations (configs/implementations/) and kernels (configs/kernels/) cite their code the
// same way.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace ringsim::models {

struct CodeSource {
  std::string repo;    // owner/name on GitHub
  std::string path;    // file inside the repository
  std::string commit;  // 40 hex digits
  std::string what;    // what was read there
};

// The non-empty "sources" array `j` (nullptr: missing) of `file`; InputError naming the field
// ("sources[i].commit") for anything but {repo, path, commit (40 hex digits), what}.
[[nodiscard]] std::vector<CodeSource> code_sources_from_json(const nlohmann::json* j, const std::string& file,
                                                             const std::string& what_cites);

}  // namespace ringsim::models
