// The memory model (models/memory/memory.hpp): per-device tokens, sharding, recomputation, the ring's
// buffers, and the runs the Striped Attention paper made (they ran, so they fit).
#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <string_view>
#include <vector>
#include <sstream>

#include "models/analytic/analytic.hpp"
#include "models/io/error.hpp"
#include "models/memory/memory.hpp"
#include "models/pipeline/schedule.hpp"
#include "models/io/parse.hpp"
#include "tests/support/gelu_layer.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim::models;
using ringsim::test::resolve_scenario;

namespace {
double token_terms(const MemoryEstimate& e) { return e.activations_bytes + e.workspace_bytes; }
}  // namespace

TEST_CASE("memory: token terms count the device's own tokens, not the global sequence (OpenPipe/ART #922)",
          "[memory]") {
  // Eight devices holding 32k tokens each use the memory one device with a 32k sequence uses
  // for its tokens: an estimator that charges every rank the global 256k tokens is 8x off.
  const auto ring = resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 262144, "striped", "causal", TileShape{128, 128});
  const auto one = resolve_scenario("h100-sxm", "llama3-8b", 1, 1, 32768, "striped", "causal", TileShape{128, 128});
  const auto global = resolve_scenario("h100-sxm", "llama3-8b", 1, 1, 262144, "striped", "causal", TileShape{128, 128});
  for (const auto r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    MemoryOptions o;
    o.recompute = r;
    o.sharding = Sharding::Zero3;
    const auto e8 = estimate_memory(ring, o);
    CHECK(token_terms(e8) == Approx(token_terms(estimate_memory(one, o))).epsilon(1e-12));
    // Activations scale with the tokens held (the workspace's score tile does not).
    CHECK(estimate_memory(global, o).activations_bytes == Approx(8 * e8.activations_bytes).epsilon(1e-12));
  }
  // The case that matters: with full recompute and FSDP over the 8 ranks, 256k tokens fit on
  // 8 x H100 80 GB; charged per rank for 256k tokens, the activations alone would not.
  MemoryOptions o;
  o.recompute = Recompute::Full;
  o.sharding = Sharding::Zero3;
  const auto e = estimate_memory(ring, o);
  CHECK(e.fits);
  CHECK(estimate_memory(global, o).activations_bytes > ring.hardware.hbm_bytes);
}

TEST_CASE("memory: ZeRO stages shard optimizer, then gradients, then parameters over dp x sp", "[memory]") {
  const auto s = resolve_scenario("a100-80gb", "llama2-7b", 2, 4, 65536, "striped");
  const double p = static_cast<double>(s.model.parameters()) / 2;  // per tensor-parallel rank
  MemoryOptions o;
  o.dp = 8;
  o.sharding = Sharding::None;
  const double g = 8 * 4;
  const auto none = estimate_memory(s, o);
  CHECK(none.parameters_bytes + none.gradients_bytes + none.optimizer_bytes == Approx(16 * p));
  o.sharding = Sharding::Zero1;
  const auto z1 = estimate_memory(s, o);
  CHECK(z1.optimizer_bytes == Approx(12 * p / g));
  CHECK(z1.gradients_bytes == Approx(2 * p));
  o.sharding = Sharding::Zero2;
  const auto z2 = estimate_memory(s, o);
  CHECK(z2.gradients_bytes == Approx(2 * p / g));
  CHECK(z2.parameters_bytes == Approx(2 * p));
  o.sharding = Sharding::Zero3;
  const auto z3 = estimate_memory(s, o);
  CHECK(z3.parameters_bytes > 2 * p / g);  // the shard plus two gathered layers
  CHECK(z3.parameters_bytes < 2 * p / g + 4 * p / static_cast<double>(s.model.layers));
  // Sharding over dp only leaves the context-parallel ranks with replicas.
  o.shard_over_cp = false;
  CHECK(estimate_memory(s, o).optimizer_bytes == Approx(12 * p / 8));
  // Token terms do not depend on sharding.
  CHECK(token_terms(z3) == Approx(token_terms(none)));
}

