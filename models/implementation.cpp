#include "models/implementation.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "models/error.hpp"
#include "models/json_fields.hpp"
#include "models/strategy.hpp"

namespace ringsim::models {

namespace {

std::string family(std::string_view spec) {
  const auto colon = spec.find(':');
  return std::string(spec.substr(0, colon));
}

bool contains(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
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

bool is_commit(const std::string& s) {
  return s.size() == 40 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

}  // namespace

std::string layout_family(std::string_view spec) {
  auto f = family(spec);
  return f == "ring" ? std::string("contiguous") : f;
}
std::string mask_family(std::string_view spec) { return family(spec); }
std::string strategy_family(std::string_view spec) { return family(spec); }

const std::vector<std::string>& known_layout_families() {
  static const std::vector<std::string> v = {"contiguous",     "striped",        "zigzag",     "cyclic",
                                             "perm",           "bucket-striped", "bucket-rotated",
                                             "doc-zigzag",     "doc-zigzag-docmajor", "ptrr"};
  return v;
}

const std::vector<std::string>& known_mask_families() {
  static const std::vector<std::string> v = {"causal", "full",  "window", "docs",    "qkdrop",
                                             "hash",   "lsh",   "qkfile", "hashfile"};
  return v;
}

void check_known_layout(std::string_view spec) {
  if (!contains(known_layout_families(), layout_family(spec)))
    throw InputError({}, 0, "layout",
                     "unknown layout '" + std::string(spec) + "' (known: ring, " + join(known_layout_families()) + ")");
}

void check_known_mask(std::string_view spec) {
  if (!contains(known_mask_families(), mask_family(spec)))
    throw InputError({}, 0, "mask", "unknown mask '" + std::string(spec) + "' (known: " + join(known_mask_families()) + ")");
}

bool Implementation::runs_on(std::string_view kind) const noexcept { return contains(hardware_kinds, kind); }
bool Implementation::offers_layout(std::string_view spec) const noexcept {
  return contains(layouts, layout_family(spec));
}
bool Implementation::offers_mask(std::string_view spec) const noexcept { return contains(masks, mask_family(spec)); }
bool Implementation::offers_strategy(std::string_view spec) const noexcept {
  return contains(strategies, strategy_family(spec));
}

void Implementation::check_offers(std::string_view kind, std::string_view layout, std::string_view mask,
                                  std::string_view strategy) const {
  if (!runs_on(kind))
    throw InputError({}, 0, "impl",
                     "implementation " + name + " does not run on " + std::string(kind) + " hardware (it runs on " +
                         join(hardware_kinds) + ")");
  if (!offers_strategy(strategy))
    throw InputError({}, 0, "cp",
                     "implementation " + name + " does not offer strategy '" + std::string(strategy) +
                         "' (it offers " + join(strategies) + ")");
  if (!offers_layout(layout))
    throw InputError({}, 0, "layout",
                     "implementation " + name + " does not offer layout '" + std::string(layout) + "' (it offers " +
                         join(layouts) + ")");
  if (!offers_mask(mask))
    throw InputError({}, 0, "mask",
                     "implementation " + name + " does not offer mask '" + std::string(mask) + "' (it offers " +
                         join(masks) + ")");
}

Implementation Implementation::from_json(const nlohmann::json& j, const std::string& file) {
  JsonFields f(j, file);
  Implementation im;
  im.name = f.string("name");
  im.description = f.string("description");
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
  im.strategies = string_list(f, "strategies");
  for (const auto& st : im.strategies)
    if (!contains(Strategy::families(), st))
      throw InputError(file, 0, "strategies",
                       "unknown strategy '" + st + "' (known: " + join(Strategy::families()) + ")");
  im.notes = f.string_or("notes", "");
  im.protocol = MessageProtocol::from_json(f.find("protocol"), file);
  const auto* src = f.find("sources");
  if (!src || !src->is_array() || src->empty())
    throw InputError(file, 0, "sources", "an implementation must cite the code it describes (repo, path, commit)");
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
    im.sources.push_back(std::move(c));
  }
  return im;
}

Implementation Implementation::load_file(const std::string& path) { return from_json(read_json_file(path), path); }

}  // namespace ringsim::models
