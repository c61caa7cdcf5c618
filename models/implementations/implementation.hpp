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
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/io/code_source.hpp"
#include "models/implementations/kernel_spec.hpp"
#include "models/implementations/protocol.hpp"

namespace ringsim::models {

struct Implementation {
  std::string name;
  std::string description;
  // Lower is preferred when no --impl is given: the default for a scenario is the most
  // preferred implementation that runs on the hardware and offers its mask, layout and strategy.
  std::int64_t preference = 100;
  // Which cost model family times one device's attention work (attention_cost.hpp's registry).
  std::string kernel;
  std::vector<std::string> hardware_kinds;  // "gpu", "tpu"
  std::vector<std::string> layouts;         // layout families: contiguous, striped, zigzag, cyclic, perm, ...
  std::vector<std::string> masks;           // mask families: causal, full, window, docs, qkdrop, hash, ...
  std::vector<std::string> strategies;      // context-parallel strategies: ring, ...
  std::vector<CodeSource> sources;
  std::string notes;
  // Its protocol (models/implementations/protocol.hpp; the optional "protocol" object): its messages and what
  // waits for what, and for ring libraries each step's kernel calls and merges.
  Protocol protocol;
  // The attention kernel it calls (models/implementations/kernel_spec.hpp): "kernel_model" names a file of
  // configs/kernels/, shared by every library that calls the same kernel. Kernel family "flash"
  // needs it.
  std::optional<KernelSpec> kernel_model;

  [[nodiscard]] bool runs_on(std::string_view hardware_kind) const noexcept;
  [[nodiscard]] bool offers_layout(std::string_view layout_spec) const noexcept;
  [[nodiscard]] bool offers_mask(std::string_view mask_spec) const noexcept;
  [[nodiscard]] bool offers_strategy(std::string_view strategy_spec) const noexcept;
  // Whether it runs this combination: what check_offers accepts (a ring library's steps decide
  // which layouts run under which mask).
  [[nodiscard]] bool offers(std::string_view hardware_kind, std::string_view layout_spec, std::string_view mask_spec,
                            std::string_view strategy_spec) const noexcept;
  // Throws InputError (field "impl", or the field that asks for what is not offered) naming
  // what the implementation does offer.
  void check_offers(std::string_view hardware_kind, std::string_view layout_spec, std::string_view mask_spec,
                    std::string_view strategy_spec) const;

  // `configs_dir`: where the kernel ("kernel_model": configs/kernels/) and the ring steps
  // ("protocol.ring_steps": configs/ring_steps/) it names are read.
  // Its ring (if the strategy has one) runs this layout under this mask.
  [[nodiscard]] bool ring_runs(std::string_view layout_spec, std::string_view mask_spec, std::string_view strategy_spec) const;
  [[nodiscard]] static Implementation from_json(const nlohmann::json& j, const std::string& file,
                                                const std::string& configs_dir);
  [[nodiscard]] static Implementation load_file(const std::string& path, const std::string& configs_dir);
};

// The family of a layout, mask or strategy spec: its name before the first ':' ("cyclic:4" ->
// "cyclic", "hash:8:zipf:1.5" -> "hash"); `ring` is the contiguous layout's other name.
[[nodiscard]] std::string layout_family(std::string_view layout_spec);
[[nodiscard]] std::string mask_family(std::string_view mask_spec);
[[nodiscard]] std::string strategy_family(std::string_view strategy_spec);

// Every layout and mask family ringsim can count (Layout::parse, parse_mask_layout, parse_mask,
// parse_sparse_mask accept exactly these; a test keeps the lists in step). Implementations offer
// subsets of them.
[[nodiscard]] const std::vector<std::string>& known_layout_families();
[[nodiscard]] const std::vector<std::string>& known_mask_families();
// InputError (field "layout" / "mask") for a spec whose family ringsim does not know at all, so
// that an unknown name is reported as such before any implementation is looked for.
void check_known_layout(std::string_view layout_spec);
void check_known_mask(std::string_view mask_spec);

}  // namespace ringsim::models
