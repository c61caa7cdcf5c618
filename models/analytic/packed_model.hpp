#pragma once
// The analytic model of one configuration (hardware, model, mesh, strategy, layout,
// implementation) over many packed batches: resolved once, with a stand-in batch of one document,
// then each batch's attention work counted per document (models/workload/document_work.hpp) and run
// through the same model as `predict` (models::predict with AttentionWork). Everything else of
// the step (projections, MLP, collectives' sizes, memory) depends on n_seq only and is computed
// once.
//
// The work is counted at element granularity: a batch's prediction equals `predict` of the same
// scenario with --docs and 1 x 1 tiles (tests/models/test_packed_model.cpp), i.e. kernels that
// skip masked pairs exactly. At the profile's tile a kernel also computes the masked pairs of
// the tiles it visits; docs/planning.md measures that difference on the worked example.
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "models/analytic/analytic.hpp"
#include "models/families/attention_cost.hpp"
#include "models/workload/document_work.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::models {

class PackedModel {
 public:
  // spec: the configuration, its layout one of DocLayout's, its docs a name for the batches
  // (empty: "packed"); spec.tile is ignored (element granularity). InputError for a
  // configuration that cannot run (an implementation that lacks the strategy, the layout or
  // packed documents; a split that does not fit; n_seq not divisible as the layout needs), and
  // for a striped all-gather timed by a kernel family not additive over blocks (one call per
  // token; a ring's blocks, Ulysses' calls per document and the other layouts' all-gather calls
  // are then timed one by one).
  PackedModel(const ScenarioSpec& spec, const ScenarioParts& parts);

  [[nodiscard]] const ResolvedScenario& scenario() const noexcept { return scenario_; }
  [[nodiscard]] const DocLayout& layout() const noexcept { return layout_; }
  // The multiple every document's length must be (its layout's on the group's sp ranks and on
  // the ring's positions).
  [[nodiscard]] std::int64_t document_quantum() const noexcept { return quantum_; }
  [[nodiscard]] const StepRest& rest() const noexcept { return rest_; }

  // Buffers of one thread's predictions.
  struct Workspace {
    DocumentCounter counter;
    RingPairs pairs;
    RankWork ranks;
    std::vector<RingRoundWork> rounds;
    std::vector<TableCost> tables;
    std::map<std::int64_t, std::int64_t> shapes;  // Ulysses per call: documents per length
    std::vector<AttentionCall> calls;              // one rank's calls of a pass
  };
  // One batch: documents in sequence order (each >= 1 and a multiple of document_quantum()),
  // summing to at most n_seq; the rest is padding that attends nothing. Thread-safe with one
  // workspace per thread. Per-round detail (Prediction::rounds_fwd) is left out.
  [[nodiscard]] Prediction predict(std::span<const std::int64_t> lengths, Workspace& ws) const;

 private:
  ResolvedScenario scenario_;
  DocLayout layout_;
  std::int64_t quantum_ = 1;
  StepRest rest_;
  std::vector<double> table_heads_;  // per compute table: its calls' heads over the device's heads
  std::vector<AttentionCall> table_call_;  // per compute table: the stand-in's call (heads, kv heads)
  bool ring_additive_ = true;  // the ring's kernel family times summed blocks (else block by block)
  bool per_call_ = false;      // Ulysses timed call by call (a family not additive over blocks)
  bool allgather_calls_ = false;  // an all-gather's calls listed per rank and timed call by call
};

}  // namespace ringsim::models
