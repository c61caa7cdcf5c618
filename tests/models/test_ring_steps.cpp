// Ring protocols as data: lengths, step classes, the shapes each library calls per step, what an
// implementation refuses (with one line naming what it offers), the flash family's block cost as
// the sum of its calls and merges, and prediction intervals.
#include <cmath>
#include <fstream>
#include <random>

#include <catch2/catch.hpp>

#include "models/analytic/ring_transfers.hpp"
#include <nlohmann/json.hpp>

#include "models/analytic/analytic.hpp"
#include "models/families/attention_cost.hpp"
#include "models/io/error.hpp"
#include "models/analytic/interval.hpp"
#include "models/io/json_fields.hpp"
#include "models/families/kernel_time.hpp"
#include "models/catalog/resolve.hpp"
#include "models/implementations/ring_steps.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim::models;

namespace {

ResolvedScenario flash(const std::string& impl, const std::string& layout, std::int64_t sp, std::int64_t c,
                       const std::string& model = "attn:32:8:128", std::int64_t batch = 1,
                       const std::string& hardware = "a100-80gb") {
  ScenarioSpec s;
  s.hardware = hardware;
  s.model = model;
  s.sp = sp;
  s.n_seq = sp * c;
  s.batch = batch;
  s.layout = ringsim::models::LayoutSpec::parse(layout);
  s.impl = impl;
  return resolve(s, Catalog());
}

// A steps file RingSteps refuses, naming `field`.
void expect_refused(const nlohmann::json& j, const std::string& field) {
  try {
    (void)RingSteps::from_json(j, "x.json");
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(e.field() == field);
  }
}

}  // namespace

TEST_CASE("lengths parse as c[/K][+-J] and nothing else", "[plan]") {
  CHECK(LengthExpr::parse("c", "f", "q").of(100) == 100);
  CHECK(LengthExpr::parse("c/2", "f", "q").of(100) == 50);
  CHECK(LengthExpr::parse("c-1", "f", "q").of(100) == 99);
  CHECK(LengthExpr::parse(" c / 4 + 3 ", "f", "q").of(100) == 28);
  for (const char* bad : {"", "2c", "c/0", "c*2", "c/2/2", "c+", "k", "c-1x"}) {
    INFO(bad);
    CHECK_THROWS_AS(LengthExpr::parse(bad, "f", "q"), InputError);
  }
  CHECK(step_class(3, 3) == StepClass::Diagonal);
  CHECK(step_class(3, 1) == StepClass::Below);
  CHECK(step_class(1, 3) == StepClass::Above);
}

TEST_CASE("the shipped ring libraries call what their code calls", "[plan][impl]") {
  const Catalog cat;
  const auto rfa = cat.implementation("ring-flash-attn");
  const auto* zig = rfa.protocol.ring_steps.plan("causal", "zigzag");
  REQUIRE(zig);
  // zigzag: step 0 causal over both local halves; later steps half blocks, never masked.
  REQUIRE(zig->of(StepClass::Diagonal).size() == 1);
  CHECK(zig->of(StepClass::Diagonal)[0].causal);
  CHECK(zig->of(StepClass::Below)[0].k.of(1024) == 512);
  CHECK(zig->of(StepClass::Above)[0].q.of(1024) == 512);
  CHECK_FALSE(zig->of(StepClass::Below)[0].causal);
  // stripe: a causal call on q[1:] x k[:-1] for a later device's block.
  const auto* stripe = rfa.protocol.ring_steps.plan("causal", "striped");
  REQUIRE(stripe);
  CHECK(stripe->of(StepClass::Above)[0].q.of(1024) == 1023);
  CHECK(stripe->of(StepClass::Above)[0].causal);
  // contiguous: nothing for a later device's (fully masked) block.
  CHECK(rfa.protocol.ring_steps.plan("causal", "contiguous")->of(StepClass::Above).empty());
  // Messages: fp32 dK/dV queued behind K/V on one communicator; TE sends [KV | dKV] together in
  // bf16 and walks back so the accumulators end at home.
  CHECK(rfa.protocol.dkv_wire_bytes == 4);
  CHECK(rfa.protocol.backward == BackwardMessages::Ordered);
  const auto te = cat.implementation("te-p2p");
  CHECK(te.protocol.backward == BackwardMessages::Fused);
  CHECK(te.protocol.dkv_wire_bytes == 2);
  CHECK_FALSE(te.protocol.dkv_home_hop);
}

