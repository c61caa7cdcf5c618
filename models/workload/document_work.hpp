#pragma once
// Causal work of a packed batch counted per document, for planning over many batches of one
// configuration (planning/length_plan.hpp): the allowed (query, key) pairs between every query
// position and key position of a ring laid out by a document layout, every rank's pairs and
// kernel-call area under the all-gather strategy, and Ulysses' per-document calls. No token
// permutation, mask or workload is built.
//
// Cost per batch of D documents on n positions (the grid itself is n x n):
//   doc-zigzag           O(1) per document (every document adds the same pattern)
//   striped              O(1) per document: its pairs are a constant, a band of query rows and
//                        two "rotated triangles" of the grid, added as difference arrays
//   contiguous, zigzag,  O(1) per document that stays on one position (chunk); a document that
//   doc-zigzag-docmajor  crosses position boundaries (at most one per boundary) costs its span
//                        squared (docmajor: 2n x its span)
//   ptrr[:B]             O(n_seq / B) for the dealing, then per block of a document that spans
//                        several blocks the positions that document touched so far
// plus one O(n^2) pass over the grid. The counts are exactly what Workload counts for the same
// layout and documents at 1 x 1 tiles, i.e. the work of a kernel that skips masked pairs at
// element granularity (tests/models/test_document_work.cpp checks every (position, position)
// block, and the all-gather's calls, against models::Workload and allgather_calls).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/workload/mask.hpp"

#include "models/workload/layout_spec.hpp"

namespace ringsim::models {

enum class DocLayoutKind : std::uint8_t { Contiguous, Striped, Zigzag, DocZigzag, DocZigzagDocMajor, Ptrr };

// A layout this module counts (models/workload/layout.hpp and models/workload/documents.hpp describe them).
struct DocLayout {
  DocLayoutKind kind = DocLayoutKind::Contiguous;
  std::int64_t block = kDefaultPtrrBlock;  // ptrr's B
  std::string spec = "contiguous";

  // contiguous | striped | zigzag | doc-zigzag | doc-zigzag-docmajor | ptrr[:B];
  // InputError (field "layout") otherwise.
  [[nodiscard]] static DocLayout of(const LayoutSpec& spec);
  [[nodiscard]] static bool counted(const LayoutSpec& spec) noexcept;
  [[nodiscard]] static std::optional<DocLayoutKind> kind_of(const LayoutSpec& spec) noexcept;
  // The multiple every document's length must be on n positions: 2n for the per-document zigzag
  // layouts (TE and torch pad documents to it), 1 for the others.
  [[nodiscard]] std::int64_t document_quantum(std::int64_t n) const noexcept;
  // InputError (field "layout") when n_seq tokens cannot be laid out on n positions (not a
  // multiple of n; of 2n for zigzag; of B n for ptrr); field "seq" from 2^32 tokens on.
  void check(std::int64_t n_seq, std::int64_t n) const;
};

// Allowed pairs (one head, one sequence) of each (query position, key position): n x n.
struct RingPairs {
  std::int64_t n = 0;
  std::vector<std::int64_t> pairs;  // [query position * n + key position]
  [[nodiscard]] std::int64_t at(std::int64_t q, std::int64_t k) const noexcept {
    return pairs[static_cast<std::size_t>(q * n + k)];
  }
};

// All-gather: each rank's allowed pairs and the area (sum of q_len x k_len) of its kernel calls,
// one call per maximal run of its queries that are consecutive positions of one document
// (models/program/program.hpp, allgather_calls), one head and sequence.
struct RankWork {
  std::vector<std::int64_t> pairs;
  std::vector<std::int64_t> area;
  // With keep_calls, each rank's calls too: (q_len, k_len) of every run, causal with its keys
  // ending at its last query (allgather_calls' shapes before merging). Not for the striped
  // layout, whose every token is a call of its own.
  bool keep_calls = false;
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> calls;
};

// Ulysses: one causal call per document, the same on every rank.
struct DocumentTotals {
  std::int64_t pairs = 0;  // sum of L (L + 1) / 2
  std::int64_t area = 0;   // sum of L^2
};
[[nodiscard]] DocumentTotals document_totals(std::span<const std::int64_t> lengths) noexcept;

// The counts of a block or of a rank's calls at element granularity (1 x 1 tiles): every allowed
// pair a visited tile, the rest of `area` skipped.
[[nodiscard]] BlockStats element_stats(std::int64_t pairs, std::int64_t area) noexcept;

// Keeps its buffers between batches (one per thread). `lengths`: the documents in sequence
// order, each >= 1 and a multiple of layout.document_quantum(n), summing to at most n_seq; the
// tokens after them are padding, laid out as one more document that attends nothing (a packed
// batch's tail: TE's THD format leaves it out of cu_seqlens). The layout's check(n_seq, n) must
// hold (the planner checks both once per configuration).
class DocumentCounter {
 public:
  void ring(const DocLayout& layout, std::span<const std::int64_t> lengths, std::int64_t n_seq, std::int64_t n,
            RingPairs& out);
  void allgather(const DocLayout& layout, std::span<const std::int64_t> lengths, std::int64_t n_seq, std::int64_t n,
                 RankWork& out);

 private:
  // ptrr: the position each block of B tokens is dealt to.
  void ptrr_positions(std::span<const std::int64_t> lengths, std::int64_t n_seq, std::int64_t n, std::int64_t b);

  std::vector<std::int64_t> vertical_, diagonal_, column_, row_;  // striped: difference arrays
  std::vector<std::uint32_t> seen_;                               // tokens of the document per position
  std::vector<std::int64_t> touched_;                             // positions with seen_ > 0
  std::vector<std::int64_t> time_, count_;                        // ptrr dealing
  std::vector<std::int32_t> position_of_block_, snake_;
  std::int64_t snake_n_ = 0;
};

}  // namespace ringsim::models
