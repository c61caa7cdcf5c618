#include "models/workload/mask_spec.hpp"

#include <algorithm>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {

namespace {

struct FamilyName {
  std::string_view name;
  MaskFamily family;
};

constexpr FamilyName kFamilies[] = {
    {"causal", MaskFamily::Causal}, {"full", MaskFamily::Full},     {"window", MaskFamily::Window},
    {"docs", MaskFamily::Documents}, {"qkdrop", MaskFamily::QKDrop}, {"hash", MaskFamily::Hash},
    {"lsh", MaskFamily::Lsh},       {"qkfile", MaskFamily::QKFile}, {"hashfile", MaskFamily::HashFile},
};

[[noreturn]] void bad(const std::string& message) { throw InputError({}, 0, "mask", message); }

}  // namespace

const std::vector<std::string>& known_mask_families() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> names;
    for (const auto& f : kFamilies) names.emplace_back(f.name);
    return names;
  }();
  return v;
}

MaskSpec MaskSpec::packed_documents() {
  MaskSpec m;
  m.text_ = "docs";
  m.family_ = MaskFamily::Documents;
  m.family_name_ = "docs";
  return m;
}

MaskSpec MaskSpec::parse(std::string_view text) {
  MaskSpec m;
  m.text_ = std::string(text);
  const auto colon = text.find(':');
  const auto name = text.substr(0, colon);
  const auto* f = std::find_if(std::begin(kFamilies), std::end(kFamilies), [&](const FamilyName& x) { return x.name == name; });
  if (f == std::end(kFamilies)) bad("unknown mask '" + m.text_ + "' (known: " + join_list(known_mask_families()) + ")");
  m.family_ = f->family;
  m.family_name_ = std::string(f->name);
  const bool has_arg = colon != std::string_view::npos;
  const auto arg = has_arg ? text.substr(colon + 1) : std::string_view{};
  switch (m.family_) {
    case MaskFamily::Causal:
    case MaskFamily::Full:
      if (has_arg) bad(m.family_name_ + " takes no parameter, got '" + m.text_ + "'");
      break;
    case MaskFamily::Window:
      m.window_ = parse_int(arg, "mask");
      if (m.window_ <= 0) bad("window size must be a positive integer, got " + std::to_string(m.window_));
      break;
    case MaskFamily::Documents:
    case MaskFamily::QKFile:
    case MaskFamily::HashFile:
      if (arg.empty()) bad("missing file name in '" + m.text_ + "'");
      m.file_ = std::string(arg);
      break;
    case MaskFamily::QKDrop:
      m.rate_ = parse_double(arg, "mask");
      if (m.rate_ < 0.0 || m.rate_ > 1.0) bad("qkdrop drop rate must be in [0, 1], got " + std::to_string(m.rate_));
      break;
    case MaskFamily::Hash: {
      const auto parts = split(arg, ':');
      if (parts.size() != 1 && !(parts.size() == 3 && parts[1] == "zipf"))
        bad("expected hash:NB or hash:NB:zipf:S, got '" + m.text_ + "'");
      m.buckets_ = parse_int(parts[0], "mask");
      if (m.buckets_ < 1) bad("hash needs at least one bucket, got " + std::to_string(m.buckets_));
      m.zipf_ = parts.size() == 3 ? parse_double(parts[2], "mask") : 0.0;
      if (m.zipf_ < 0.0) bad("Zipf exponent must be >= 0, got " + std::to_string(m.zipf_));
      break;
    }
    case MaskFamily::Lsh: {
      const auto parts = split(arg, ':');
      if (parts.size() > 2) bad("expected lsh:NB or lsh:NB:D, got '" + m.text_ + "'");
      m.buckets_ = parse_int(parts[0], "mask");
      if (parts.size() == 2) m.dim_ = parse_int(parts[1], "mask");
      break;
    }
  }
  return m;
}

bool MaskSpec::sparse() const noexcept {
  switch (family_) {
    case MaskFamily::QKDrop:
    case MaskFamily::Hash:
    case MaskFamily::Lsh:
    case MaskFamily::QKFile:
    case MaskFamily::HashFile: return true;
    default: return false;
  }
}

}  // namespace ringsim::models
