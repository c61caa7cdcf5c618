#include "models/workload/documents_spec.hpp"

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {

DocumentsSpec DocumentsSpec::parse(std::string_view text) {
  DocumentsSpec d;
  d.text_ = std::string(text);
  if (text.starts_with("lognormal:")) {
    const auto parts = split(text, ':');
    if (parts.size() != 4 && parts.size() != 5)
      throw InputError({}, 0, "docs", "expected lognormal:MEAN:SIGMA:SEED[:Q], got '" + d.text_ + "'");
    d.source_ = DocumentsSource::Lognormal;
    d.mean_ = parse_double(parts[1], "docs");
    d.sigma_ = parse_double(parts[2], "docs");
    const std::int64_t seed = parse_int(parts[3], "docs");
    if (seed < 0) throw InputError({}, 0, "docs", "lognormal SEED must be a non-negative integer");
    d.seed_ = static_cast<std::uint64_t>(seed);
    d.quantum_ = parts.size() == 5 ? parse_positive_int(parts[4], "docs") : 1;
    return d;
  }
  if (text.empty()) throw InputError({}, 0, "docs", "expected a lengths file or lognormal:MEAN:SIGMA:SEED[:Q]");
  return d;
}

DocumentsSpec DocumentsSpec::given(std::string name) {
  DocumentsSpec d;
  d.text_ = std::move(name);
  d.source_ = DocumentsSource::Given;
  return d;
}

}  // namespace ringsim::models
