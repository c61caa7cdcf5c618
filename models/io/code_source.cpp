#include "models/io/code_source.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"

namespace ringsim::models {

namespace {

bool is_commit(const std::string& s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](unsigned char ch) { return std::isxdigit(ch) != 0; });
}

}  // namespace

std::vector<CodeSource> code_sources_from_json(const nlohmann::json* src, const std::string& file,
                                               const std::string& what_cites) {
  if (!src || !src->is_array() || src->empty())
    throw InputError(file, 0, "sources", what_cites + " must cite the code it describes (repo, path, commit)");
  std::vector<CodeSource> out;
  for (std::size_t i = 0; i < src->size(); ++i) {
    const std::string at = "sources[" + std::to_string(i) + "]";
    JsonFields s((*src)[i], file);
    CodeSource c;
    try {
      c.repo = s.string("repo");
      c.path = s.string("path");
      c.commit = s.string("commit");
      c.what = s.string("what");
    } catch (const InputError& e) {
      throw InputError(file, 0, at + "." + e.field(), e.message());
    }
    if (!is_commit(c.commit)) throw InputError(file, 0, at + ".commit", "expected a 40-digit hexadecimal commit");
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ringsim::models
