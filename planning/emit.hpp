#pragma once
// A plan as a training stack takes it: the command-line flags of the chosen configuration for
// Megatron-LM (`ringsim plan --emit megatron`, every flag one Megatron's parser defines at the commit
// data/stacks/megatron_flags.csv cites) or the configuration function torchtitan runs (`--emit
// torchtitan`, every field one data/stacks/torchtitan_fields.csv cites) or the calls of
// ring-flash-attention (`--emit ring-flash-attn`, data/stacks/ring_flash_attn_api.csv) or DeepSpeed's
// configuration and Ulysses attention (`--emit deepspeed`, data/stacks/deepspeed_config.csv). A plan whose implementation
// the stack does not run (a context-parallel ring of another library) is refused, naming what to
// plan with instead.
#include <string>
#include <string_view>

#include "planning/evaluate.hpp"

namespace ringsim::planning {

struct PlanRequest;

enum class Stack { Megatron, Torchtitan, RingFlashAttn, DeepSpeed };

// "megatron" | "torchtitan" | "ring-flash-attn" | "deepspeed"; InputError (field "emit") otherwise, naming them.
[[nodiscard]] Stack parse_stack(std::string_view text);

// The launch flags of `plan` for `stack`, with comment lines (#) for what the flags do not say:
// the world size they imply and where the stack's run differs from the plan's figures.
// `model` is the plan's (torchtitan places layers on pipeline stages by count).
[[nodiscard]] std::string emit_launch(const SweepResult& plan, const PlanRequest& request, const models::ModelConfig& model,
                                      Stack stack);

}  // namespace ringsim::planning
