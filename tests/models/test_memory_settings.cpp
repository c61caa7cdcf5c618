// The memory model's settings (models/memory/memory.hpp): Megatron sequence parallelism, training
// precision, optimizer offload, the fixed per-device costs and the headroom, and the Ring
// Attention paper's maximum-context table checked out of sample.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/analytic/analytic.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "models/memory/memory.hpp"
#include "tests/support/gelu_layer.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim::models;
using ringsim::test::resolve_scenario;

namespace {
using ringsim::test::gelu_mha_layer;
constexpr double kGiB = kBytesPerGiB;
}  // namespace

TEST_CASE("memory: Megatron sequence parallelism splits every activation over mp (Korthikanti's 34/t)", "[memory]") {
  const auto m = gelu_mha_layer();
  const double lse = 4.0 * 32;
  const double whole = activation_bytes_per_token_layer(m, 1, Recompute::None);
  for (const std::int64_t mp : {2, 4, 8}) {
    CAPTURE(mp);
    const double with_sp = activation_bytes_per_token_layer(m, mp, Recompute::None, {}, true);
    CHECK(with_sp == Approx(whole / static_cast<double>(mp)));
    // Without it the norms' inputs and outputs (4 x 2 d) stay whole on every rank.
    CHECK(activation_bytes_per_token_layer(m, mp, Recompute::None) ==
          Approx(8.0 * 4096 + (24.0 * 4096 + lse) / static_cast<double>(mp)));
    CHECK(activation_bytes_per_token_layer(m, mp, Recompute::Full, {}, true) ==
          Approx(2.0 * 4096 / static_cast<double>(mp)));
  }
  // Through estimate_memory: the default is on, and with mp = 1 the switch changes nothing.
  const auto tp = resolve_scenario("h100-sxm", "llama3-70b", 8, 4, 131072, "zigzag", "causal", std::nullopt, "te-p2p");
  MemoryOptions o;
  o.sharding = Sharding::Zero3;
  o.recompute = Recompute::Selective;
  const auto on = estimate_memory(tp, o);
  o.settings.sequence_parallel = false;
  const auto off = estimate_memory(tp, o);
  CHECK(on.activations_bytes < 0.6 * off.activations_bytes);
  const auto one = resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 131072, "zigzag", "causal", std::nullopt, "te-p2p");
  o.settings.sequence_parallel = true;
  const double a = estimate_memory(one, o).activations_bytes;
  o.settings.sequence_parallel = false;
  CHECK(estimate_memory(one, o).activations_bytes == a);
}

TEST_CASE("memory: precision sets the bytes of model states and kept activations", "[memory]") {
  const auto m = gelu_mha_layer();
  const double lse = 4.0 * 32;
  const auto fp32 = PrecisionBytes::of(TrainingPrecision::Fp32);
  const auto fp8 = PrecisionBytes::of(TrainingPrecision::Fp8);
  // fp32 doubles every kept tensor but the log-sum-exp, which is fp32 already.
  for (const auto r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    const double b16 = activation_bytes_per_token_layer(m, 1, r);
    const double b32 = activation_bytes_per_token_layer(m, 1, r, fp32);
    CHECK(b32 == Approx(r == Recompute::Full ? 2 * b16 : 2 * b16 - lse));
  }
  // fp8 keeps the matmul and attention inputs as one byte: norm outputs 2d, Q K V O 4d, GELU's
  // output (the second matmul's input) f.
  CHECK(activation_bytes_per_token_layer(m, 1, Recompute::None, fp8) ==
        Approx(activation_bytes_per_token_layer(m, 1, Recompute::None) - (2.0 * 4096 + 4.0 * 4096 + 4.0 * 4096)));

  // Model states: 16 bytes per parameter either way, split 2 + 2 + 12 or 4 + 4 + 8.
  const auto s = resolve_scenario("a100-80gb", "ringattn-7b", 1, 8, 65536, "contiguous", "causal", std::nullopt,
                                  "jax-blockwise");
  const double p = static_cast<double>(s.model.parameters());
  MemoryOptions o;
  o.settings.precision = TrainingPrecision::Fp32;
  const auto e = estimate_memory(s, o);
  CHECK(e.parameters_bytes == Approx(4 * p));
  CHECK(e.gradients_bytes == Approx(4 * p));
  CHECK(e.optimizer_bytes == Approx(8 * p));
  // fp32 K/V travel in fp32: the ring's buffers scale from the profile's wire dtype to 4 bytes.
  MemoryOptions b;
  CHECK(e.strategy.bytes ==
        Approx(estimate_memory(s, b).strategy.bytes * 4 / static_cast<double>(s.profile.kv_wire_bytes)));
}

