#include "calibration/trace/kernel_classes.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"

namespace ringsim::calibration {

using models::InputError;

namespace {

std::vector<std::string> strings(const nlohmann::json& rule, const char* key, const std::string& file,
                                 const std::string& where) {
  std::vector<std::string> out;
  const auto it = rule.find(key);
  if (it == rule.end()) return out;
  if (!it->is_array()) throw InputError(file, 0, where + "." + key, "expected an array of strings");
  for (const auto& s : *it) {
    if (!s.is_string() || s.get<std::string>().empty())
      throw InputError(file, 0, where + "." + key, "expected an array of non-empty strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

std::string_view kind_name(GpuOp::Kind k) {
  switch (k) {
    case GpuOp::Kind::Memcpy: return "memcpy";
    case GpuOp::Kind::Memset: return "memset";
    case GpuOp::Kind::Kernel: break;
  }
  return "kernel";
}

}  // namespace

std::string KernelClasses::default_path(const std::string& root) {
  return (std::filesystem::path(root) / "configs" / "trace" / "kernel_classes.json").string();
}

KernelClasses KernelClasses::load(const std::string& path) {
  const nlohmann::json doc = models::read_json_file(path);
  const auto rules = doc.find("rules");
  if (!doc.is_object() || rules == doc.end() || !rules->is_array() || rules->empty())
    throw InputError(path, 0, "rules", "expected a non-empty array of {class, patterns | kinds | collectives}");
  for (const auto& [key, value] : doc.items())
    if (key != "rules" && key != "description" && key != "sources")
      throw InputError(path, 0, key, "unknown field (expected rules, description, sources)");
  KernelClasses k;
  for (std::size_t i = 0; i < rules->size(); ++i) {
    const auto& r = (*rules)[i];
    const std::string where = "rules[" + std::to_string(i) + "]";
    if (!r.is_object()) throw InputError(path, 0, where, "expected an object");
    for (const auto& [key, value] : r.items())
      if (key != "class" && key != "patterns" && key != "kinds" && key != "collectives" && key != "source")
        throw InputError(path, 0, where + "." + key, "unknown field (expected class, patterns, kinds, collectives, source)");
    Rule rule;
    const auto cls = r.find("class");
    const auto named = cls != r.end() && cls->is_string()
                           ? std::find(kOpClassNames.begin(), kOpClassNames.end(), cls->get<std::string>())
                           : kOpClassNames.end();
    if (named == kOpClassNames.end())
      throw InputError(path, 0, where + ".class",
                       "expected one of attention_fwd, attention_bwd, attention_decode, p2p, collective, gemm, memory, other");
    rule.cls = static_cast<OpClass>(named - kOpClassNames.begin());
    rule.kinds = strings(r, "kinds", path, where);
    for (const auto& kind : rule.kinds)
      if (kind != "kernel" && kind != "memcpy" && kind != "memset")
        throw InputError(path, 0, where + ".kinds", "expected kernel, memcpy or memset, got '" + kind + "'");
    rule.collectives = strings(r, "collectives", path, where);
    const auto patterns = strings(r, "patterns", path, where);
    for (std::size_t j = 0; j < patterns.size(); ++j) {
      const std::string& p = patterns[j];
      try {
        rule.patterns.push_back(NamePattern::compile(p));
      } catch (const std::invalid_argument& e) {
        // The pattern quoted whole only when short: a hostile one may be 4096 characters.
        const std::string shown = p.size() > 80 ? p.substr(0, 77) + "..." : p;
        throw InputError(path, 0, where + ".patterns",
                         "pattern " + std::to_string(j) + " '" + shown + "' is not a supported regular expression: " + e.what() +
                             " (docs/traces.md: the patterns a rule may use)");
      }
    }
    if (rule.kinds.empty() && rule.collectives.empty() && rule.patterns.empty())
      throw InputError(path, 0, where, "a rule needs patterns, kinds or collectives");
    k.rules_.push_back(std::move(rule));
  }
  return k;
}

OpClass KernelClasses::classify(const GpuOp& op) const {
  const std::string key = std::string(kind_name(op.kind)) + '\n' + op.collective.str() + '\n' + op.name.str();
  if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
  OpClass found = OpClass::Other;
  for (const Rule& r : rules_) {
    const bool kind = std::find(r.kinds.begin(), r.kinds.end(), kind_name(op.kind)) != r.kinds.end();
    const bool coll = !op.collective.empty() &&
                      std::find(r.collectives.begin(), r.collectives.end(), op.collective) != r.collectives.end();
    const bool name = std::any_of(r.patterns.begin(), r.patterns.end(), [&](const NamePattern& p) { return p.search(op.name.str()); });
    if (kind || coll || name) {
      found = r.cls;
      break;
    }
  }
  memo_.emplace(key, found);
  return found;
}

}  // namespace ringsim::calibration
