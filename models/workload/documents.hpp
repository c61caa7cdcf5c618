#pragma once
// Packed variable-length batches: one sequence of n_seq tokens made of documents that attend
// only within themselves (causally), and the layouts libraries use to balance such a batch
// over the ranks of a context-parallel group. The documents give the mask (per-document causal,
// models/workload/mask.hpp's document mask); the layouts are token permutations counted like perm:FILE.
//
//   --docs FILE        document lengths, one per line or comma-separated ('#' comments, an
//                      optional header line naming the column: length, lengths or tokens); they
//                      must sum to n_seq; an empty field (4096,) is an error
//   --docs lognormal:MEAN:SIGMA:SEED[:Q]
//                      lengths drawn from a log-normal of mean MEAN tokens and log-space standard
//                      deviation SIGMA (a long tail for SIGMA >~ 1), rounded up to multiples of Q
//                      (default 1), until they fill n_seq; the last is cut to fit
//
// Document layouts (token t of document d, length L, chunks of L / 2N):
//   doc-zigzag            chunks r and 2N-1-r of every document on rank r, rank-major (TE's THD
//                         format; torch's _PerDocumentHeadTailLoadBalancer since pytorch #189902)
//   doc-zigzag-docmajor   the same chunks laid out document-major, then cut into N contiguous
//                         shards (that balancer before #189902: the cut lands inside documents
//                         and leaves some rank a document's whole causal tail)
//   ptrr[:B]              torch's _PTRRLoadBalancer: blocks of B tokens (default 128) ranked by
//                         the key blocks they visit, dealt round-robin in snake order
// With documents, contiguous is llama3's varlen split and striped deals tokens round-robin.
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/documents_spec.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/layout_spec.hpp"

namespace ringsim::models {

// Documents of one packed batch at most (4M): the lengths, starts and per-document kernel calls
// stay within memory, and generating them takes well under a second.
inline constexpr std::int64_t kMaxDocuments = std::int64_t{1} << 22;

struct Documents {
  std::string spec;                   // as written
  std::vector<std::int64_t> lengths;  // in sequence order, each >= 1

  [[nodiscard]] std::int64_t total() const noexcept;
  // Start position of every document (starts[0] == 0).
  [[nodiscard]] std::vector<std::int64_t> starts() const;
  // Allowed pairs of the per-document causal mask: sum of L (L + 1) / 2.
  [[nodiscard]] std::int64_t causal_pairs() const noexcept;

  // The lengths a spec names (a file read, or a log-normal draw); InputError (field "docs", with
  // file and line) for a malformed file or lengths that do not sum to n_seq.
  [[nodiscard]] static Documents make(const DocumentsSpec& spec, std::int64_t n_seq);
  [[nodiscard]] static Documents lognormal(double mean, double sigma, std::uint64_t seed, std::int64_t quantum,
                                           std::int64_t n_seq);
};

// The longest mean document a log-normal spec may ask for: 2^40 tokens, the longest document any
// reader accepts (a mean of 1e308 would make one document of all the tokens, which is no draw).
inline constexpr double kMaxLognormalMean = 1099511627776.0;

// The header a lengths file may start with: its fields name columns, case-insensitively:
// length (or lengths, tokens) first, then count (or documents) for a histogram. Any other word
// on the first line is an error, not a silently skipped header.
[[nodiscard]] bool is_lengths_header(const std::vector<std::string>& fields);

// Log-normal draws of mean `mean` and log-space deviation `sigma` from the standardised
// mt19937_64 stream (its output is fixed by the standard, distributions are not; Box-Muller on
// 53-bit uniforms), so a seed gives the same lengths everywhere.
class LognormalDraws {
 public:
  // InputError (field "docs") unless 1 <= mean <= kMaxLognormalMean and 0 <= sigma <= 10.
  LognormalDraws(double mean, double sigma, std::uint64_t seed);
  [[nodiscard]] double next();

 private:
  double mu_, sigma_;
  std::mt19937_64 rng_;
};

// torch's ptrr_scheduling: tasks sorted by descending time (stable), dealt to n_groups groups
// in snake order row by row, each group's tasks in increasing index order.
[[nodiscard]] std::vector<std::vector<std::int64_t>> ptrr_groups(const std::vector<std::int64_t>& time,
                                                               std::int64_t n_groups);

// One of the document layouts above over n_dev ranks. InputError (field "layout") when a
// document's length is not a multiple of 2 n_dev (zigzag layouts: TE and torch pad documents to
// that) or n_seq is not a multiple of B n_dev (ptrr).
[[nodiscard]] Layout document_layout(const LayoutSpec& layout, const Documents& docs, std::int64_t n_dev);

}  // namespace ringsim::models
