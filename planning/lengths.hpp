#pragma once
// The document lengths of a dataset, as the length planner (planning/length_plan.hpp) reads
// them: a file of lengths or of histogram rows, or a generated sample.
//
//   FILE     one entry per line: LENGTH (one document) or LENGTH,COUNT (a histogram row:
//            COUNT documents of LENGTH tokens; NeMo's packing tools start from such a
//            histogram); '#' starts a comment; the first line may be a header naming the
//            columns (length,count: models::is_lengths_header). Only a comma separates the two
//            fields; spaces around a field are ignored, an empty field ("4096,") or a field of
//            two words ("4096 3", a TAB) is an error. A regular file of at most
//            models::kMaxDataFileBytes, read through models::InputFile (a FIFO or /dev/zero is
//            refused before anything is read)
//   lognormal:MEAN:SIGMA:SEED:COUNT
//            COUNT lengths drawn from a log-normal of mean MEAN tokens (1 to 2^40) and log-space deviation
//            SIGMA (models::LognormalDraws: the same seed gives the same lengths everywhere)
//
// Order is kept (file order, histogram rows expanded in row order): packers that fill in
// order (first-fit, next-fit) depend on it.
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::planning {

struct LengthSample {
  std::string source;                 // the file or the generator's spec
  std::vector<std::int64_t> lengths;  // tokens per document, each >= 1
  [[nodiscard]] std::int64_t tokens() const noexcept;
};

// The most documents one sample may hold (checked before anything is allocated): 2^24. A larger
// dataset is planned from a sample of it (its first lines, or a histogram with scaled counts).
inline constexpr std::int64_t kMaxSampleDocuments = std::int64_t{1} << 24;
// The longest document accepted: 2^40 tokens.
inline constexpr std::int64_t kMaxDocumentTokens = std::int64_t{1} << 40;

// FILE or lognormal:MEAN:SIGMA:SEED:COUNT. InputError naming the file, the line and the field
// ("lengths") for anything malformed: not an integer, a length or count below 1, more than two
// fields, a sample past kMaxSampleDocuments, an empty file.
[[nodiscard]] LengthSample read_lengths(const std::string& spec);
[[nodiscard]] LengthSample lognormal_lengths(double mean, double sigma, std::uint64_t seed, std::int64_t count);

}  // namespace ringsim::planning
