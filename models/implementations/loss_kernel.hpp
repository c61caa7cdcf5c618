#pragma once
// How the training stack that runs an implementation computes the cross-entropy over the LM
// head's logits ("loss" in configs/implementations/), as far as memory goes: what the loss keeps
// for its backward, and the most it holds at once while it runs. The loss runs where a step's
// activations peak (after the last layer's forward, before any layer's backward), so its
// transients add to that peak. Each kind is read in its stack's code (loss_kernel.cpp).
#include <string>
#include <string_view>

namespace ringsim::models {

enum class LossKernel {
  // No stack is named: the fp32 logits a cross-entropy keeps for its backward, nothing more.
  Undescribed,
  // Megatron-core's vocab-parallel cross-entropy (NeMo, Megatron-LM).
  MegatronVocabParallel,
  // torch.nn.functional.cross_entropy on the upcast logits (torchtitan, Hugging Face Transformers).
  TorchCrossEntropy,
  // FlashAttention's Triton cross-entropy with inplace_backward (InternEvo).
  FlashAttnCrossEntropy,
};

// "megatron-vocab-parallel", "torch-cross-entropy", "flash-attn-cross-entropy"; InputError naming `file` and field "loss".
[[nodiscard]] LossKernel parse_loss_kernel(std::string_view text, const std::string& file);
[[nodiscard]] std::string_view to_string(LossKernel k) noexcept;

// Bytes per logit of the rank's vocabulary shard (tokens x vocab / mp elements).
struct LossMemory {
  double kept = 4;       // held from the loss's forward to its backward (fp32 softmax or log-probs, or the logits)
  double transient = 0;  // held beyond `kept` at the loss's busiest moment
  const char* kept_source = "";
  const char* transient_source = "";
};
// logits_bytes: the LM head's output dtype (2 for bf16 and fp8 training, whose LM head writes
// bf16; 4 for fp32).
[[nodiscard]] LossMemory loss_memory(LossKernel k, double logits_bytes) noexcept;

}  // namespace ringsim::models