TEST_CASE("an implementation refuses a layout or mask it does not offer, naming what it offers", "[plan][errors]") {
  const Catalog cat;
  ScenarioSpec s;
  s.hardware = "a100-80gb";
  s.model = "attn:8:8:64";
  s.sp = 4;
  s.n_seq = 4096;
  auto expect = [&](const std::string& impl, const std::string& layout, const std::string& mask,
                    const std::string& field, const std::string& names) {
    s.impl = impl;
    s.layout = ringsim::models::LayoutSpec::parse(layout);
    s.mask = ringsim::models::MaskSpec::parse(mask);
    try {
      (void)resolve(s, cat);
      FAIL("expected InputError");
    } catch (const InputError& e) {
      INFO(e.message());
      CHECK(e.field() == field);
      CHECK(e.message().find(impl) != std::string::npos);
      CHECK(e.message().find(names) != std::string::npos);
    }
  };
  expect("ring-flash-attn", "cyclic:4", "causal", "layout", "contiguous, zigzag, striped");
  expect("ring-flash-attn", "zigzag", "full", "layout", "causal: contiguous, striped, zigzag; full: contiguous");
  expect("ring-flash-attn", "contiguous", "window:64", "mask", "causal, full");
  expect("te-p2p", "striped", "causal", "layout", "zigzag, contiguous");
  expect("te-p2p", "contiguous", "causal", "layout", "causal: zigzag; full: contiguous");
  s.hardware = "tpu-v4";
  expect("ring-flash-attn", "contiguous", "causal", "impl", "gpu");
  s.impl = "no-such-impl";
  s.hardware = "a100-80gb";
  s.layout = ringsim::models::LayoutSpec::parse("contiguous");
  s.mask = ringsim::models::MaskSpec::parse("causal");
  CHECK_THROWS_WITH(resolve(s, cat), Catch::Contains("ring-flash-attn") && Catch::Contains("te-p2p"));
}

TEST_CASE("a flash library's step costs its calls, its merges and the pass's final conversion", "[plan][flash]") {
  const auto s = flash("ring-flash-attn", "zigzag", 4, 2048);
  const auto& im = s.impl;
  const auto rates = KernelRates::of(s.hardware, s.profile);
  const auto& proto = im.protocol.ring_steps;
  const double hbm = rates.hbm_bytes_per_s;
  const double qe = 2048.0 * 32 * 128, ke = 2048.0 * 8 * 128;  // query and K/V elements of the block
  auto kernel = [&](std::int64_t q, std::int64_t k, bool causal) {
    return flash_call_time(*im.kernel_model, rates, KernelCall{q, k, causal, k - q, 32, 8, 1, 128});
  };
  const BlockStats b = Workload::count_block(*s.layout, *s.mask, 1, 0, s.tile);
  // Below: q (both halves) x k[:, :c/2], merged into the fp32 output.
  const auto below = s.attention->block(s, 1, 0, b);
  const auto& upd = proto.memory_op("fwd_update");
  const double want_f = kernel(2048, 1024, false).fwd_s + upd.q_bytes_per_element * qe / hbm;
  CHECK(below.fwd_s == Approx(std::max(want_f, s.profile.host_step_s + s.profile.host_call_s)));
  // Above: q[:, c/2:] x k, merged into the second half (a sliced update).
  const auto above = s.attention->block(s, 0, 1, Workload::count_block(*s.layout, *s.mask, 0, 1, s.tile));
  const auto& sl = proto.memory_op("fwd_update_slice");
  CHECK(above.fwd_s >= kernel(1024, 2048, false).fwd_s + sl.q_bytes_per_element * qe / 2 / hbm - 1e-15);
  // Diagonal: the causal call, the first merge and the pass's final conversion.
  const auto diag = s.attention->block(s, 2, 2, Workload::count_block(*s.layout, *s.mask, 2, 2, s.tile));
  const double want_d = kernel(2048, 2048, true).fwd_s +
                        (proto.memory_op("fwd_init").q_bytes_per_element + proto.fwd_final.q_bytes_per_element) * qe / hbm;
  CHECK(diag.fwd_s == Approx(std::max(want_d, diag.fwd_s)));
  CHECK(diag.fwd_s >= want_d * (1 - 1e-12));
  // Backward merges read and write the fp32 dK/dV of the call's keys as well.
  CHECK(proto.memory_op("bwd_update").kv_bytes_per_element > 0);
  CHECK(below.bwd_s > kernel(2048, 1024, false).bwd_s + proto.memory_op("bwd_update").kv_bytes_per_element * ke / 2 / hbm *
                                                              (1 - 1e-12));
}

