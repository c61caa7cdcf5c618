#include "models/pipeline/stage_split.hpp"

namespace ringsim::models {

std::int64_t layers_per_chunk(const ModelConfig& m, const PipelineSchedule& s) noexcept {
  return m.layers / s.chunks();
}

double stage_parameters(const ModelConfig& m, const PipelineSchedule& s, std::int64_t rank) noexcept {
  if (!s.pipelined() || m.attention_only) return static_cast<double>(m.parameters());
  const double d = static_cast<double>(m.d_model);
  const double embedding = static_cast<double>(m.vocab) * d;
  const double all_layers =
      static_cast<double>(m.parameters()) - (m.tied_embeddings ? 1.0 : 2.0) * embedding - d;  // less the final norm
  double p = all_layers * static_cast<double>(s.virtual_stages) / static_cast<double>(s.chunks());
  if (rank == 0) p += embedding;
  if (rank == s.stages - 1) p += embedding + d;
  return p;
}

}  // namespace ringsim::models
