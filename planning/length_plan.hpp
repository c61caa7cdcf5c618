#pragma once
// Plans from a length distribution: a dataset's documents packed into sequences of n_seq tokens
// (planning/packing.hpp), every packed sequence predicted under each candidate context-parallel
// strategy, document layout and implementation of one mesh (models/analytic/packed_model.hpp: the
// analytic model with the work counted per document), and, per bucket of sequences by their
// longest document, the candidates ranked by tokens/s with why.
//
// Candidates whose layout pads documents to another multiple (doc-zigzag: 2 x positions) get
// their own packing of the same documents; every candidate's figures are over its own packs, and
// tokens/s counts the dataset's tokens (padding excluded), so padding costs what it costs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/analytic/analytic.hpp"
#include "models/analytic/breakdown.hpp"
#include "models/memory/memory.hpp"
#include "models/catalog/resolve.hpp"
#include "planning/lengths.hpp"
#include "planning/packing.hpp"

namespace ringsim::planning {

struct LengthPlanRequest {
  std::string hardware = "h100-sxm";
  std::string model = "llama3-8b";
  std::int64_t n_seq = 131072;
  std::int64_t mp = 1;
  std::int64_t sp = 8;
  // Empty: ring, allgather, ulysses and every usp:UxR and double-ring:W split of sp.
  std::vector<models::Strategy> strategies;
  // Empty: contiguous, striped, zigzag, doc-zigzag, doc-zigzag-docmajor, ptrr.
  std::vector<models::LayoutSpec> layouts;
  // Empty: the catalog's choice for each (strategy, layout); else every listed implementation
  // that offers the pair.
  std::vector<std::string> impls;
  // With no impls: whether the catalog's choice may be a research kernel or ringsim's reference
  // kernels when no production library offers the pair (by default such a pair is skipped).
  bool include_research = false;
  std::string profile;  // empty: each (hardware, implementation)'s own
  // Memory: model states sharded over the sp ranks at this ZeRO stage, activations kept under
  // this recomputation policy (full recomputation also repeats the forward in the step time).
  models::Sharding zero = models::Sharding::Zero3;
  models::Recompute recompute = models::Recompute::Selective;
  models::MemorySettings memory;
  Packing packing;  // first-fit
  // Upper edges of the buckets (longest document of a sequence in (previous edge, edge]),
  // ascending and below n_seq, which closes the last; empty: powers of two from 1024.
  std::vector<std::int64_t> bucket_edges;
  std::int64_t top = 3;      // rows of each bucket's table
  std::int64_t threads = 0;  // 0: every core
};

// The longest sequence planned: 2^25 tokens (beyond ringsim's 10M-token design range).
inline constexpr std::int64_t kMaxPlanTokens = std::int64_t{1} << 25;
// InputError naming the field for an impossible request (sizes, edges, an empty list).
void check_request(const LengthPlanRequest& r);

struct LengthCandidate {
  std::string cp, layout, impl;
  models::ScenarioSpec spec;  // the configuration (impl set; docs names the packs)
  std::string skipped;  // why it cannot run; empty when it runs
  std::int64_t quantum = 1;
  std::int64_t packing = -1;  // index into LengthPlan::packings
  double memory_bytes = 0, memory_capacity_bytes = 0;
  bool fits_memory = true;
  bool profile_calibrated = false;
  std::string label;  // planning::deployability_label of its implementation and profile
  std::string kernel;  // the attention kernel its implementation calls on this GPU (kernel_on)
};

// One candidate over the packs of one bucket (or of all buckets).
struct BucketFigures {
  std::int64_t packs = 0;
  std::int64_t documents = 0;    // pieces (documents longer than n_seq are cut)
  std::int64_t real_tokens = 0;  // the dataset's tokens, padding excluded
  models::Prediction sum;        // the packs' predictions, additive fields summed (step_s: with the sync)
  models::StepBreakdown parts;   // the packs' steps in parts (the gradient synchronisation included)
  double imbalance_sum = 0;      // sum of the packs' imbalance
  [[nodiscard]] double tokens_per_s() const noexcept {
    return sum.step_s > 0 ? static_cast<double>(real_tokens) / sum.step_s : 0;
  }
  [[nodiscard]] double mean_step_s() const noexcept { return packs > 0 ? sum.step_s / static_cast<double>(packs) : 0; }
  // The mean sequence's step in parts (they add up to mean_step_s).
  [[nodiscard]] models::StepBreakdown mean_parts() const noexcept {
    return packs > 0 ? parts.scaled(1.0 / static_cast<double>(packs)) : models::StepBreakdown{};
  }
  [[nodiscard]] double mean_imbalance() const noexcept {
    return packs > 0 ? imbalance_sum / static_cast<double>(packs) : 0;
  }
  // Why the candidate's step is what it is, over the packs: the summed terms, with the packs' mean
  // imbalance (the sum holds no imbalance of its own: it is a ratio, not additive).
  [[nodiscard]] std::string why() const;
  // Share of the packs' tokens that are padding.
  [[nodiscard]] double padding_share(std::int64_t n_seq) const noexcept {
    return packs > 0 ? 1.0 - static_cast<double>(real_tokens) / (static_cast<double>(packs) * static_cast<double>(n_seq))
                     : 0;
  }
};

struct Bucket {
  std::int64_t lo = 0;  // exclusive
  std::int64_t hi = 0;  // inclusive
};

// A row of a ranking: the best candidate of a group and the candidates that tie with it
// exactly (the same strategy and the same summed step: a layout or implementation that changes
// nothing for these packs).
struct RankedCandidate {
  std::size_t candidate = 0;
  std::vector<std::size_t> ties;
};

struct LengthPlan {
  LengthPlanRequest request;
  std::string source;
  std::int64_t documents = 0, tokens = 0;
  std::vector<Packs> packings;     // one per distinct document quantum
  std::vector<Bucket> buckets;
  std::vector<LengthCandidate> candidates;
  // figures[c][b]: candidate c over bucket b's packs, b = buckets.size(): over all packs.
  std::vector<std::vector<BucketFigures>> figures;
  // ranking[b]: the runnable candidates that fit in memory and have packs in bucket b, best
  // tokens/s first, ties grouped; b = buckets.size(): over all packs (one configuration for
  // the whole dataset).
  std::vector<std::vector<RankedCandidate>> ranking;
  std::int64_t predictions = 0;  // packed sequences predicted (all candidates)
  std::int64_t documents_counted = 0;  // documents through the per-document counting (all candidates)
  double seconds = 0;              // the evaluation's wall time
  // The bucket of a pack's longest document.
  [[nodiscard]] std::size_t bucket_of(std::int64_t longest) const noexcept;
};

// The plan: candidates (strategies x layouts x implementations, each resolved once or with the
// reason it cannot run), the packings, every pack predicted, the rankings. InputError for a bad
// request (unknown names, sizes, bucket edges); candidates that cannot run are not errors.
[[nodiscard]] LengthPlan plan_from_lengths(const LengthPlanRequest& r, const LengthSample& sample,
                                           const models::Catalog& catalog);

// The element-granularity figures against the full model at each profile's tile (models::predict
// of the scenario with the sequence's documents, its tile counted over the device's packed
// block): for up to `per_candidate` sequences of each runnable candidate (spread over its packs),
// the full model's step over the packed model's. The tail padding counts as one more document on
// both sides here (the full model has no padding that attends nothing). Slow: one workload per
// sequence.
struct TileCheck {
  std::size_t candidate = 0;
  std::int64_t sequences = 0;
  models::TileShape tile;  // the full model's
  double min_ratio = 0, max_ratio = 0, mean_ratio = 0;
  // Why the full model could not check it (its exact tile count past the per-scenario bound,
  // say); the ratios are then unset. The plan itself does not need the check.
  std::string not_checked;
};
[[nodiscard]] std::vector<TileCheck> tile_check(const LengthPlan& plan, const models::Catalog& catalog,
                                                std::int64_t per_candidate);

// ring, allgather, ulysses, then every usp:UxR and double-ring:W split of sp (1 < U, W < sp).
[[nodiscard]] std::vector<models::Strategy> strategies_of(std::int64_t sp);

}  // namespace ringsim::planning