TEST_CASE("memory: a precision the implementation or the hardware cannot run is refused, naming it", "[memory]") {
  MemoryOptions o;
  o.settings.precision = TrainingPrecision::Fp32;
  // FlashAttention kernels take fp16 and bf16 only.
  const auto flash = resolve_scenario("a100-80gb", "llama3-8b", 1, 8, 65536, "zigzag", "causal", std::nullopt,
                                      "ring-flash-attn");
  try {
    (void)estimate_memory(flash, o);
    FAIL("fp32 on ring-flash-attn was accepted");
  } catch (const InputError& e) {
    CHECK(e.field() == "precision");
    CHECK(std::string(e.what()).find("ring-flash-attn") != std::string::npos);
  }
  // fp8: TransformerEngine runs it, but only where the tensor cores have it (Hopper, not A100).
  o.settings.precision = TrainingPrecision::Fp8;
  const auto te_a100 = resolve_scenario("a100-80gb", "llama3-8b", 1, 8, 65536, "zigzag", "causal", std::nullopt, "te-p2p");
  CHECK_THROWS_AS(estimate_memory(te_a100, o), InputError);
  const auto te_h100 = resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 65536, "zigzag", "causal", std::nullopt, "te-p2p");
  const auto e8 = estimate_memory(te_h100, o);
  o.settings.precision = TrainingPrecision::Bf16;
  const auto e16 = estimate_memory(te_h100, o);
  CHECK(e8.activations_bytes < e16.activations_bytes);
  CHECK(e8.strategy.bytes == Approx(e16.strategy.bytes / 2));
  CHECK(parse_training_precision("fp16") == TrainingPrecision::Bf16);
  CHECK_THROWS_AS(parse_training_precision("int4"), InputError);
}

TEST_CASE("memory: attention-only recomputation drops the kernel's log-sum-exp and repeats the attention forward",
          "[memory]") {
  const auto m = gelu_mha_layer();
  for (const bool sp : {false, true})
    CHECK(activation_bytes_per_token_layer(m, 2, Recompute::Attention, {}, sp) ==
          Approx(activation_bytes_per_token_layer(m, 2, Recompute::None, {}, sp) - 4.0 * 32 / 2));
  CHECK(parse_recompute("attention") == Recompute::Attention);
  // The time model: the attention backward gains one attention forward; the other layer work
  // does not repeat (full recomputation repeats both).
  auto s = resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 131072, "zigzag", "causal", std::nullopt, "te-p2p");
  apply_recompute(s.profile, Recompute::None);
  s.rebuild_cost();
  const auto none = predict(s);
  apply_recompute(s.profile, Recompute::Attention);
  s.rebuild_cost();
  const auto attn = predict(s);
  apply_recompute(s.profile, Recompute::Full);
  s.rebuild_cost();
  const auto full = predict(s);
  CHECK(attn.attention_fwd_s == Approx(none.attention_fwd_s));
  CHECK(attn.attention_bwd_s > none.attention_bwd_s);
  CHECK(attn.attention_bwd_s == Approx(full.attention_bwd_s));
  CHECK(attn.other_compute_s == Approx(none.other_compute_s));
  CHECK(full.other_compute_s > attn.other_compute_s);
}

TEST_CASE("memory: an offloaded optimizer leaves the device and is reported as host memory", "[memory]") {
  const auto s = resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 131072, "zigzag", "causal", std::nullopt, "te-p2p");
  MemoryOptions o;
  o.sharding = Sharding::Zero1;
  const auto on_device = estimate_memory(s, o);
  o.settings.offload_optimizer = true;
  const auto off = estimate_memory(s, o);
  CHECK(off.optimizer_bytes == 0);
  CHECK(off.host_bytes == Approx(on_device.optimizer_bytes));
  CHECK(off.total_bytes == Approx(on_device.total_bytes - on_device.optimizer_bytes));
}

