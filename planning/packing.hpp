#pragma once
// Packing documents into sequences of n_seq tokens, as data loaders do before context-parallel
// training. Deterministic: the same lengths give the same packs.
//
//   first-fit             each document, in file order, into the first sequence with room for
//                         it, else a new one (NeMo's first_fit, nemo/utils/sequence_packing_utils.py
//                         @ d36f01d: find_first_bin_that_fits scans the bins in order); a segment
//                         tree over the sequences' free room finds that sequence in O(log packs)
//   first-fit-decreasing  the same over the documents sorted by decreasing length, ties in file
//                         order (NeMo's first_fit_decreasing: Python's stable sorted(reverse=True))
//   first-fit-shuffle[:SEED]
//                         the same over the documents shuffled (NeMo's first_fit_shuffle; its two
//                         algorithms start from a histogram, whose rows carry no order): a
//                         Fisher-Yates shuffle driven by the standardised mt19937_64 (seed 1 by
//                         default), so a seed gives the same packs everywhere
//   next-fit              one open sequence; a document that does not fit closes it (torchtune's
//                         PackedDataset, torchtune/datasets/_packed.py @ cdf5cdf, with
//                         split_across_pack=False)
//
// A document longer than n_seq is cut into pieces of n_seq and a remainder (each piece a
// document of its own: it attends only within itself). Every document (piece) is padded to a
// multiple of `quantum` (TE's THD format pads each sequence to a multiple of 2 x the
// context-parallel size for the per-document zigzag layout). The planner counts a padded
// document whole, as if its padding were its last tokens (TE's kernels skip them: at most
// quantum - 1 tokens of overcount per document, reported as the padding share). The room a pack
// leaves at its end is padding that attends nothing.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ringsim::planning {

enum class PackingKind { FirstFit, FirstFitDecreasing, FirstFitShuffle, NextFit };
struct Packing {
  PackingKind kind = PackingKind::FirstFit;
  std::uint64_t seed = 1;  // first-fit-shuffle
  friend bool operator==(const Packing&, const Packing&) = default;
};
[[nodiscard]] std::string to_string(const Packing& p);
// "first-fit", "first-fit-decreasing", "first-fit-shuffle[:SEED]", "next-fit"; InputError
// (field "packing") otherwise.
[[nodiscard]] Packing parse_packing(const std::string& text);

struct Packs {
  std::int64_t n_seq = 0;
  std::int64_t quantum = 1;
  // Every pack's documents in the pack's order, padded to the quantum: pack p holds
  // lengths[offsets[p] .. offsets[p + 1]); they sum to at most n_seq, the rest is padding.
  std::vector<std::int64_t> lengths;
  std::vector<std::int64_t> offsets{0};
  std::vector<std::int64_t> real_tokens;  // per pack: tokens of the documents before padding
  std::vector<std::int64_t> longest;      // per pack: its longest document before padding
  std::int64_t documents = 0;             // documents of the sample (before cutting)
  std::int64_t pieces = 0;                // documents after cutting those longer than n_seq
  std::int64_t cut = 0;                   // documents cut
  [[nodiscard]] std::int64_t size() const noexcept { return static_cast<std::int64_t>(offsets.size()) - 1; }
  [[nodiscard]] std::span<const std::int64_t> pack(std::int64_t p) const noexcept {
    return {lengths.data() + offsets[static_cast<std::size_t>(p)],
            static_cast<std::size_t>(offsets[static_cast<std::size_t>(p) + 1] - offsets[static_cast<std::size_t>(p)])};
  }
};

// Caps on the work a sample generates, checked before anything is allocated: the pieces (documents
// after cutting, 2^24, as many as a sample may hold documents) and the packed sequences (2^19: the
// planner predicts every sequence under every candidate, about 50 us each on one core, so 2^19
// sequences take under half a minute; a 2^24-document sample of 4k-token documents fills 2^19
// sequences of 128k). The sequences are bounded below by tokens / n_seq before packing and
// counted after it.
inline constexpr std::int64_t kMaxPieces = std::int64_t{1} << 24;
inline constexpr std::int64_t kMaxPackedSequences = std::int64_t{1} << 19;

// InputError (field "seq") when n_seq is not a positive multiple of the quantum; InputError
// (field "lengths") past kMaxPieces or kMaxPackedSequences.
[[nodiscard]] Packs pack_documents(std::span<const std::int64_t> lengths, std::int64_t n_seq, std::int64_t quantum,
                                   Packing how);

}  // namespace ringsim::planning
