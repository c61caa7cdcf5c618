#pragma once
// Plausibility of measurements people bring (their own or published): each row is held against
// bounds no real run can break, and a row that breaks one is reported with the bound.
//  - compute: the useful FLOPs the row implies per device per second (attention only: the
//    allowed pairs of the mask, forward 4 n_pairs d h, backward twice that; a whole model: the
//    analytic model's useful FLOPs of a training step) above the hardware's dense peak at the
//    row's precision (bf16 unless a `precision` column says otherwise);
//  - links: the bytes the strategy must move per device per second (the ring's K/V blocks,
//    forward once, with the backward at least three times that; Ulysses' all-to-alls) above the
//    link's bandwidth per direction (NVLink inside a node, the NIC beyond);
//  - configurations the strategy cannot run: a Ulysses degree above the K/V heads or not
//    dividing the heads, lengths not divisible as the layout splits them (sp blocks; 2 sp for
//    zigzag), meshes whose product is not the device count, tensor parallelism that does not
//    split the heads.
// The FLOP and byte counts are lower bounds (no recomputation, bf16 on the wire), so a flagged
// row breaks the bound by at least the stated margin.
#include <cstdint>
#include <string>
#include <vector>

#include "models/catalog/resolve.hpp"
#include "planning/table.hpp"

namespace ringsim::planning {

struct Finding {
  std::int64_t line = 0;
  std::string what;  // every bound the row breaks, "; "-separated
};

struct CheckOptions {
  std::string hardware;  // for files without a hardware column, or to override it
};

// Columns (docs/planning.md): hardware; devices (or gpus); mp, sp, dp; ring_degree,
// ulysses_degree; model, or heads (heads_q), kv_heads (heads_kv), head_dim for attention alone;
// n_seq (n_seq_total); batch; layout; cp; causal; pass (fwd, fwd+bwd, train); one of
// tokens_per_s, step_s, iter_per_s; tflops_per_device (tflops_per_gpu); precision. Missing optional columns take defaults; a
// throughput that is not a number (OOM) is not checked. InputError (file, line, column) for
// a value that is malformed, or a file that has neither a model nor the attention shape.
[[nodiscard]] std::vector<Finding> check_measurements(const Table& t, const models::Catalog& catalog,
                                                      const CheckOptions& options = {});

}  // namespace ringsim::planning