TEST_CASE("memory: a GELU MHA layer keeps 32 d bytes per token (Korthikanti et al.'s 34 less two dropout masks)",
          "[memory]") {
  const ModelConfig m = ringsim::test::gelu_mha_layer();
  const double lse = 4.0 * 32;
  CHECK(activation_bytes_per_token_layer(m, 1, Recompute::None) == Approx(32.0 * 4096 + lse));
  // Tensor parallelism splits everything but the norms' inputs and outputs (4 x 2 d).
  CHECK(activation_bytes_per_token_layer(m, 4, Recompute::None) == Approx(8.0 * 4096 + (24.0 * 4096 + lse) / 4));
  CHECK(activation_bytes_per_token_layer(m, 1, Recompute::Full) == Approx(2.0 * 4096));
  const double sel = activation_bytes_per_token_layer(m, 1, Recompute::Selective);
  CHECK(sel < activation_bytes_per_token_layer(m, 1, Recompute::None));
  CHECK(sel > activation_bytes_per_token_layer(m, 1, Recompute::Full));
}

TEST_CASE("memory: the ring's buffers scale with the buffer count, one device has none", "[memory]") {
  const auto s = resolve_scenario("a100-80gb", "ringattn-1b", 1, 8, 65536, "striped");
  MemoryOptions o;
  o.kv_buffers = 2;
  const auto two = estimate_memory(s, o);
  o.kv_buffers = 3;
  const auto three = estimate_memory(s, o);
  CHECK(std::string(two.strategy.name) == "kv_ring_buffers");
  CHECK(three.strategy.bytes == Approx(1.5 * two.strategy.bytes));
  const double kv = static_cast<double>(s.workload->kv_block_bytes());
  CHECK(two.strategy.bytes == Approx(2 * kv * (1 + 4.0 / static_cast<double>(s.profile.kv_wire_bytes))));
  CHECK(estimate_memory(resolve_scenario("a100-80gb", "ringattn-1b", 1, 1, 8192, "striped"), o).strategy.bytes == 0);
  o.kv_buffers = 0;
  CHECK_THROWS_AS(estimate_memory(s, o), InputError);
}

TEST_CASE("memory: a plan that does not fit names its largest term", "[memory]") {
  auto s = resolve_scenario("a100-80gb", "llama2-7b", 1, 2, 262144, "striped");
  MemoryOptions o;
  o.recompute = Recompute::None;
  const auto e = estimate_memory(s, o);
  CHECK_FALSE(e.fits);
  CHECK(std::string(e.largest_term().name) == "activations");
  CHECK(e.spare_bytes() < 0);
}

TEST_CASE("memory: predict reports the estimate with the profile's recomputation", "[memory]") {
  const auto s = resolve_scenario("tpu-v4", "ringattn-1b", 2, 8, 262144, "striped");
  const auto p = predict(s);
  const auto e = estimate_memory(s, MemoryOptions::from_profile(s));
  CHECK(p.memory_bytes == e.total_bytes);
  CHECK(p.fits_memory == e.fits);
}

