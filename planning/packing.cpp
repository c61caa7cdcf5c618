#include "planning/packing.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <string_view>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::planning {

using models::InputError;

std::string to_string(const Packing& p) {
  switch (p.kind) {
    case PackingKind::FirstFit: return "first-fit";
    case PackingKind::FirstFitDecreasing: return "first-fit-decreasing";
    case PackingKind::FirstFitShuffle: return "first-fit-shuffle:" + std::to_string(p.seed);
    case PackingKind::NextFit: return "next-fit";
  }
  return "first-fit";
}

Packing parse_packing(const std::string& text) {
  Packing p;
  if (text == "first-fit") p.kind = PackingKind::FirstFit;
  else if (text == "first-fit-decreasing") p.kind = PackingKind::FirstFitDecreasing;
  else if (text == "next-fit") p.kind = PackingKind::NextFit;
  else if (text == "first-fit-shuffle" || text.starts_with("first-fit-shuffle:")) {
    p.kind = PackingKind::FirstFitShuffle;
    if (text.size() > 17) {
      const auto seed = models::parse_int(std::string_view(text).substr(18), "packing");
      if (seed < 0) throw InputError({}, 0, "packing", "the shuffle's SEED must be a non-negative integer");
      p.seed = static_cast<std::uint64_t>(seed);
    }
  } else {
    throw InputError({}, 0, "packing",
                     "expected first-fit, first-fit-decreasing, first-fit-shuffle[:SEED] or next-fit, got '" + text + "'");
  }
  return p;
}

namespace {

// The free room of every sequence opened so far and of the ones still unopened (all n_seq),
// as a max segment tree: the leftmost sequence with room for a document in O(log).
class FreeRoom {
 public:
  FreeRoom(std::int64_t capacity, std::int64_t n_seq) {
    while (leaves_ < capacity) leaves_ *= 2;
    tree_.assign(static_cast<std::size_t>(2 * leaves_), n_seq);
  }
  // The leftmost sequence with at least `need` free tokens (the tree holds enough sequences for
  // one document each, so there always is one).
  [[nodiscard]] std::int64_t first_fit(std::int64_t need) const {
    std::int64_t node = 1;
    while (node < leaves_) node = tree_[at(2 * node)] >= need ? 2 * node : 2 * node + 1;
    return node - leaves_;
  }
  void take(std::int64_t seq, std::int64_t tokens) {
    std::int64_t node = seq + leaves_;
    tree_[at(node)] -= tokens;
    for (node /= 2; node >= 1; node /= 2) tree_[at(node)] = std::max(tree_[at(2 * node)], tree_[at(2 * node + 1)]);
  }

 private:
  static std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }
  std::int64_t leaves_ = 1;
  std::vector<std::int64_t> tree_;
};

}  // namespace

