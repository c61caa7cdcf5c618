// NCCL's send/receive kernel beside a ring step (models/transport/nccl_ctas.hpp,
// CostModel::beside_comm_s): its CTAs follow NCCL's channel rule per GPU and communicator, a
// GPU-bound round's compute grows by the SM share times the transfer it overlaps, the simulator
// charges what the analytic model charges, and a host-bound round is not slowed.
#include <catch2/catch.hpp>

#include "models/analytic/analytic.hpp"
#include "models/analytic/ring_transfers.hpp"
#include "models/catalog/catalog.hpp"
#include "models/transport/nccl_ctas.hpp"
#include "sim/step.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim;

TEST_CASE("NCCL's CTAs per ring step follow its channel rule per GPU and communicator", "[nccl][transport]") {
  const models::Catalog catalog;
  auto ctas = [&](const std::string& hw, bool spans) {
    return models::transport::nccl_p2p_ctas(catalog.hardware(hw), spans);
  };
  // 2 x NVLinks per peer, to a power of two, at most 32: A800 and H800 have 8 links, A100 12, H100 18.
  CHECK(ctas("a800", false) == 16);
  CHECK(ctas("h800", false) == 16);
  CHECK(ctas("a100-80gb", false) == 32);
  CHECK(ctas("h100-sxm", false) == 32);
  // A communicator that reaches another node: 2 per peer on every hop, its NVLink hops too.
  CHECK(ctas("a800", true) == 2);
  CHECK(ctas("h100-sxm", true) == 2);
  // PCIe peers, and the NVLink-bridged A100 PCIe cards (their other peers are PCIe ones).
  CHECK(ctas("rtx-4090", false) == 2);
  CHECK(ctas("a100-80gb-pcie-x4-nvbridge", false) == 2);
  // No NCCL kernel: TPUs; RCCL's own rules: AMD.
  CHECK(ctas("tpu-v4", false) == 0);
  CHECK(ctas("mi300x", false) == 0);
}

TEST_CASE("a GPU-bound round grows by NCCL's SM share of its transfer, in both engines", "[nccl][step]") {
  // A compute-bound ring inside one H100 node: every forward round but the last sends K/V.
  auto with = test::resolve_scenario("h100-sxm", "attn:32:8:128", 1, 8, 8 * 16384, "zigzag", "causal", std::nullopt,
                                     "ring-flash-attn");
  auto without = test::resolve_scenario("h100-sxm", "attn:32:8:128", 1, 8, 8 * 16384, "zigzag", "causal",
                                        std::nullopt, "ring-flash-attn");
  without.cost->set_comm_sm_share(0, 0);
  const double f = with.cost->comm_sm_share(false);
  CHECK(f == Approx(32.0 / static_cast<double>(with.hardware.sm_count)));
  const auto a = models::predict(with), b = models::predict(without);
  const models::RingRoundTransfers x = models::ring_round_transfers(with, *with.program);
  double sent = 0;
  for (const double t : x.fwd) sent += t;
  REQUIRE(sent > 0);
  // Compute-bound: each round's compute C becomes C + f X (X < C (1 - f)), and the round still
  // waits for its compute.
  CHECK(a.attention_fwd_s - b.attention_fwd_s ==
        Approx(static_cast<double>(with.model.layers) * f * sent).epsilon(1e-6));
  CHECK(a.step_s > b.step_s);
  // The simulator charges the same rounds the same.
  const double sim_gain = sim::simulate_step(with, {}).step_s - sim::simulate_step(without, {}).step_s;
  CHECK(sim_gain == Approx(a.step_s - b.step_s).epsilon(2e-3));
}

TEST_CASE("a host-bound round is not slowed by NCCL's kernel beside it", "[nccl][step]") {
  // 128 tokens per GPU: the library's loop, not the GPU, sets each step (the host terms).
  auto s = test::resolve_scenario("h100-sxm", "attn:32:8:128", 1, 8, 8 * 128, "zigzag", "causal", std::nullopt,
                                  "ring-flash-attn");
  REQUIRE(s.profile.host_step_s > 0);
  const auto a = models::predict(s);
  s.cost->set_comm_sm_share(0, 0);
  const auto b = models::predict(s);
  CHECK(a.attention_fwd_s == Approx(b.attention_fwd_s).epsilon(1e-12));
}
