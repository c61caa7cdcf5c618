#pragma once
// A sweep: the cross product of scenario axes (phase, hardware, model, implementation, strategy,
// mesh, data-parallel degree, n_seq, cached tokens, batch, layout, mask, tile, topology, ZeRO
// stage, recomputation),
// read from a sweep file (JSON) or built from flags. Point i of the sweep is decoded from i in
// mixed radix, outermost axis first, so the sweep's order is fixed by the grid alone.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/inference/phase.hpp"
#include "models/memory/memory.hpp"
#include "models/pipeline/schedule.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::planning {

enum class Engine { Analytic, Des };
[[nodiscard]] const char* to_string(Engine e) noexcept;

struct Mesh {
  std::int64_t mp = 1;
  std::int64_t sp = 1;
  friend bool operator==(const Mesh&, const Mesh&) = default;
};

// The axes of a sweep, outermost first. An axis of one value does not change the points'
// indices, so the phase and cached-token axes leave training sweeps as they were.
enum Axis : int { kPhase, kHardware, kModel, kImpl, kCp, kMesh, kDp, kPp, kPpSchedule, kNSeq, kCached, kBatch, kMicro,
                  kLayout, kMask, kTile, kTopology, kZero, kRecompute, kAxes };

// One point of a sweep: the scenario and the planning axes the scenario does not carry.
struct SweepPoint {
  std::int64_t index = 0;
  std::array<std::int64_t, kAxes> axis{};  // the value's position along each axis
  models::ScenarioSpec spec;  // impl empty: the catalog's choice
  std::int64_t dp = 1;
  // Pipeline stages, their schedule and the micro-batches of a step (docs/pipeline.md); checked
  // against the model when the point is evaluated (a row skipped with its reason).
  models::PipelineSchedule pipeline;
  models::Sharding zero = models::Sharding::None;
  std::optional<models::Recompute> recompute;  // nullopt: the profile's
  std::string topology;                        // empty: the hardware's default
  // Train: a training step. Prefill: spec.n_seq new tokens over `cached_tokens` in the KV cache;
  // decode: one step over caches of `cached_tokens` (models/inference/phase.hpp).
  models::RunPhase phase = models::RunPhase::Train;
  std::int64_t cached_tokens = 0;
};

struct SweepGrid {
  // Axes, outermost first. Empty strings mean "the default": impl (the catalog's choice for the
  // point's hardware, mask, strategy and layout), topology (the hardware's), tile (the profile's,
  // clamped to the block), recompute (the profile's).
  std::vector<models::RunPhase> phase{models::RunPhase::Train};
  std::vector<std::string> hardware{"a100-80gb"};
  std::vector<std::string> model{"ringattn-1b"};
  std::vector<std::string> impl{""};
  std::vector<models::Strategy> cp{models::Strategy{}};
  std::vector<Mesh> mesh{{1, 8}};
  std::vector<std::int64_t> dp{1};
  std::vector<std::int64_t> pp{1};                       // pipeline stages
  std::vector<std::string> pp_schedule{"1f1b"};          // "1f1b" | "interleaved:V"
  std::vector<std::int64_t> n_seq{65536};
  std::vector<std::int64_t> cached_tokens{0};  // prefill: in the KV cache; decode: each cache's tokens
  std::vector<std::int64_t> batch{1};
  std::vector<std::int64_t> micro_batches{1};            // per replica and step, each `batch` sequences
  std::vector<models::LayoutSpec> layout{models::LayoutSpec{}, models::LayoutSpec::parse("striped")};
  std::vector<models::MaskSpec> mask{models::MaskSpec{}};
  std::vector<std::optional<models::TileShape>> tile{std::nullopt};
  std::vector<std::string> topology{""};
  std::vector<models::Sharding> zero{models::Sharding::Zero3};  // predict's default
  std::vector<std::optional<models::Recompute>> recompute{std::nullopt};
  // Not axes: one value for the whole sweep.
  std::string profile;         // empty: each (hardware, implementation)'s own
  std::int64_t kv_buffers = 2;
  // Sequences per step over all replicas (0: none): each point then runs global_batch / (dp x
  // batch) micro-batches (a point it does not divide is a skipped row), as a training run of a
  // fixed global batch does; instead of the micro_batches axis.
  std::int64_t global_batch = 0;
  // Whether global_batch splits over `replicas` (a point's dp) into micro-batches of `sequences`
  // (its batch): the evaluator skips a point it does not; the prefilter leaves it out unevaluated
  // by this rule.
  [[nodiscard]] bool splits_global_batch(std::int64_t replicas, std::int64_t sequences) const noexcept {
    return global_batch % replicas == 0 && (global_batch / replicas) % sequences == 0;
  }
  // Precision, sequence parallelism, optimizer offload, headroom (models/memory/memory.hpp).
  models::MemorySettings memory;
  // What prefill and decode points store weights and K/V cache in (models/workload/inference_formats.hpp;
  // "weights", "kv_cache" in the file); training points ignore it.
  models::InferenceFormats formats;
  Engine engine = Engine::Analytic;
  // Rows carry the 90 % interval of the step where the profile is fitted (models/analytic/interval.hpp):
  // two more predictions per fitted parameter, each point. Off for sweeps where speed matters more.
  bool intervals = true;