TEST_CASE("memory: every run of the Striped Attention paper fits (they ran)", "[memory][paper]") {
  // The paper's code rematerialises blocks (the profiles' recompute: true) and shards weights
  // and optimizer state over the sequence-parallel axis (FSDP over sp).
  std::ifstream in(std::string(RINGSIM_TEST_DATA) + "/striped_paper_calibration.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  int rows = 0;
  while (std::getline(in, line)) {
    const auto f = split(line, ',');
    REQUIRE(f.size() >= 5);
    for (const char* layout : {"contiguous", "striped"}) {
      const auto s = resolve_scenario(f[0], f[1], parse_int(f[2], "mp"), parse_int(f[3], "sp"), parse_int(f[4], "n_seq"),
                                      layout);
      REQUIRE(s.profile.recompute);
      auto o = MemoryOptions::from_profile(s);
      o.sharding = Sharding::Zero3;
      const auto e = estimate_memory(s, o);
      INFO(line << " " << layout << ": " << e.total_bytes / 1e9 << " GB of " << e.capacity_bytes / 1e9);
      CHECK(e.fits);
      // predict's default options are these.
      CHECK(estimate_memory(s, MemoryOptions::from_profile(s)).total_bytes == Approx(e.total_bytes));
    }
    ++rows;
  }
  CHECK(rows == 45);
}

TEST_CASE("memory: every run of NVIDIA's NeMo Llama2-7B long-sequence table fits (they ran)", "[memory][published]") {
  // Megatron's distributed optimizer shards optimizer state over dp x cp (ZeRO-1 over dp x sp);
  // the table does not say whether activations were recomputed: they fit even without. The 8K
  // row runs two pipeline stages (1F1B; the first holds both stages' worth of activations).
  std::ifstream in(std::string(RINGSIM_TEST_DATA) + "/nemo_llama2_7b_cp_runs.csv");
  REQUIRE(in);
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.starts_with("hardware")) continue;
    const auto f = split(line, ',');
    REQUIRE(f.size() >= 10);
    const auto s = resolve_scenario(f[0], f[1], parse_int(f[2], "mp"), parse_int(f[3], "sp"), parse_int(f[5], "n_seq"),
                                    "zigzag", "causal", TileShape{128, 128});
    MemoryOptions o;
    o.dp = parse_int(f[4], "dp");
    o.sharding = Sharding::Zero1;
    o.recompute = Recompute::None;
    o.pipeline.stages = parse_int(f[8], "pp");
    o.pipeline.micro_batches = parse_int(f[9], "global_batch") / o.dp;  // the published batch
    const auto e = estimate_memory(s, o);
    INFO(line << ": " << e.total_bytes / 1e9 << " GB of " << e.capacity_bytes / 1e9);
    CHECK(e.fits);
    ++rows;
  }
  CHECK(rows == 9);
}

TEST_CASE("memory: the breakdown's parts add up to each term and to the total, each with its source", "[memory]") {
  // Property over random scenarios: meshes, ZeRO stages, recomputation, replicas, pipelines,
  // precisions and offload; the parts of a term sum to it, all of them to the total, and each
  // names a term of MemoryEstimate::terms and where its formula comes from.
  std::mt19937_64 rng(11);
  const std::vector<std::string> models = {"llama3-8b", "llama2-7b", "ringattn-1b"};
  const std::vector<std::string> layouts = {"contiguous", "striped", "zigzag"};
  std::int64_t checked = 0;
  for (int i = 0; i < 60; ++i) {
    const std::int64_t mp = std::int64_t{1} << (rng() % 3), sp = std::int64_t{1} << (1 + rng() % 3);
    const auto& model = models[rng() % models.size()];
    const auto s = resolve_scenario(rng() % 2 ? "h100-sxm" : "a100-80gb", model, mp, sp, 16384 * sp, layouts[rng() % 3]);
    MemoryOptions o;
    o.dp = 1 + static_cast<std::int64_t>(rng() % 4);
    o.sharding = static_cast<Sharding>(rng() % 4);
    o.recompute = static_cast<Recompute>(rng() % 4);
    o.kv_buffers = 1 + static_cast<std::int64_t>(rng() % 3);
    o.settings.offload_optimizer = rng() % 4 == 0;
    if (rng() % 3 == 0) o.pipeline = PipelineSchedule::parse("1f1b", 2, 4);
    INFO(model << " mp " << mp << " sp " << sp << " dp " << o.dp);
    MemoryBreakdown b;
    try {
      b = memory_breakdown(s, o);
    } catch (const InputError&) {
      continue;  // a pipeline the model's layers do not split
    }
    const auto& e = b.estimate;
    CHECK(e.total_bytes == Approx(estimate_memory(s, o).total_bytes).epsilon(1e-12));
    double all = 0;
    for (const auto& t : e.terms()) {
      double sum = 0;
      for (const auto& p : b.parts)
        if (std::string_view(p.term) == t.name) sum += p.bytes;
      INFO(t.name);
      CHECK(sum == Approx(t.bytes).epsilon(1e-12).margin(1e-3));
      all += sum;
    }
    CHECK(all == Approx(e.total_bytes).epsilon(1e-12));
    for (const auto& p : b.parts) {
      CHECK(std::string_view(p.source).size() > 20);
      CHECK(std::string_view(p.name).size() > 0);
      CHECK(p.bytes > 0);
    }
    ++checked;
  }
  CHECK(checked > 30);
}

