#pragma once
// A scenario as a user writes it (names and numbers), and the same scenario resolved into the
// objects the solvers need: hardware, model, profile, layout, mask, tile, workload, cost model,
// kernel family and program. models/catalog/resolve.hpp turns the one into the other through
// the catalog in configs/ (hardware/, models/, implementations/, profiles/).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/cost/cost.hpp"
#include "models/hardware/hardware.hpp"
#include "models/implementations/implementation.hpp"
#include "models/implementations/run_phase.hpp"
#include "models/workload/inference_formats.hpp"
#include "models/workload/documents_spec.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/layout_spec.hpp"
#include "models/workload/mask.hpp"
#include "models/workload/mask_spec.hpp"
#include "models/implementations/strategy.hpp"
#include "models/workload/transformer.hpp"
#include "models/workload/workload.hpp"

namespace ringsim::models {

class AttentionCost;
struct Program;
struct Documents;

struct ScenarioSpec {
  std::string hardware = "a100-80gb";
  std::string hardware_file;  // overrides `hardware` when set
  std::string model = "ringattn-1b";
  std::string model_file;     // overrides `model` when set
  std::int64_t mp = 1;
  std::int64_t sp = 8;
  std::int64_t n_seq = 0;
  std::int64_t batch = 1;
  // Layout, mask, strategy and documents arrive typed: each front-end parses the user's text
  // once (LayoutSpec::parse, MaskSpec::parse, Strategy::parse, DocumentsSpec::parse), where the
  // error can name its field, and nothing below parses them again.
  LayoutSpec layout;
  MaskSpec mask;
  // The sparse mask that mask-derived layouts (bucket-striped, bucket-rotated) are built from;
  // none: `mask`. Lets a baseline mask (predict --compare-mask) keep the same token permutation.
  std::optional<MaskSpec> layout_mask;
  std::optional<TileShape> tile;  // else the profile's default, clamped to the block
  std::string profile;            // name, IMPL/NAME or path; empty: the (hardware, implementation) profile
  // The implementation (configs/implementations/NAME.json); empty: the one the profile names, else
  // the most preferred one that runs on the hardware and offers the mask and strategy
  // (Catalog::default_implementation).
  std::string impl;
  Strategy cp;                    // context-parallel strategy (models/implementations/strategy.hpp)
  // Packed documents (models/workload/documents_spec.hpp: a lengths file or
  // lognormal:MEAN:SIGMA:SEED[:Q]); they set the mask to per-document causal. None: one sequence.
  std::optional<DocumentsSpec> docs;
  std::uint64_t seed = 1;         // for generated sparse masks
  // What it runs: a training step, or a prefill or decode (models::inference_spec sets it); the
  // implementation must run it (Implementation::phases), and with none named the phase's default
  // is chosen (a serving stack for prefill and decode).
  RunPhase phase = RunPhase::Train;
  // Prefill and decode: what the weights and the K/V cache are stored in (models/workload/inference_formats.hpp);
  // a training step ignores it (its precision is models::TrainingPrecision's).
  InferenceFormats formats;
};

struct ResolvedScenario {
  ScenarioSpec spec;
  Hardware hardware;
  ModelConfig model;
  Implementation impl;
  Strategy strategy;
  Profile profile;
  std::unique_ptr<Layout> layout;
  std::unique_ptr<Mask> mask;
  TileShape tile;
  bool tile_clamped = false;  // the profile's default tile was larger than the block
  std::unique_ptr<Workload> workload;
  std::unique_ptr<CostModel> cost;
  // The implementation's kernel family: seconds of one device's attention work (attention_cost.hpp).
  std::shared_ptr<const AttentionCost> attention;
  // The packed documents (--docs, or a docs:FILE mask's), if any.
  std::shared_ptr<const Documents> documents;
  // usp:UxR: the ring part, a ring of R ranks over the whole sequence whose model has the heads
  // one device attends after the all-to-all (heads / U). Null for the other strategies.
  std::shared_ptr<ResolvedScenario> ring_part;
  // The strategy's attention program (models/program/program.hpp), built last.
  std::shared_ptr<const Program> program;
  // The fabric of the scenario's mp x sp devices (models/transport/) and the transfers of one
  // round of its ring (every position to the next, a double ring's outer hops too; empty without
  // a ring): set by resolve once the program is built; the cost models price ring hops and
  // collectives on it.
  std::shared_ptr<const transport::ScenarioTransport> transport;
  std::vector<transport::Transfer> ring_transfers;
  std::string transport_signature;  // what the transport was built from (rebuilt when it changes)
  // (Re)builds the transport from hardware and profile where they changed, and gives it to the
  // cost model and the ring part's.
  void attach_transport();
  [[nodiscard]] bool ring_crosses_nodes() const noexcept;
  // Whether a tensor-parallel group leaves its node: mp groups sit inside a node while they fit.
  [[nodiscard]] bool tp_crosses_nodes() const noexcept { return spec.mp > hardware.devices_per_node; }
  // After hardware or profile changed (a fit, an interval's perturbed profile, a test's ideal
  // links): the cost model rebuilt from them, and the ring part given the same ones.
  void rebuild_cost();
  // The scenario whose workload and cost the ring stage runs on: ring_part, else this one.
  [[nodiscard]] const ResolvedScenario& ring_scenario() const noexcept { return ring_part ? *ring_part : *this; }
};

// The mask a scenario's implementation must offer: per-document causal ("docs") with packed
// documents, else its mask.
[[nodiscard]] MaskSpec effective_mask(const ScenarioSpec& spec);
// The documents as written, or "" for one sequence (outputs' docs field).
[[nodiscard]] std::string docs_text(const ScenarioSpec& spec);
// Its family name, without a copy (a kernel family asks per block).
[[nodiscard]] std::string_view effective_mask_family(const ScenarioSpec& spec) noexcept;

}  // namespace ringsim::models