Packs pack_documents(std::span<const std::int64_t> lengths, std::int64_t n_seq, std::int64_t quantum, Packing how) {
  if (quantum <= 0 || n_seq <= 0 || n_seq % quantum != 0)
    throw InputError({}, 0, "seq",
                     "the sequence length " + std::to_string(n_seq) + " must be a positive multiple of " +
                         std::to_string(quantum) + " (the layout pads documents to multiples of it)");
  Packs out;
  out.n_seq = n_seq;
  out.quantum = quantum;
  out.documents = static_cast<std::int64_t>(lengths.size());
  // Documents longer than n_seq become pieces of n_seq and a remainder, in place.
  struct Piece {
    std::int64_t tokens, padded;
  };
  // Sizes first: a few huge documents must not allocate or compute without bound.
  std::int64_t count = 0, full = 0, rest = 0;  // pieces; tokens as full sequences + the rest
  for (const auto l : lengths) {
    if (l <= 0) throw InputError({}, 0, "lengths", "document lengths must be positive");
    count += (l + n_seq - 1) / n_seq;
    if (count > kMaxPieces)
      throw InputError({}, 0, "lengths",
                       "the documents make more than 2^24 pieces of at most n_seq = " + std::to_string(n_seq) +
                           " tokens: plan from a smaller sample");
    full += l / n_seq;
    rest += l % n_seq;
    full += rest / n_seq;
    rest %= n_seq;
    if (full > kMaxPackedSequences)
      throw InputError({}, 0, "lengths",
                       "the documents fill more than 2^19 sequences of n_seq = " + std::to_string(n_seq) +
                           " tokens, each predicted under every candidate: plan from a smaller sample (the file's first "
                           "lines, or a histogram with scaled counts)");
  }
  std::vector<Piece> pieces;
  pieces.reserve(static_cast<std::size_t>(count));
  for (const auto l : lengths) {
    std::int64_t left = l;
    if (left > n_seq) ++out.cut;
    while (left > n_seq) {
      pieces.push_back({n_seq, n_seq});
      left -= n_seq;
    }
    pieces.push_back({left, (left + quantum - 1) / quantum * quantum});
  }
  out.pieces = static_cast<std::int64_t>(pieces.size());
  std::vector<std::int64_t> order(pieces.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (how.kind == PackingKind::FirstFitDecreasing)
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return pieces[static_cast<std::size_t>(a)].padded > pieces[static_cast<std::size_t>(b)].padded;
    });
  if (how.kind == PackingKind::FirstFitShuffle) {
    // Fisher-Yates on the standardised generator's raw output (std::shuffle and the standard
    // distributions are implementation-defined; the modulo's bias is below 2^-40 here).
    std::mt19937_64 rng(how.seed);
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  }

  // The pack of every piece, in packing order.
  std::vector<std::int64_t> pack_of(pieces.size());
  std::int64_t packs = 0;
  if (how.kind == PackingKind::NextFit) {
    std::int64_t room = 0;
    for (const auto i : order) {
      const std::int64_t need = pieces[static_cast<std::size_t>(i)].padded;
      if (packs == 0 || need > room) {
        ++packs;
        room = n_seq;
      }
      room -= need;
      pack_of[static_cast<std::size_t>(i)] = packs - 1;
    }
  } else {
    FreeRoom room(static_cast<std::int64_t>(pieces.size()), n_seq);
    for (const auto i : order) {
      const std::int64_t need = pieces[static_cast<std::size_t>(i)].padded;
      const std::int64_t p = room.first_fit(need);
      room.take(p, need);
      pack_of[static_cast<std::size_t>(i)] = p;
      packs = std::max(packs, p + 1);
    }
  }

  // Padding and packing can need up to twice the full sequences counted above.
  if (packs > kMaxPackedSequences)
    throw InputError({}, 0, "lengths",
                     "the documents pack into " + std::to_string(packs) + " sequences of n_seq = " + std::to_string(n_seq) +
                         " tokens, more than 2^19, each predicted under every candidate: plan from a smaller sample");
  // Packs in the order they were opened, each with its documents in the order they came.
  out.offsets.assign(static_cast<std::size_t>(packs + 1), 0);
  for (const auto p : pack_of) ++out.offsets[static_cast<std::size_t>(p + 1)];
  std::partial_sum(out.offsets.begin(), out.offsets.end(), out.offsets.begin());
  out.lengths.assign(pieces.size(), 0);
  out.real_tokens.assign(static_cast<std::size_t>(packs), 0);
  out.longest.assign(static_cast<std::size_t>(packs), 0);
  std::vector<std::int64_t> fill(out.offsets.begin(), out.offsets.end() - 1);
  for (const auto i : order) {
    const auto p = static_cast<std::size_t>(pack_of[static_cast<std::size_t>(i)]);
    const auto& piece = pieces[static_cast<std::size_t>(i)];
    out.lengths[static_cast<std::size_t>(fill[p]++)] = piece.padded;
    out.real_tokens[p] += piece.tokens;
    out.longest[p] = std::max(out.longest[p], piece.tokens);
  }
  return out;
}

}  // namespace ringsim::planning