TEST_CASE("a small block is host-bound: a step lasts the host's step and its calls, per pass", "[plan][flash][host]") {
  auto s = flash("ring-flash-attn", "contiguous", 8, 128);
  s.profile.host_step_s = 2e-4;
  s.profile.host_call_s = 5e-4;
  s.profile.host_bwd_step_s = 4.5e-4;
  s.profile.host_bwd_call_s = 4e-4;
  // A causal contiguous ring: a device calls on its own block and earlier ones, not on later ones.
  const auto below = s.attention->block(s, 3, 1, Workload::count_block(*s.layout, *s.mask, 3, 1, s.tile));
  const auto above = s.attention->block(s, 1, 3, Workload::count_block(*s.layout, *s.mask, 1, 3, s.tile));
  const auto diag = s.attention->block(s, 2, 2, Workload::count_block(*s.layout, *s.mask, 2, 2, s.tile));
  CHECK(below.fwd_s == Approx(7e-4));
  CHECK(below.bwd_s == Approx(8.5e-4));
  CHECK(diag.fwd_s == Approx(7e-4));
  CHECK(above.fwd_s == Approx(2e-4));
  CHECK(above.bwd_s == Approx(4.5e-4));
  // In lock-step every round has a device that calls (the last device calls every round): the
  // pass is n steps of the host's step and one call, whatever the GPU would take.
  const auto host_bound = predict(s);
  CHECK(host_bound.attention_fwd_s == Approx(8 * 7e-4).epsilon(1e-9));
  // The backward adds its last dK/dV hop after the loop (0.5 MB here: tens of microseconds).
  CHECK(host_bound.attention_bwd_s >= 8 * 8.5e-4 * (1 - 1e-12));
  CHECK(host_bound.attention_bwd_s < 8 * 8.5e-4 * 1.02);
  // Zigzag calls on every block, so balancing changes nothing here: it is the host's pace too.
  auto z = flash("ring-flash-attn", "zigzag", 8, 128);
  z.profile = s.profile;
  CHECK(predict(z).attention_fwd_s == Approx(host_bound.attention_fwd_s).epsilon(1e-9));
  // Without the host the same ring is the GPU's, far shorter at 128 tokens per device.
  s.profile.host_step_s = s.profile.host_call_s = s.profile.host_bwd_step_s = s.profile.host_bwd_call_s = 0;
  CHECK(predict(s).attention_fwd_s < host_bound.attention_fwd_s / 4);
}

