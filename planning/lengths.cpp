#include "planning/lengths.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

#include "models/workload/documents.hpp"
#include "models/io/error.hpp"
#include "models/io/input_file.hpp"
#include "models/io/parse.hpp"

namespace ringsim::planning {

using models::InputError;

std::int64_t LengthSample::tokens() const noexcept {
  return std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
}

namespace {

std::string too_many() {
  return "more than " + std::to_string(kMaxSampleDocuments) +
         " documents: plan from a sample (the file's first lines, or a histogram with scaled counts)";
}

// The fields of a line: split at commas only, each trimmed of spaces and TABs.
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  for (const auto& f : models::split(line, ',')) out.emplace_back(models::trim(f));
  return out;
}

LengthSample read_file(const std::string& path) {
  models::InputFile in(path, "lengths", "document lengths file", models::kMaxDataFileBytes);
  LengthSample s;
  s.source = path;
  std::string line;
  bool content_seen = false;
  while (in.next_line(line)) {
    const std::int64_t line_no = in.line_number();
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const auto f = fields_of(line);
    const bool header = !content_seen && models::is_lengths_header(f);
    content_seen = true;
    if (header) continue;
    if (f.size() > 2)
      throw InputError(path, line_no, "lengths",
                       "expected LENGTH or LENGTH,COUNT (a histogram row), got " + std::to_string(f.size()) + " fields");
    for (std::size_t i = 0; i < f.size(); ++i) {
      const char* what = i == 0 ? "LENGTH" : "COUNT";
      if (f[i].empty())
        throw InputError(path, line_no, "lengths", std::string("expected LENGTH or LENGTH,COUNT: the ") + what + " is empty");
      if (f[i].find_first_of(" \t") != std::string::npos)
        throw InputError(path, line_no, "lengths",
                         std::string("expected LENGTH or LENGTH,COUNT separated by a comma: the ") + what + " '" + f[i] +
                             "' holds several words");
    }
    std::int64_t length = 0, count = 1;
    try {
      length = models::parse_positive_int(f[0], "lengths");
      if (f.size() == 2) count = models::parse_positive_int(f[1], "lengths");
    } catch (const InputError& e) {
      throw InputError(path, line_no, "lengths", (f.size() == 2 ? "LENGTH,COUNT: " : "LENGTH: ") + e.message());
    }
    if (length > kMaxDocumentTokens)
      throw InputError(path, line_no, "lengths",
                       "a document of " + std::to_string(length) + " tokens is longer than 2^40 tokens");
    if (count > kMaxSampleDocuments - static_cast<std::int64_t>(s.lengths.size()))
      throw InputError(path, line_no, "lengths", too_many());
    s.lengths.insert(s.lengths.end(), static_cast<std::size_t>(count), length);
  }
  if (s.lengths.empty()) throw InputError(path, 0, "lengths", "no document lengths in the file");
  return s;
}

}  // namespace

LengthSample lognormal_lengths(double mean, double sigma, std::uint64_t seed, std::int64_t count) {
  if (count <= 0) throw InputError({}, 0, "lengths", "lognormal COUNT must be a positive integer");
  if (count > kMaxSampleDocuments) throw InputError({}, 0, "lengths", too_many());
  models::LognormalDraws draws(mean, sigma, seed);
  LengthSample s;
  s.lengths.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    const double x = std::min(draws.next(), static_cast<double>(kMaxDocumentTokens));
    s.lengths.push_back(std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(x))));
  }
  return s;
}

LengthSample read_lengths(const std::string& spec) {
  if (spec.starts_with("lognormal:")) {
    const auto parts = models::split(spec, ':');
    if (parts.size() != 5)
      throw InputError({}, 0, "lengths", "expected lognormal:MEAN:SIGMA:SEED:COUNT, got '" + spec + "'");
    LengthSample s;
    try {
      const double mean = models::parse_double(parts[1], "lengths");
      const double sigma = models::parse_double(parts[2], "lengths");
      const std::int64_t seed = models::parse_int(parts[3], "lengths");
      if (seed < 0) throw InputError({}, 0, "lengths", "lognormal SEED must be a non-negative integer");
      const std::int64_t count = models::parse_positive_int(parts[4], "lengths");
      s = lognormal_lengths(mean, sigma, static_cast<std::uint64_t>(seed), count);
    } catch (const InputError& e) {
      // LognormalDraws names the field of --docs; here it is the lengths.
      throw InputError({}, 0, "lengths", e.message());
    }
    s.source = spec;
    return s;
  }
  if (spec.empty()) throw InputError({}, 0, "lengths", "expected a lengths file or lognormal:MEAN:SIGMA:SEED:COUNT");
  return read_file(spec);
}

}  // namespace ringsim::planning
