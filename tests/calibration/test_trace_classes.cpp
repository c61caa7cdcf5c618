// The kernel classes of configs/trace/kernel_classes.json on the names real runs show (each
// library's own spelling, as its code or a published trace names the kernel): communication
// that is not NCCL (DeepEP, NVSHMEM, symmetric memory, custom all-reduce, MSCCL++), Hopper and
// Blackwell attention with prefill told from decode, GEMMs by their library's names; and a step of
// such kernels summarized, its communication and exposed communication counted.
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "calibration/trace/kineto.hpp"
#include "calibration/trace/step_summary.hpp"
#include "calibration/trace/trace_check.hpp"
#include "tests/support/kineto_builder.hpp"
#include "tests/support/trace_support.hpp"

using namespace ringsim;
using calibration::OpClass;

namespace {

// The names of the four traces (H800 DeepSeek training, B200 and H100 vLLM, H100 prefill)
// and their neighbours in the same libraries.
namespace names {
const std::string kDeepEpCombine =
    "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, bool const*, int4 const*, "
    "float const*, int4 const*, int4 const*, int const*, int const*, dpsk::ep::internode::SourceMeta const*, int const*, "
    "int const*, int const*, int, int, int, int, void*, int, int, void**, int, int, int, int, int*)";
const std::string kDeepEpDispatch =
    "void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*, long*, float*, dpsk::ep::internode::SourceMeta*, "
    "int4 const*, float const*, long const*, float const*, int*, int*, int*, int*, int const*, int const*, int const*, int "
    "const*, int, int, int, int, int, bool const*, void*, int, int, void**, int, int, int, int, int*)";
const std::string kMultimem =
    "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned "
    "int**, unsigned long, unsigned long)";
const std::string kVllmAllReduce =
    "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, "
    "__nv_bfloat16*, int, int)";
const std::string kFmhaContext = "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvSlidingOrChunkedCausalP16VarSeqQ128Kv128PersistentContext";
const std::string kFmhaGen = "fmhaSm100aKernel_QE4m3KvE2m1OE4m3H128PagedKvDenseP16VarSeqQ8Kv128PersistentSwapsAbForGen";
const std::string kPrepareVarlen =
    "void flash::prepare_varlen_num_blocks_kernel<1, true>(int, int, int, int const*, int const*, int const*, int const*, "
    "int const*, int const*, int, int, int, int, int, cutlass::FastDivmod, cutlass::FastDivmod, int*, int*, int*, int*, "
    "int*, bool, bool, bool, int)";
const std::string kBmmMx = "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_Ab32_Bb32_Cb32_t128x8x512_s3_et128x8";
const std::string kBmmBf16 = "bmm_Bfloat16_MxE2m1MxE4m3_Fp32_Ab32_Bb32_t128x8x512_s3_et128x8";
}  // namespace names

OpClass class_of(const std::string& name) {
  calibration::GpuOp op;
  op.name = name;
  return test::trace_classes().classify(op);
}

}  // namespace