TEST_CASE("a memory op's rank rule: ranks from from_rank run another op, per block and per round", "[plan][flash]") {
  // ring-flash-attn's sliced update runs unfused from rank 2 on (measured; the JSON says why). The
  // GPU's work is compared: without the host's floor, which 2k-token blocks are under.
  auto s = flash("ring-flash-attn", "zigzag", 8, 2048);
  s.profile.host_step_s = s.profile.host_call_s = s.profile.host_bwd_step_s = s.profile.host_bwd_call_s = 0;
  const auto& proto = s.impl.protocol.ring_steps;
  const auto& fused = proto.memory_op("fwd_update_slice");
  REQUIRE(fused.from_rank == 2);
  const auto& unfused = proto.memory_op("fwd_update_slice", 5);
  CHECK(&proto.memory_op("fwd_update_slice", 1) == &fused);
  CHECK(unfused.q_bytes_per_element > fused.q_bytes_per_element);
  const auto hbm = KernelRates::of(s.hardware, s.profile).hbm_bytes_per_s;
  const double half = 1024.0 * 32 * 128;  // the sliced half's query elements
  // Above-diagonal blocks (k from a later rank: q[:, c/2:] x k): rank 1 fused, rank 2 unfused,
  // the difference exactly the bytes the two ops differ by.
  const auto b12 = Workload::count_block(*s.layout, *s.mask, 1, 3, s.tile);
  const auto b23 = Workload::count_block(*s.layout, *s.mask, 2, 4, s.tile);
  const auto r1 = s.attention->block(s, 1, 3, b12), r2 = s.attention->block(s, 2, 4, b23);
  CHECK(r2.fwd_s - r1.fwd_s == Approx((unfused.q_bytes_per_element - fused.q_bytes_per_element) * half / hbm));
  CHECK(r2.bwd_s == Approx(r1.bwd_s));
  CHECK(s.attention->block_variant(s, 1, 3) == 0);
  CHECK(s.attention->block_variant(s, 2, 4) == 1);
  CHECK(s.attention->block_variant(s, 5, 1) == 0);  // below the diagonal: whole-block merges
  // Oracle: each round of the prediction is the slowest device's block, timed one by one, slowed
  // by NCCL's kernel beside it for the transfer the round overlaps (CostModel::beside_comm_s).
  const auto p = predict(s);
  const auto& w = *s.workload;
  const auto x = ring_round_transfers(s, *s.program);
  for (std::int64_t r = 0; r < 8; ++r) {
    double busiest = 0;
    for (std::int64_t q = 0; q < 8; ++q) {
      const std::int64_t k = ((q - r) % 8 + 8) % 8;
      busiest = std::max(busiest, s.attention->block(s, q, k, w.block(r, q)).fwd_s);
    }
    INFO("round " << r);
    const double beside = s.cost->beside_comm_s(busiest, x.fwd[static_cast<std::size_t>(r)], x.group_spans_nodes);
    if (r < 7)
      CHECK(beside > busiest);
    else
      CHECK(beside == busiest);  // the last round sends nothing
    CHECK(p.rounds_fwd[static_cast<std::size_t>(r)].compute_max_s == Approx(beside));
  }
}

TEST_CASE("counted host operations pace a host-bound ring by layout (UltraAttn's eager merges)", "[plan][flash][host]") {
  // Only the operations count: per step 12 (K and V apart: 2 buffers, 4 isend/irecv, 4 waits, 2
  // stream syncs) or 8 (zigzag's one concatenated message); per merge as configs/ring_steps/
  // ultraattn-ring.json counts them from the code. At 128 tokens per device the GPU's work is far
  // below the host's, so each lock-step round lasts its busiest device's operations.
  constexpr double op = 1e-5;
  auto pass = [&](const std::string& impl, const std::string& layout, double per_op = 1e-5) {
    auto s = flash(impl, layout, 8, 128, "attn:32:8:128", 1, "a800");
    s.profile.host_step_s = s.profile.host_call_s = s.profile.host_bwd_step_s = s.profile.host_bwd_call_s = 0;
    s.profile.host_op_s = per_op;
    return predict(s).attention_fwd_s;
  };
  // contiguous: round 0 every device's own block (12 + 2: out = block_out, two views); later rounds
  // the devices with an earlier block merge eagerly (12 + 14), the others only communicate (12).
  CHECK(pass("ultraattn-ring", "contiguous") == Approx((14 + 7 * 26) * op).epsilon(1e-9));
  // zigzag: 8 + 3 (the .to(float32) start), then the no-op merge with its views: 8 + 2 below, 8 + 4
  // (the slice read and written back) above; every round has a device above.
  CHECK(pass("ultraattn-ring", "zigzag") == Approx((11 + 7 * 12) * op).epsilon(1e-9));
  // striped: later blocks call on three views and merge a slice (12 + 21).
  CHECK(pass("ultraattn-ring", "striped") == Approx((14 + 7 * 33) * op).epsilon(1e-9));
  // ring-flash-attention's steps count no operations (its measured host terms hold them): the
  // same rate changes nothing there, where the GPU's calls set the pace.
  CHECK(pass("ring-flash-attn", "zigzag") == pass("ring-flash-attn", "zigzag", 0.0));
  CHECK(pass("ring-flash-attn", "zigzag") < pass("ultraattn-ring", "zigzag"));
}

