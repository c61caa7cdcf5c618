#include "models/workload/layout_spec.hpp"

#include <algorithm>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {

namespace {

struct FamilyName {
  std::string_view name;
  LayoutFamily family;
  bool takes_parameter;
};

constexpr FamilyName kFamilies[] = {
    {"contiguous", LayoutFamily::Contiguous, false},       {"striped", LayoutFamily::Striped, false},
    {"zigzag", LayoutFamily::Zigzag, false},               {"cyclic", LayoutFamily::Cyclic, true},
    {"perm", LayoutFamily::Permutation, true},             {"bucket-striped", LayoutFamily::BucketStriped, false},
    {"bucket-rotated", LayoutFamily::BucketRotated, false}, {"doc-zigzag", LayoutFamily::DocZigzag, false},
    {"doc-zigzag-docmajor", LayoutFamily::DocZigzagDocMajor, false}, {"ptrr", LayoutFamily::Ptrr, true},
};

}  // namespace

const std::vector<std::string>& known_layout_families() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> names;
    for (const auto& f : kFamilies) names.emplace_back(f.name);
    return names;
  }();
  return v;
}

LayoutSpec LayoutSpec::parse(std::string_view text) {
  LayoutSpec l;
  l.text_ = std::string(text);
  const auto colon = text.find(':');
  auto name = text.substr(0, colon);
  if (name == "ring") name = "contiguous";  // the contiguous layout's other name
  const auto* f = std::find_if(std::begin(kFamilies), std::end(kFamilies), [&](const FamilyName& x) { return x.name == name; });
  if (f == std::end(kFamilies))
    throw InputError({}, 0, "layout",
                     "unknown layout '" + l.text_ + "' (known: ring, " + join_list(known_layout_families()) + ")");
  l.family_ = f->family;
  l.family_name_ = std::string(f->name);
  const bool has_arg = colon != std::string_view::npos;
  const auto arg = has_arg ? text.substr(colon + 1) : std::string_view{};
  if (has_arg && !f->takes_parameter)
    throw InputError({}, 0, "layout", l.family_name_ + " takes no parameter, got '" + l.text_ + "'");
  switch (l.family_) {
    case LayoutFamily::Cyclic:
      if (!has_arg) throw InputError({}, 0, "layout", "cyclic needs a stripe width: cyclic:W");
      l.width_ = parse_int(arg, "layout");
      if (l.width_ <= 0) throw InputError({}, 0, "layout", "cyclic stripe width must be positive, got " + std::string(arg));
      break;
    case LayoutFamily::Permutation:
      if (arg.empty()) throw InputError({}, 0, "layout", "perm needs a file: perm:FILE");
      l.file_ = std::string(arg);
      break;
    case LayoutFamily::Ptrr:
      if (has_arg) l.block_ = parse_positive_int(arg, "layout");
      break;
    default: break;
  }
  return l;
}

bool LayoutSpec::from_mask() const noexcept {
  return family_ == LayoutFamily::BucketStriped || family_ == LayoutFamily::BucketRotated;
}

bool LayoutSpec::from_documents() const noexcept {
  return family_ == LayoutFamily::DocZigzag || family_ == LayoutFamily::DocZigzagDocMajor ||
         family_ == LayoutFamily::Ptrr;
}

bool LayoutSpec::is_permutation() const noexcept {
  return family_ == LayoutFamily::Permutation || from_mask() || from_documents();
}

std::vector<LayoutSpec> parse_layouts(const std::vector<std::string>& texts) {
  std::vector<LayoutSpec> out;
  out.reserve(texts.size());
  for (const auto& t : texts) out.push_back(LayoutSpec::parse(t));
  return out;
}

std::string join_texts(const std::vector<LayoutSpec>& layouts) {
  std::string s;
  for (const auto& l : layouts) s += (s.empty() ? "" : ", ") + l.text();
  return s;
}

}  // namespace ringsim::models