TEST_CASE("kernel classes: the names of real runs in their class", "[trace][classes]") {
  const std::vector<std::pair<std::string, OpClass>> cases{
      // Communication beyond NCCL.
      {names::kDeepEpCombine, OpClass::Collective},
      {names::kDeepEpDispatch, OpClass::Collective},
      {"void dpsk::ep::internode::notify_dispatch<false, 8>(int const*, long*, int, int const*, int*)", OpClass::Collective},
      {"void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*, int, int)", OpClass::Collective},
      {"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*, float*, int*, int*)", OpClass::Collective},
      {"void deep_ep::legacy::internode_ll::combine<false, 7168>(void*, void*, long const*)", OpClass::Collective},
      {"void deep_ep::elastic::dispatch_impl<false, 8, 4>(void*, void*)", OpClass::Collective},
      {"void alltoall_on_stream_kernel<int>(int, int*, int const*, unsigned long)", OpClass::Collective},
      {"barrier_on_stream_kernel_threadgroup(int, int)", OpClass::Collective},
      {"nvshmemi_proxy_rma_entrypoint(void*, void*, rma_bytesdesc_t, int)", OpClass::P2p},
      {names::kMultimem, OpClass::Collective},
      {"void (anonymous namespace)::two_shot_all_reduce_kernel_inplace<c10::BFloat16, 16, 8>(c10::BFloat16**, unsigned "
       "long, unsigned long, unsigned int**, unsigned long, unsigned long)",
       OpClass::Collective},
      {"void (anonymous namespace)::one_shot_all_reduce_kernel<float, 16, 4>(float**, float*, float*)", OpClass::Collective},
      {names::kVllmAllReduce, OpClass::Collective},
      {"void sglang::cross_device_reduce_2stage<__half, 8>(sglang::RankData*, sglang::RankSignals, sglang::Signal*, __half*, int, int)",
       OpClass::Collective},
      {"void sglang::allreduce_1shotLL_1node<__nv_bfloat16>(mscclpp::MemoryChannelDeviceHandle*, __nv_bfloat16*, "
       "__nv_bfloat16*, void*, int, int, unsigned long)",
       OpClass::Collective},
      {"void mscclpp::collective::allreducePacket<__nv_bfloat16>(__nv_bfloat16*, __nv_bfloat16*, __nv_bfloat16*, "
       "mscclpp::DeviceHandle<mscclpp::MemoryChannel>*, unsigned long)",
       OpClass::Collective},
      {"void flashinfer::trtllm_allreduce_fusion::allreduce_fusion_kernel_oneshot_lamport<(flashinfer::trtllm_allreduce_"
       "fusion::AllReduceFusionPattern)1, __nv_bfloat16, 8, false, false>(flashinfer::trtllm_allreduce_fusion::"
       "AllReduceFusionParams<__nv_bfloat16>)",
       OpClass::Collective},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", OpClass::Collective},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", OpClass::P2p},
      // Attention: Blackwell (trtllm-gen), Hopper (FlashAttention-3, FlashInfer, cuDNN), prefill
      // told from decode where the name says.
      {names::kFmhaContext, OpClass::AttentionFwd},
      {names::kFmhaGen, OpClass::AttentionDecode},
      {"fmhaSm100fKernel_QkvBfloat16OBfloat16H128PagedKvCustomP32VarSeqQ128Kv128StaticKeepsAbForGen", OpClass::AttentionDecode},
      {names::kPrepareVarlen, OpClass::AttentionFwd},
      {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, "
       "cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<176>, cute::C<128> >, 128, "
       "cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, true, false, false, true, true, true, "
       "true, false>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128> > > > > >",
       OpClass::AttentionFwd},
      {"void flash::compute_attn_ws<Flash_fwd_kernel_traits<192, 128, 128, 12, 2, false, 1, cutlass::bfloat16_t, 128>, true, "
       "flash::SingleTileScheduler, flash::SeqLenTraits<true> >(flash::CollectiveMainloopFwd)",
       OpClass::AttentionFwd},
      {"void flashinfer::BatchPrefillWithPagedKVCacheKernel<flashinfer::KernelTraits<(flashinfer::MaskMode)1, 128u, 1u, 4u>, "
       "flashinfer::PagedParams>(flashinfer::PagedParams)",
       OpClass::AttentionFwd},
      {"void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 4u, 8u, 16u, 1u, 8u>(flashinfer::DecodeParams)",
       OpClass::AttentionDecode},
      {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0", OpClass::AttentionFwd},
      {"fmha_v2_flash_attention_bf16_64_128_S_q_paged_kv_128_causal_sm90_kernel_nl_tiled", OpClass::AttentionFwd},
      // GEMMs by their library's names; a helper that only names cutlass is not one.
      {names::kBmmMx, OpClass::Gemm},
      {names::kBmmBf16, OpClass::Gemm},
      {"nvjet_sm100_tss_128x256_64x6_2x1_2cta_h_bz_TNT", OpClass::Gemm},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
       OpClass::Gemm},
      {"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>(dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel::Params)",
       OpClass::Gemm},
      {"void deep_gemm::fp8_gemm_kernel<128u, 128u, 128u, 1u, 8u, 128u, 128u, 4u, 5u, 8u, 1u>(float*, int*, unsigned int)", OpClass::Gemm},
      {"void marlin_moe_wna16::Marlin<(vllm::ScalarTypeId)5, 256, 1, 8, 8, true, 4, 8, false>(int4 const*, int4 const*)", OpClass::Gemm},
      {"fused_moe_kernel", OpClass::Gemm},
      {"void cutlass_cudnn_train::Kernel<cutlass_cudnn_train::reduction::kernel::ReduceSplitK<cutlass_cudnn_train::MatrixShape<4, 128> > >()",
       OpClass::Gemm},
      {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_128x128_32x3_tn_align8>(Params)", OpClass::Gemm},
      // Neither: DeepEP's layout kernel computes locally; CUB scans in DeepSeek's namespace.
      {"void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, int, int)", OpClass::Other},
      {"void cdpsk::ep::CUB_200200_900_NS::DeviceScanKernel<int>(int*)", OpClass::Other},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", OpClass::Other},
  };
  for (const auto& [name, expected] : cases) {
    INFO(name);
    CHECK(calibration::kOpClassNames[index(class_of(name))] == calibration::kOpClassNames[index(expected)]);
  }
}