TEST_CASE("memory: fixed costs count one NCCL communicator per group the device is in, on GPUs only", "[memory]") {
  const auto ring = resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 131072, "zigzag", "causal", std::nullopt, "te-p2p");
  CHECK(communicator_sizes(ring, 1) == std::vector<std::int64_t>{8, 8});      // the ring, the gradient group
  CHECK(communicator_sizes(ring, 4) == std::vector<std::int64_t>{8, 32});
  const auto tp = resolve_scenario("h100-sxm", "llama3-70b", 8, 2, 131072, "zigzag", "causal", std::nullopt, "te-p2p");
  CHECK(communicator_sizes(tp, 1) == std::vector<std::int64_t>{8, 2, 2});
  const auto one = resolve_scenario("h100-sxm", "llama3-8b", 1, 1, 8192, "zigzag", "causal", std::nullopt, "te-p2p");
  CHECK(communicator_sizes(one, 1).empty());

  MemoryOptions o;
  const auto f = FixedCosts::published();
  const auto e = estimate_memory(ring, o);
  const double dynamic = e.activations_bytes + e.workspace_bytes + e.strategy.bytes;
  CHECK(e.fixed_bytes == Approx(f.cuda_context_bytes + 2 * f.nccl_bytes_more_ranks + f.fragmentation * dynamic));
  CHECK(estimate_memory(tp, o).fixed_bytes >
        f.cuda_context_bytes + f.nccl_bytes_more_ranks + 2 * f.nccl_bytes_two_ranks);
  // A TPU has no CUDA context, NCCL or caching allocator.
  const auto tpu = resolve_scenario("tpu-v4", "ringattn-1b", 1, 8, 65536, "striped");
  CHECK(estimate_memory(tpu, o).fixed_bytes == 0);
}

TEST_CASE("memory: a plan fits only with the headroom left, within it, it is tight", "[memory]") {
  const auto s = resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 131072, "zigzag", "causal", std::nullopt, "te-p2p");
  MemoryOptions o;
  o.sharding = Sharding::Zero3;
  o.recompute = Recompute::Full;
  o.settings.headroom_bytes = 0;
  const auto e = estimate_memory(s, o);
  REQUIRE(e.fits);
  CHECK(fit_phrase(e).rfind("fits with ", 0) == 0);
  // Ask for exactly the spare plus a little: tight, not fitting; the phrase says both figures.
  o.settings.headroom_bytes = e.spare_bytes() + 0.5 * kGiB;
  const auto t = estimate_memory(s, o);
  CHECK_FALSE(t.fits);
  CHECK(t.tight());
  CHECK(fit_phrase(t).find("tight: ") == 0);
  o.settings.headroom_bytes = e.spare_bytes() - 0.5 * kGiB;
  CHECK(estimate_memory(s, o).fits);
  // Over the capacity: does not fit, by how much.
  const auto big = resolve_scenario("h100-sxm", "llama3-70b", 1, 2, 262144, "zigzag", "causal", std::nullopt, "te-p2p");
  const auto over = estimate_memory(big, MemoryOptions{});
  CHECK_FALSE(over.tight());
  CHECK(fit_phrase(over).find("does not fit: ") == 0);
  o.settings.headroom_bytes = -1;
  CHECK_THROWS_AS(estimate_memory(s, o), InputError);
}

TEST_CASE("memory: settings read from a sweep or plan file and written back only where not default", "[memory]") {
  MemorySettings s;
  CHECK(s.read_field("precision", nlohmann::json("fp32"), "f.json"));
  CHECK(s.read_field("sequence_parallel", nlohmann::json(false), "f.json"));
  CHECK(s.read_field("headroom_gib", nlohmann::json(4), "f.json"));
  CHECK_FALSE(s.read_field("zero", nlohmann::json(3), "f.json"));
  CHECK(s.precision == TrainingPrecision::Fp32);
  CHECK(s.headroom_bytes == Approx(4 * kGiB));
  nlohmann::json j = nlohmann::json::object();
  s.write_fields(j);
  CHECK(j.size() == 3);
  MemorySettings back;
  for (const auto& [k, v] : j.items()) CHECK(back.read_field(k, v, "f.json"));
  CHECK(back == s);
  nlohmann::json d = nlohmann::json::object();
  MemorySettings{}.write_fields(d);
  CHECK(d.empty());
  for (const auto& [k, v] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"precision", "fp64"}, {"precision", 16}, {"offload_optimizer", "yes"}, {"headroom_gib", -2}}) {
    try {
      MemorySettings x;
      (void)x.read_field(k, v, "f.json");
      FAIL(k << " = " << v.dump() << " was accepted");
    } catch (const InputError& e) {
      CHECK(e.field() == k);
      CHECK(e.file() == "f.json");
    }
  }
}
