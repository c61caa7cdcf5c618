#pragma once
// What each pipeline rank holds of the model, as Megatron-LM splits it (NVIDIA/Megatron-LM @
// d98e8a6, megatron/core/transformer/transformer_block.py get_num_layers_to_build: the layers
// evenly over stages x virtual stages; megatron/core/models/gpt/gpt_model.py: the input
// embedding on the first stage (pre_process), the output layer on the last (post_process),
// where tied embeddings keep a copy of the embedding matrix, kept equal by an all-reduce of its
// gradient between the two: megatron/core/models/common/language_module/language_module.py).
#include <cstdint>

#include "models/pipeline/schedule.hpp"
#include "models/workload/transformer.hpp"

namespace ringsim::models {

// Layers in one of a rank's chunks (all the model's without a pipeline).
[[nodiscard]] std::int64_t layers_per_chunk(const ModelConfig& m, const PipelineSchedule& s) noexcept;

// Parameters rank `rank` holds before tensor parallelism splits them: its layers, the embedding
// on the first rank, the output layer (or the tied embedding's copy) and the final norm on the
// last; the whole model without a pipeline (ModelConfig::parameters).
[[nodiscard]] double stage_parameters(const ModelConfig& m, const PipelineSchedule& s, std::int64_t rank) noexcept;

}  // namespace ringsim::models
