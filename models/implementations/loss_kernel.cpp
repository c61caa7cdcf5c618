#include "models/implementations/loss_kernel.hpp"

#include "models/io/error.hpp"

namespace ringsim::models {

LossKernel parse_loss_kernel(std::string_view text, const std::string& file) {
  if (text == "megatron-vocab-parallel") return LossKernel::MegatronVocabParallel;
  if (text == "torch-cross-entropy") return LossKernel::TorchCrossEntropy;
  if (text == "flash-attn-cross-entropy") return LossKernel::FlashAttnCrossEntropy;
  throw InputError(file, 0, "loss",
                   "expected \"megatron-vocab-parallel\", \"torch-cross-entropy\" or \"flash-attn-cross-entropy\", got '" +
                       std::string(text) + "'");
}

std::string_view to_string(LossKernel k) noexcept {
  switch (k) {
    case LossKernel::MegatronVocabParallel: return "megatron-vocab-parallel";
    case LossKernel::TorchCrossEntropy: return "torch-cross-entropy";
    case LossKernel::FlashAttnCrossEntropy: return "flash-attn-cross-entropy";
    case LossKernel::Undescribed: break;
  }
  return "";
}

namespace {

constexpr const char* kKeptUndescribed =
    "fp32 logits of the rank's vocabulary shard kept by the cross-entropy for its backward (no stack named: its "
    "transient copies are not counted)";
constexpr const char* kKeptMegatron =
    "fp32 logits of the rank's vocabulary shard kept by Megatron's vocab-parallel cross-entropy: it upcasts the "
    "logits and saves their softmax in place (NVIDIA/Megatron-LM @ d98e8a6 "
    "megatron/core/tensor_parallel/cross_entropy.py, calculate_logits_max, save_for_backward(exp_logits))";
constexpr const char* kTransientMegatron =
    "the bf16 logits beside their fp32 upcast while the loss's forward runs (the caller still holds them), and in "
    "the backward the fp32 gradient written in place into the saved softmax beside its cast to the logits' bf16 "
    "(autograd casts a Function's gradient to its input's dtype): 2 bytes per logit; none in fp32 "
    "(NVIDIA/Megatron-LM @ d98e8a6 megatron/core/tensor_parallel/cross_entropy.py)";
constexpr const char* kKeptTorch =
    "fp32 log-probabilities of the rank's vocabulary shard, which log_softmax saves for its backward "
    "(torch.nn.functional.cross_entropy on logits.float(): pytorch/torchtitan @ b5bcd76c6 "
    "torchtitan/components/loss.py cross_entropy_loss; huggingface/transformers @ 0114da07ec "
    "src/transformers/loss/loss_utils.py ForCausalLMLoss)";
constexpr const char* kTransientTorch =
    "the loss's backward holds three fp32 tensors of the logits' size at once: the saved log-probabilities, "
    "nll_loss's dense gradient and log_softmax's gradient (its forward holds less: the bf16 logits, their fp32 "
    "upcast and the log-probabilities); 8 bytes per logit beyond the kept 4";

constexpr const char* kKeptFlash =
    "the logits of the rank's vocabulary shard in their own dtype, which FlashAttention's Triton cross-entropy saves "
    "for its backward and overwrites with their gradient (inplace_backward; its per-row fp32 log-sum-exp is "
    "negligible): Dao-AILab/flash-attention @ 900b379 flash_attn/ops/triton/cross_entropy.py, as InternEvo calls it "
    "(InternLM/InternEvo @ ddc82fd internlm/model/losses/ce_loss.py FlashGPTLMLoss)";

}  // namespace

LossMemory loss_memory(LossKernel k, double logits_bytes) noexcept {
  switch (k) {
    case LossKernel::MegatronVocabParallel:
      // .float() of fp32 logits is the tensor itself, and the gradient needs no cast.
      return {4, logits_bytes < 4 ? logits_bytes : 0, kKeptMegatron, kTransientMegatron};
    case LossKernel::TorchCrossEntropy:
      // The backward's 3 x 4 bytes are the most, whatever the logits' dtype: the forward holds
      // 2 + 4 + 4 with bf16 logits, 4 + 4 with fp32 ones (.float() is then the tensor itself).
      return {4, 8, kKeptTorch, kTransientTorch};
    case LossKernel::FlashAttnCrossEntropy:
      // Its kernels upcast block by block on chip; nothing of the logits' size beyond them.
      return {logits_bytes, 0, kKeptFlash, ""};
    case LossKernel::Undescribed: break;
  }
  return {4, 0, kKeptUndescribed, ""};
}

}  // namespace ringsim::models