TEST_CASE("host operation counts are non-negative numbers", "[plan][errors]") {
  auto steps = nlohmann::json::parse(R"({"name": "x", "description": "d", "sources": [
      {"repo": "a/b", "path": "p", "commit": "0123456789abcdef0123456789abcdef01234567", "what": "w"}],
      "steps": {"causal": {"contiguous": {"fwd_host_ops": 12, "diagonal": [{"q": "c", "k": "c", "causal": true, "fwd_merge": "a"}],
                                          "below": [], "above": []}}},
      "memory_ops": {"a": {"q_bytes_per_element": 1, "host_ops": 14, "what": "w"}}})");
  const auto ok = RingSteps::from_json(steps, "x.json");
  CHECK(ok.plan("causal", "contiguous")->fwd_host_ops == 12);
  CHECK(ok.plan("causal", "contiguous")->bwd_host_ops == 0);
  CHECK(ok.memory_op("a").host_ops == 14);
  for (const nlohmann::json& bad : {nlohmann::json(-1), nlohmann::json("12"), nlohmann::json(1e9)}) {
    auto j = steps;
    j["steps"]["causal"]["contiguous"]["fwd_host_ops"] = bad;
    expect_refused(j, "steps.causal.contiguous.fwd_host_ops");
    j = steps;
    j["memory_ops"]["a"]["host_ops"] = bad;
    expect_refused(j, "memory_ops.a.host_ops");
  }
}

TEST_CASE("a rank rule must name another op, which has no rule of its own", "[plan][errors]") {
  auto steps = nlohmann::json::parse(R"({"name": "x", "description": "d", "sources": [
      {"repo": "a/b", "path": "p", "commit": "0123456789abcdef0123456789abcdef01234567", "what": "w"}],
      "steps": {"causal": {"contiguous": {"diagonal": [{"q": "c", "k": "c", "causal": true, "fwd_merge": "a"}],
                                          "below": [], "above": []}}},
      "memory_ops": {"a": {"q_bytes_per_element": 1, "what": "w", "from_rank": 2, "from_rank_op": "b"},
                     "b": {"q_bytes_per_element": 2, "what": "w"}}})");
  CHECK_NOTHROW(RingSteps::from_json(steps, "x.json"));
  auto j = steps;
  j["memory_ops"]["a"]["from_rank_op"] = "c";
  expect_refused(j, "memory_ops.a.from_rank_op");
  j = steps;
  j["memory_ops"]["b"]["from_rank"] = 1;
  j["memory_ops"]["b"]["from_rank_op"] = "a";
  expect_refused(j, "memory_ops.a.from_rank_op");
  j = steps;
  j["memory_ops"]["a"].erase("from_rank_op");
  expect_refused(j, "memory_ops.a.from_rank_op");
  j = steps;
  j["memory_ops"]["a"]["from_rank"] = 1.5;
  expect_refused(j, "memory_ops.a.from_rank");
}

