#pragma once
// The layer of Korthikanti et al.'s activation count (arXiv 2205.05198, section 4): one GELU
// multi-head layer, hidden 4096, 32 heads of 128, MLP 4 x hidden, no vocabulary. The memory
// tests check the activation formulas on it.
#include "models/workload/transformer.hpp"

namespace ringsim::test {

inline models::ModelConfig gelu_mha_layer() {
  models::ModelConfig m;
  m.d_model = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.head_dim = 128;
  m.d_ff = 4 * 4096;
  m.layers = 1;
  m.vocab = 0;
  m.mlp = "gelu";
  return m;
}

}  // namespace ringsim::test
