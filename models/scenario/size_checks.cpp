#include "models/scenario/size_checks.hpp"

#include <algorithm>
#include <string>

#include "models/io/checked.hpp"
#include "models/io/error.hpp"
#include "models/io/limits.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {
namespace {

std::string g3(double v) { return short_number(v, 3); }
std::string str(std::int64_t v) { return std::to_string(v); }

// Bytes per token of an explicit permutation: the file's values with their lines while it is
// read, then the slot -> token and token -> slot arrays.
constexpr double kPermutationBytesPerToken = 16 + 8 + 16;
// Bytes per (head, token) of a per-head sparse mask: query and key ids (or kept lists), the
// dense ranks, and each device's sorted rows (query and key side), with slack for vectors.
constexpr double kSparseBytesPerHeadToken = 64;
// One memoised block of a ring whose blocks are all distinct (hash-map node + BlockStats).
constexpr double kMemoBytesPerBlock = 96;

}  // namespace

void check_scenario_sizes(const ScenarioSpec& s, const ModelConfig& model) {
  if (s.sp > kMaxDevices || s.mp > kMaxDevices || s.mp * s.sp > kMaxDevices)  // each <= 2^20: no overflow
    throw InputError({}, 0, s.sp > kMaxDevices ? "sp" : "mp",
                     "mesh " + str(s.mp) + "x" + str(s.sp) + " has more than the " + str(kMaxDevices) +
                         " devices ringsim models");
  if (s.batch > kMaxBatch)
    throw InputError({}, 0, "batch", "batch " + str(s.batch) + " is larger than the supported " + str(kMaxBatch));
  const bool sparse = s.mask.sparse() || (s.layout_mask && s.layout_mask->sparse());
  const std::int64_t mask_heads = sparse ? model.heads : 1;
  // Pair and area counts summed over a whole ring reach n_seq^2 per mask head.
  (void)checked_product({s.n_seq, s.n_seq, mask_heads}, "n_seq",
                        "n_seq = " + str(s.n_seq) + ": the pair count n_seq^2" + (sparse ? " x heads" : ""));
  (void)checked_product({s.n_seq, s.batch}, "batch", "the tokens of a step, n_seq x batch,");
  const double n = static_cast<double>(s.n_seq);
  double bytes = 0;
  if (s.layout.is_permutation())
    bytes += kPermutationBytesPerToken * n;
  if (sparse) bytes += kSparseBytesPerHeadToken * n * static_cast<double>(model.heads);
  check_memory(bytes, sparse ? "mask" : "layout",
               "n_seq = " + str(s.n_seq) + (sparse ? " with " + str(model.heads) + " mask heads" : ""));
}

void check_workload_sizes(const ResolvedScenario& r) {
  const auto& l = *r.layout;
  const auto& m = *r.mask;
  const std::int64_t c = l.block(), n = l.n_dev();
  check_tile(r.tile, c);
  const std::int64_t nq = (c + r.tile.q - 1) / r.tile.q, nk = (c + r.tile.k - 1) / r.tile.k;
  // Tiles: per block and head, times the batch (the cost model charges every tile per
  // sequence), and summed over all N x N blocks of a ring.
  const std::int64_t tiles = checked_product({nq, nk, m.heads()}, "tile", "the tiles of one block");
  (void)checked_product({tiles, r.spec.batch}, "batch", "tiles x batch");
  (void)checked_product({tiles, n, n}, "tile", "the tiles of a ring");
  // K/V (and dK/dV) bytes per hop, per sequence of the batch, summed over a pass's rounds.
  const std::int64_t wire = std::max(r.profile.kv_wire_bytes, r.profile.dkv_wire_bytes);
  (void)checked_product({c, r.cost->kv_heads_per_device(), r.model.head_dim, 2, wire, r.spec.batch, n}, "n_seq",
                        "the K/V bytes a ring moves");
  const double blocks = static_cast<double>(Workload::distinct_blocks(l, m));
  check_memory(blocks * kMemoBytesPerBlock, "sp", "the workload of " + g3(blocks) + " distinct blocks");
  check_count_steps(blocks * m.count_steps(l, r.tile), "tile",
                    "counting " + g3(blocks) + " distinct blocks of " + str(c) + " tokens with " + str(r.tile.q) + "x" +
                        str(r.tile.k) + " tiles (layout " + l.name() + ", mask " + m.name() + ")",
                    "larger tiles or fewer tokens per device count faster");
}

}  // namespace ringsim::models