TEST_CASE("zigzag balances a flash ring, contiguous waits for its busiest device", "[plan][flash]") {
  // Per-round busiest device: contiguous has full blocks after round 0, zigzag half blocks.
  const auto contiguous = flash("ring-flash-attn", "contiguous", 8, 4096);
  const auto zigzag = flash("ring-flash-attn", "zigzag", 8, 4096);
  const auto stripe = flash("ring-flash-attn", "striped", 8, 4096);
  const double c = predict(contiguous).attention_fwd_s, z = predict(zigzag).attention_fwd_s,
               st = predict(stripe).attention_fwd_s;
  CHECK(c / z > 1.3);
  CHECK(c / z < 2.0);
  // Stripe's causal calls cost more than zigzag's unmasked half blocks of the same area.
  CHECK(st > z);
}

TEST_CASE("GQA: fewer K/V heads shrink what travels and the dK/dV merges, not the kernel's FLOPs", "[plan][flash]") {
  const auto mha = flash("ring-flash-attn", "zigzag", 4, 4096, "attn:32:32:128");
  const auto gqa = flash("ring-flash-attn", "zigzag", 4, 4096, "attn:32:8:128");
  CHECK(gqa.workload->kv_block_bytes() * 4 == mha.workload->kv_block_bytes());
  const auto b = Workload::count_block(*gqa.layout, *gqa.mask, 1, 0, gqa.tile);
  CHECK(gqa.attention->block(gqa, 1, 0, b).fwd_s == Approx(mha.attention->block(mha, 1, 0, b).fwd_s).epsilon(1e-12));
  CHECK(gqa.attention->block(gqa, 1, 0, b).bwd_s < mha.attention->block(mha, 1, 0, b).bwd_s);
}

TEST_CASE("a flash library's profile needs the GPU's compute units", "[plan][errors]") {
  const ringsim::test::TempDir tmp;
  ScenarioSpec s;
  auto j = read_json_file(Catalog().root() + "/configs/hardware/a100-80gb.json");
  j.erase("compute_units");
  s.hardware_file = tmp.write("no_units.json", j.dump());
  s.model = "attn:8:8:64";
  s.sp = 2;
  s.n_seq = 4096;
  s.impl = "ring-flash-attn";
  CHECK_THROWS_WITH(resolve(s, Catalog()), Catch::Contains("compute_units"));
}

TEST_CASE("intervals: the delta method in log space, plus the held-out spread", "[interval]") {
  Profile p;
  CHECK_FALSE(prediction_interval(p, "time", 1.0, [](const Profile&) { return 1.0; }).available);
  p.uncertainty.residual_log_sd["time"] = 0.1;
  // No fitted parameters: the interval is the held-out spread alone.
  const auto a = prediction_interval(p, "time", 2.0, [](const Profile&) { return 2.0; }, 0.9);
  REQUIRE(a.available);
  CHECK(a.hi == Approx(2.0 * std::exp(1.6448536 * 0.1)).epsilon(1e-6));
  CHECK(a.lo == Approx(2.0 * std::exp(-1.6448536 * 0.1)).epsilon(1e-6));
  CHECK_FALSE(prediction_interval(p, "ratio", 2.0, [](const Profile&) { return 2.0; }).available);
  // A prediction f = e^(k x): log f has slope k, so var(log f) = k^2 var(x).
  p.uncertainty.residual_log_sd["time"] = 0.0;
  p.uncertainty.parameters = {"attention_efficiency"};
  p.uncertainty.covariance = {{0.0004}};
  p.attention_efficiency = 0.5;
  const auto f = [](const Profile& q) { return std::exp(3 * q.attention_efficiency); };
  const auto b = prediction_interval(p, "time", f(p), f, 0.9);
  REQUIRE(b.available);
  CHECK(std::log(b.hi / f(p)) == Approx(1.6448536 * 3 * 0.02).epsilon(1e-4));
  CHECK(two_sided_normal_quantile(0.95) == Approx(1.959964).epsilon(1e-6));
}