  // Number of points; InputError (field "sweep") past 2^40 or when an axis is empty.
  [[nodiscard]] std::int64_t size() const;
  [[nodiscard]] std::array<std::int64_t, kAxes> axis_sizes() const;
  [[nodiscard]] SweepPoint point(std::int64_t index) const;
  // Whether any point is a prefill or a decode: the rows then carry the inference columns.
  [[nodiscard]] bool has_inference() const;

  // The sweep file: an object whose keys are the axes above (a value or a list of values; phase
  // as "train", "prefill" or "decode", cached_tokens non-negative integers) and
  // profile, kv_buffers, engine, intervals (true or false); mesh as "MPxSP" strings, or mp and sp lists crossed. Unknown
  // keys and wrong types are InputErrors naming the file and the field.
  [[nodiscard]] static SweepGrid from_json(const nlohmann::json& j, const std::string& file);
  [[nodiscard]] nlohmann::json to_json() const;
  // A 16-hex-digit hash of to_json(): sweep outputs carry it, so resume and merge can tell
  // outputs of another sweep apart.
  [[nodiscard]] std::string fingerprint() const;

  // Every name resolves (hardware, model, impl, cp, layout and mask families, topology); every
  // count is positive. InputError naming `file` and the field otherwise. Combinations that do
  // not go together (an implementation that lacks a layout, n_seq not divisible by sp) are not
  // errors: the sweep reports them as skipped rows.
  void validate(const models::Catalog& catalog, const std::string& file) const;
};

// "node:G", "nodes:NxG", "torus:AxB[xC]": devices per node (G; a torus is one node) and in all.
struct TopologyShape {
  std::int64_t devices_per_node = 0;
  std::int64_t devices = 0;
};
[[nodiscard]] TopologyShape parse_topology_shape(const std::string& spec);
// The scenario on `topology` (empty: the hardware's own): the analytic model sees a topology
// through its node size (which hops leave a node); InputError (field "topology") when the mesh
// does not fit it. The simulator takes the topology itself (sim::StepOptions::topology).
void apply_topology(models::ResolvedScenario& s, const std::string& topology);
// The scenario's devices in nodes of `devices_per_node` GPUs: the machine cut or grown to that
// size (MachineSpec::with_gpus_per_node) and the cost model and transport rebuilt on it;
// InputError (field "topology", naming `topology`) when a PCIe tree would have to grow.
void place_in_nodes(models::ResolvedScenario& s, std::int64_t devices_per_node, const std::string& topology);

}  // namespace ringsim::planning