TEST_CASE("memory: the loss's transients are the stack's cross-entropy's, on the rank holding the logits", "[memory]") {
  // Per logit of the rank's vocabulary shard (tokens x vocab / mp), beyond the fp32 kept for the
  // backward: Megatron's vocab-parallel loss holds the bf16 logits beside their upcast (none when
  // the logits are fp32); torch's cross_entropy on logits.float() holds three fp32 tensors at
  // once in its backward. An undescribed stack is charged the kept logits only.
  auto s = resolve_scenario("h100-sxm", "llama3-8b", 2, 8, 131072, "zigzag", "causal", TileShape{128, 128});
  const double logits = 131072.0 / 8 * static_cast<double>(s.model.vocab) / 2;
  struct Case {
    LossKernel kind;
    TrainingPrecision precision;
    double transient;
  };
  for (const auto& c : {Case{LossKernel::MegatronVocabParallel, TrainingPrecision::Bf16, 2},
                        Case{LossKernel::MegatronVocabParallel, TrainingPrecision::Fp8, 2},
                        Case{LossKernel::MegatronVocabParallel, TrainingPrecision::Fp32, 0},
                        Case{LossKernel::TorchCrossEntropy, TrainingPrecision::Bf16, 8},
                        Case{LossKernel::TorchCrossEntropy, TrainingPrecision::Fp32, 8},
                        // FlashAttention's in-place loss keeps the bf16 logits (2 bytes less than fp32) and nothing more.
                        Case{LossKernel::FlashAttnCrossEntropy, TrainingPrecision::Bf16, -2},
                        Case{LossKernel::FlashAttnCrossEntropy, TrainingPrecision::Fp32, 0}}) {
    INFO(to_string(c.kind) << " " << to_string(c.precision));
    MemoryOptions o;
    o.settings.precision = c.precision;
    s.impl.precisions = {"bf16", "fp32", "fp8"};
    s.impl.loss = LossKernel::Undescribed;
    const auto bare = estimate_memory(s, o);
    s.impl.loss = c.kind;
    const auto with = estimate_memory(s, o);
    CHECK(with.activations_bytes - bare.activations_bytes == Approx(c.transient * logits).epsilon(1e-9));
    // The breakdown names the part, and its bytes, with a source.
    const auto b = memory_breakdown(s, o);
    double part = 0;
    for (const auto& p : b.parts)
      if (std::string_view(p.name) == "loss transients") {
        part = p.bytes;
        CHECK(!std::string_view(p.source).empty());
      }
    CHECK(part == Approx(std::max(c.transient, 0.0) * logits).epsilon(1e-9));
  }
  // Under a pipeline only the last stage computes the loss: the first stage's estimate is the same
  // whatever the loss.
  MemoryOptions o;
  o.pipeline = PipelineSchedule::parse("1f1b", 4, 8);
  const auto first = [&](LossKernel k) {
    s.impl.loss = k;
    const auto b = memory_breakdown(s, o);
    double bytes = 0;
    for (const auto& p : b.parts)
      if (std::string_view(p.name) == "loss transients") bytes = p.bytes;
    return std::pair{bytes, b.estimate.pipeline_rank};
  };
  const auto [torch_bytes, torch_rank] = first(LossKernel::TorchCrossEntropy);
  CHECK((torch_rank == 3) == (torch_bytes > 0));
  // The catalog's Megatron-run libraries use Megatron's loss, the torch-run ones torch's.
  const Catalog cat;
  for (const char* te : {"te-p2p", "te-a2a", "te-a2a-p2p", "te-all-gather"})
    CHECK(cat.implementation(te).loss == LossKernel::MegatronVocabParallel);
  for (const char* torch : {"torch-cp", "ring-flash-attn", "rfa-llama3"})
    CHECK(cat.implementation(torch).loss == LossKernel::TorchCrossEntropy);
  CHECK(cat.implementation("internevo").loss == LossKernel::FlashAttnCrossEntropy);
}
