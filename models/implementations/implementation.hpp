#pragma once
// An implementation: the code a user actually runs for context-parallel attention (the Striped
// Attention paper's JAX code, SCFA's Triton kernels, ...), described from its public source as
// data in configs/implementations/NAME.json. It says what the code offers (hardware kinds,
// layouts, masks, strategies), which kernel family times its attention work (the seam into the
// cost model: models/families/attention_cost.hpp), and where in which repository, at which commit, each
// statement was read. Profiles are keyed by (hardware, implementation).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/io/code_source.hpp"
#include "models/implementations/kernel_spec.hpp"
#include "models/implementations/loss_kernel.hpp"
#include "models/implementations/protocol.hpp"
#include "models/implementations/release.hpp"
#include "models/implementations/run_phase.hpp"
#include "models/implementations/strategy.hpp"
#include "models/workload/layout_spec.hpp"
#include "models/workload/mask_spec.hpp"

namespace ringsim::models {

// How far a user can deploy it: a library people train with, a research kernel published with
// a paper (its ring may be ringsim's extension of a one-device kernel), or ringsim's own
// reference kernels (what-if tile loops nobody runs). Planners compete production libraries
// unless asked for the others.
enum class Maturity { Production, Research, Reference };
[[nodiscard]] std::string_view to_string(Maturity m) noexcept;

struct Implementation {
  std::string name;
  std::string description;
  Maturity maturity = Maturity::Production;
  // Lower is preferred when no --impl is given: the default for a scenario is the most
  // preferred implementation that runs on the hardware and offers its mask, layout and strategy.
  std::int64_t preference = 100;
  // Which cost model family times one device's attention work (attention_cost.hpp's registry).
  std::string kernel;
  std::vector<std::string> hardware_kinds;  // "gpu", "tpu"
  std::vector<std::string> layouts;         // layout families: contiguous, striped, zigzag, cyclic, perm, ...
  std::vector<std::string> masks;           // mask families: causal, full, window, docs, qkdrop, hash, ...
  std::vector<std::string> strategies;      // context-parallel strategies: ring, ...
  // Training precisions its kernels and collectives run (models/memory's TrainingPrecision:
  // "bf16" = 16-bit mixed precision, "fp32", "fp8"), as read in its source.
  std::vector<std::string> precisions;
  // The phases it runs ("phases": ["train", "prefill", "decode"], the default): a serving stack
  // whose kernels have no backward model in configs/kernels/ runs prefill and decode only, and is
  // what those phases choose when no implementation is named (Catalog::default_implementation).
  std::vector<RunPhase> phases{RunPhase::Train, RunPhase::Prefill, RunPhase::Decode};
  std::vector<CodeSource> sources;
  std::string notes;
  // The cross-entropy of the stack people train it in ("loss"; memory only: what the loss keeps
  // and its transients at the activations' peak). Undescribed when the file names none.
  LossKernel loss = LossKernel::Undescribed;
  // Its protocol (models/implementations/protocol.hpp; the optional "protocol" object): its messages and what
  // waits for what, and for ring libraries each step's kernel calls and merges.
  Protocol protocol;
  // The attention kernel it calls (models/implementations/kernel_spec.hpp): "kernel_model" names a file of
  // configs/kernels/, shared by every library that calls the same kernel. Kernel family "flash"
  // needs it.
  std::optional<KernelSpec> kernel_model;
  // The kernel it calls instead on newer GPUs, read from its backend selection
  // ("kernel_model_from_compute_capability": [{"compute_capability": 9.0, "kernel_model": NAME}]):
  // from that compute capability up (x 10, ascending), that kernel. TransformerEngine, say, prefers
  // cuDNN's fused attention on 9.0 and later.
  std::vector<std::pair<std::int64_t, KernelSpec>> kernel_from_compute_capability;
  // The release the file describes (its "release", the newest; empty when it names none) and the
  // earlier ones whose kernel differs (models/implementations/release.hpp).
  std::string release;
  std::vector<Release> releases;
  // The first release that has it ("first_release"; empty: as old as its oldest listed release).
  std::string first_release;
  // This implementation as release `release_name` runs: named NAME@RELEASE, its kernel choice the
  // release's. A version between the listed ones runs as the oldest listed release at or above it
  // (an entry stands for the versions since the next older one), one above every listed release as
  // the newest; InputError (field "impl") for a version below first_release, above the newest, or
  // not a version, naming the releases there are.
  [[nodiscard]] Implementation with_release(const std::string& release_name) const;

  // The kernel it calls on a GPU of this compute capability (x 10; 0 unknown: kernel_model's);
  // nullptr when it names none.
  [[nodiscard]] const KernelSpec* kernel_for(std::int64_t compute_capability) const noexcept;
  // Sets kernel_model to the one it calls on a GPU of this compute capability: what a scenario on
  // that GPU runs, so every kernel timing reads kernel_model.
  void select_kernel_for(std::int64_t compute_capability);

  [[nodiscard]] bool runs_on(std::string_view hardware_kind) const noexcept;
  [[nodiscard]] bool runs_precision(std::string_view precision) const noexcept;
  [[nodiscard]] bool runs_phase(RunPhase phase) const noexcept;
  [[nodiscard]] std::string phases_text() const;  // "prefill and decode", "train, prefill and decode"
  // Throws InputError (field "impl") when it does not run `phase`, naming the phases it runs.
  void check_phase(RunPhase phase) const;
  [[nodiscard]] std::string precisions_text() const;  // "bf16, fp8"
  [[nodiscard]] bool offers_layout(const LayoutSpec& layout) const noexcept;
  [[nodiscard]] bool offers_mask(const MaskSpec& mask) const noexcept;
  [[nodiscard]] bool offers_strategy(const Strategy& strategy) const noexcept;
  // Whether it runs this combination: what check_offers accepts (a ring library's steps decide
  // which layouts run under which mask). `mask`: the scenario's effective mask (packed documents
  // are MaskSpec::packed_documents()).
  [[nodiscard]] bool offers(std::string_view hardware_kind, const LayoutSpec& layout, const MaskSpec& mask,
                            const Strategy& strategy) const noexcept;
  // Throws InputError (field "impl", or the field that asks for what is not offered) naming
  // what the implementation does offer.
  void check_offers(std::string_view hardware_kind, const LayoutSpec& layout, const MaskSpec& mask,
                    const Strategy& strategy) const;

  // `configs_dir`: where the kernel ("kernel_model": configs/kernels/) and the ring steps
  // ("protocol.ring_steps": configs/ring_steps/) it names are read.
  // Its ring (if the strategy has one) runs this layout under this mask.
  [[nodiscard]] bool ring_runs(const LayoutSpec& layout, const MaskSpec& mask, const Strategy& strategy) const;
  [[nodiscard]] static Implementation from_json(const nlohmann::json& j, const std::string& file,
                                                const std::string& configs_dir);
  [[nodiscard]] static Implementation load_file(const std::string& path, const std::string& configs_dir);
};

}  // namespace ringsim::models