TEST_CASE("a step of DeepEP, multimem and custom all-reduce: communication and exposed communication counted",
          "[trace][classes]") {
  // Stream 7 computes 0-300 us (Blackwell prefill attention, FA3's scheduler helper, the MoE
  // GEMMs); stream 20 communicates 250-550 us: 50 us under compute, 250 us exposed.
  const std::vector<test::KernelEvent> ops{
      {names::kFmhaContext, 7, 0, 100},         {names::kPrepareVarlen, 7, 100, 10},   {names::kBmmMx, 7, 110, 90},
      {names::kBmmBf16, 7, 200, 100},           {names::kDeepEpCombine, 20, 250, 150}, {names::kMultimem, 20, 400, 50},
      {names::kVllmAllReduce, 20, 450, 100},
  };
  const auto trace = calibration::parse_kineto_trace(test::kineto_trace(ops, 1000), "step.json");
  const auto s = calibration::summarize(trace, test::trace_classes());
  REQUIRE(s.steps.size() == 1);
  const auto& st = s.steps.front();
  CHECK(s.unclassified.empty());
  CHECK(st.class_us[index(OpClass::AttentionFwd)] == Approx(110));
  CHECK(st.class_us[index(OpClass::Gemm)] == Approx(190));
  CHECK(st.class_us[index(OpClass::Collective)] == Approx(300));
  CHECK(st.class_us[index(OpClass::Other)] == 0);
  CHECK(st.communication_us == Approx(300));
  CHECK(st.exposed_communication_us == Approx(250));
  // Forward attention and no backward: a forward pass, compared with a prefill.
  CHECK(calibration::trace_phase({s}) == models::RunPhase::Prefill);
}

TEST_CASE("the phase of a trace: training, prefill, decode, and what cannot be told", "[trace][classes]") {
  const auto phase = [](const std::vector<std::string>& kernels) {
    std::vector<test::KernelEvent> ops;
    for (std::size_t i = 0; i < kernels.size(); ++i) ops.push_back({kernels[i], 7, 100.0 * static_cast<double>(i), 50});
    return calibration::trace_phase({calibration::summarize(
        calibration::parse_kineto_trace(test::kineto_trace(ops, 1000), "t.json"), test::trace_classes())});
  };
  const std::string bwd = "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128>>";
  CHECK(phase({names::kPrepareVarlen, names::kFmhaContext, bwd}) == models::RunPhase::Train);
  CHECK(phase({names::kFmhaContext, names::kBmmBf16}) == models::RunPhase::Prefill);
  CHECK(phase({names::kFmhaGen, names::kVllmAllReduce}) == models::RunPhase::Decode);
  CHECK_THROWS_WITH(phase({names::kFmhaGen, names::kFmhaContext}), Catch::Contains("mix prefill and decode"));
  CHECK_THROWS_WITH(phase({names::kBmmBf16, names::kMultimem}), Catch::Contains("no attention kernel"));
}
