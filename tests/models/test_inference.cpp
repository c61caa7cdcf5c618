// Context parallelism for inference (models/inference/): prefill's pairs per device under pass-KV
// and pass-Q equal brute-force counts over the balanced sharding, both variants compute the same
// pairs in total, the lock-step rounds add up, what travels crosses over where the model says
// (P/T = heads / (2 kv_heads) - 1); decode's shards add up to the cache, one device has no
// communication, and long caches gain from the ring while short ones at batch 1 are latency-bound;
// bad requests are InputErrors.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "models/catalog/catalog.hpp"
#include "models/catalog/resolve.hpp"
#include "models/inference/decode.hpp"
#include "models/inference/phase.hpp"
#include "models/inference/prefill.hpp"
#include "models/io/error.hpp"
#include "models/transport/collectives.hpp"
#include "models/transport/scenario_transport.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim;
using models::PrefillVariant;

namespace {

std::int64_t brute_pairs(std::int64_t q0, std::int64_t nq, std::int64_t k0, std::int64_t nk) {
  std::int64_t n = 0;
  for (std::int64_t q = q0; q < q0 + nq; ++q)
    for (std::int64_t k = k0; k < k0 + nk; ++k) n += k <= q;
  return n;
}

// Positions device d holds under the balanced sharding: new chunks d and 2N-1-d of [P, P+T),
// cached chunks d and 2N-1-d of [0, P).
std::set<std::int64_t> positions(std::int64_t d, std::int64_t n, std::int64_t start, std::int64_t len) {
  std::set<std::int64_t> out;
  const std::int64_t c = len / (2 * n);
  for (const auto chunk : {d, 2 * n - 1 - d})
    for (std::int64_t i = 0; i < c; ++i) out.insert(start + chunk * c + i);
  return out;
}

}  // namespace

TEST_CASE("causal_pairs equals a brute-force count", "[prefill]") {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const std::int64_t q0 = rng() % 40, nq = rng() % 20, k0 = rng() % 40, nk = rng() % 20;
    INFO(q0 << " " << nq << " " << k0 << " " << nk);
    CHECK(models::causal_pairs(q0, nq, k0, nk) == brute_pairs(q0, nq, k0, nk));
  }
}

TEST_CASE("prefill: every device's pairs are the brute-force count of its sharding, in both variants", "[prefill]") {
  for (const std::int64_t n : {1, 2, 4}) {
    for (const std::int64_t p : {std::int64_t{0}, 8 * n, 24 * n}) {
      const std::int64_t t = 16 * n;
      auto s = test::resolve_scenario("h100-sxm", "attn:32:8:128", 1, n, t, "zigzag", "causal", std::nullopt, "ring-flash-attn");
      for (const auto v : {PrefillVariant::PassKV, PrefillVariant::PassQ}) {
        INFO("N " << n << " P " << p << " " << models::to_string(v));
        const auto r = models::predict_prefill(s, p, v);
        REQUIRE(r.calls_of(n).empty());
        std::int64_t total = 0, lo = 0, hi = 0;
        for (std::int64_t d = 0; d < n; ++d) {
          std::int64_t mine = 0;
          const auto calls = r.calls_of(d);
          REQUIRE(calls.size() == static_cast<std::size_t>(p > 0 ? 2 * n : n));
          for (const auto& call : calls) mine += call.pairs;
          // pass-KV: this device's new queries against every key; pass-Q: every new query against
          // this device's keys (cached and new).
          std::int64_t expect = 0;
          if (v == PrefillVariant::PassKV) {
            for (const auto q : positions(d, n, p, t)) expect += q + 1;  // keys 0..q, all present somewhere
          } else {
            std::set<std::int64_t> keys = positions(d, n, p, t);
            if (p > 0) keys.merge(positions(d, n, 0, p));
            for (std::int64_t q = p; q < p + t; ++q)
              for (const auto k : keys) expect += k <= q;
          }
          CHECK(mine == expect);
          total += mine;
          lo = d == 0 ? mine : std::min(lo, mine);
          hi = std::max(hi, mine);
        }
        // The closed-form extremes are those of the calls.
        CHECK(r.pairs_per_device_min == lo);
        CHECK(r.pairs_per_device_max == hi);
        // The same pairs in total: the new tokens' causal pairs and every new query against the cache.
        CHECK(total == t * p + t * (t + 1) / 2);
        // Rounds: each lasts its busiest device's calls or its transfer; the layer adds them (and
        // pass-Q's all-to-all and merge).
        double sum = 0, exposed = 0;
        for (const auto& round : r.rounds) {
          CHECK(round.round_s == Approx(std::max(round.compute_max_s, round.transfer_s)));
          CHECK(round.compute_mean_s <= round.compute_max_s * (1 + 1e-12));
          sum += round.round_s;
          exposed += round.round_s - round.compute_max_s;
        }
        CHECK(r.attention_layer_s == Approx(sum + r.all_to_all_s + r.merge_s));
        CHECK(r.exposed_layer_s == Approx(exposed + r.all_to_all_s));
        CHECK(r.ttft_s > 0);
        CHECK(r.memory_bytes > r.kv_cache_bytes);
      }
    }
  }
}

TEST_CASE("prefill: each round's busiest device is the oracle of every device's calls", "[prefill]") {
  for (const std::int64_t n : {1, 2, 3, 5, 8}) {
    for (const std::int64_t p : {std::int64_t{0}, 6 * n}) {
      auto s = test::resolve_scenario("h100-sxm", "attn:32:8:128", 1, n, 64 * n, "zigzag", "causal", std::nullopt, "ring-flash-attn");
      for (const auto v : {PrefillVariant::PassKV, PrefillVariant::PassQ}) {
        INFO("N " << n << " P " << p << " " << models::to_string(v));
        const auto r = models::predict_prefill(s, p, v);
        // busy[d][round]: the calls of device d in that round, summed in issue order.
        std::vector<std::vector<double>> busy(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(n), 0.0));
        const std::size_t per_round = p > 0 ? 2 : 1;
        for (std::int64_t d = 0; d < n; ++d) {
          const auto calls = r.calls_of(d);
          for (std::size_t i = 0; i < calls.size(); ++i) busy[static_cast<std::size_t>(d)][i / per_round] += calls[i].seconds;
        }
        REQUIRE(r.rounds.size() == static_cast<std::size_t>(n));
        for (std::int64_t round = 0; round < n; ++round) {
          double max = 0, mean = 0;
          for (std::int64_t d = 0; d < n; ++d) {
            max = std::max(max, busy[static_cast<std::size_t>(d)][static_cast<std::size_t>(round)]);
            mean += busy[static_cast<std::size_t>(d)][static_cast<std::size_t>(round)] / static_cast<double>(n);
          }
          CHECK(r.rounds[static_cast<std::size_t>(round)].compute_max_s == max);
          CHECK(r.rounds[static_cast<std::size_t>(round)].compute_mean_s == Approx(mean).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("prefill: a ring of 65536 devices and a 2^40-token cache are predicted without N x N calls", "[prefill]") {
  // Before: the prediction held every device's calls (N^2 of them: 4.3e9 here) and timed each
  // call's backward too (one CTA per 128 keys of a 2^40-token cache: 2^33 of them). Now the few
  // call shapes are timed once and the per-device pairs are closed forms.
  const std::int64_t n = 65536;
  auto s = test::resolve_scenario("h100-sxm", "llama3-8b", 1, n, 2 * n, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  for (const auto v : {PrefillVariant::PassKV, PrefillVariant::PassQ}) {
    const auto r = models::predict_prefill(s, 2 * n, v);
    CHECK(r.rounds.size() == static_cast<std::size_t>(n));
    CHECK(std::isfinite(r.ttft_s));
    CHECK(r.ttft_s > 0);
    for (const std::int64_t d : {std::int64_t{0}, n / 2, n - 1}) {
      std::int64_t mine = 0;
      for (const auto& call : r.calls_of(d)) mine += call.pairs;
      CHECK(mine >= r.pairs_per_device_min);
      CHECK(mine <= r.pairs_per_device_max);
    }
  }
  auto one = test::resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 8192, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  const std::int64_t cache = std::int64_t{1} << 40;
  for (const auto v : {PrefillVariant::PassKV, PrefillVariant::PassQ}) {
    const auto r = models::predict_prefill(one, cache, v);
    CHECK(std::isfinite(r.ttft_s));
    // Every new query sees the whole cache: the pairs of the cache alone are T x P over the ring.
    CHECK(r.pairs_per_device_min >= 8192 / 8 * cache);
  }
}

TEST_CASE("prefill: pairs that overflow 64-bit integers are refused, naming the cache", "[prefill]") {
  auto s = test::resolve_scenario("h100-sxm", "attn:32:8:128", 1, 1, std::int64_t{1} << 24, "zigzag", "causal", std::nullopt,
                                  "ring-flash-attn");
  try {
    (void)models::predict_prefill(s, std::int64_t{1} << 40, PrefillVariant::PassKV);
    FAIL("accepted 2^64 pairs");
  } catch (const models::InputError& e) {
    CHECK(e.field() == "cached-tokens");
  }
}

TEST_CASE("prefill: the balanced sharding balances both variants", "[prefill]") {
  auto s = test::resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 131072, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  for (const auto v : {PrefillVariant::PassKV, PrefillVariant::PassQ}) {
    const auto r = models::predict_prefill(s, 393216, v);
    // New-to-new pairs differ by at most a chunk's diagonal between devices; cached pairs are equal.
    CHECK(static_cast<double>(r.pairs_per_device_max - r.pairs_per_device_min) <
          1e-3 * static_cast<double>(r.pairs_per_device_max));
  }
}

TEST_CASE("prefill: pass-KV and pass-Q send equal bytes per hop where the model says", "[prefill]") {
  // llama3-8b: 32 query heads, 8 KV heads. pass-KV sends (P + T)/N tokens x 2 x 8 heads, pass-Q
  // T/N tokens x 32 heads: equal at P/T = 32 / (2 x 8) - 1 = 1.
  auto s = test::resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 65536, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  const auto kv_at = [&](std::int64_t p) { return models::predict_prefill(s, p, PrefillVariant::PassKV).message_bytes; };
  const auto q_at = [&](std::int64_t p) { return models::predict_prefill(s, p, PrefillVariant::PassQ).message_bytes; };
  CHECK(kv_at(65536) == Approx(q_at(65536)));
  CHECK(kv_at(0) < q_at(0));            // no cache: K/V are the smaller message
  CHECK(kv_at(16 * 65536) > q_at(16 * 65536));  // a large cache: the queries are
  // pass-Q's queries do not grow with the cache; pass-KV's K/V do.
  CHECK(q_at(0) == Approx(q_at(16 * 65536)));
}

TEST_CASE("prefill on one device: no ring, so both variants are the same calls and move nothing", "[prefill]") {
  auto s = test::resolve_scenario("h100-sxm", "llama3-8b", 1, 1, 16384, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  for (const std::int64_t p : {std::int64_t{0}, std::int64_t{32768}}) {
    const auto kv = models::predict_prefill(s, p, PrefillVariant::PassKV);
    const auto q = models::predict_prefill(s, p, PrefillVariant::PassQ);
    CHECK(kv.message_bytes == 0);
    CHECK(q.message_bytes == 0);
    CHECK(kv.ttft_s == Approx(q.ttft_s).epsilon(1e-12));
    CHECK(kv.attention_layer_s == Approx(q.attention_layer_s).epsilon(1e-12));
    CHECK(kv.exposed_layer_s == 0);
  }
}

TEST_CASE("prefill: bad requests are InputErrors naming the field", "[prefill]") {
  auto s = test::resolve_scenario("h100-sxm", "attn:32:8:128", 1, 4, 1024, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  const auto field = [&](std::int64_t p, const models::ResolvedScenario& sc) {
    try {
      (void)models::predict_prefill(sc, p, PrefillVariant::PassKV);
    } catch (const models::InputError& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  CHECK(field(-8, s) == "cached-tokens");
  CHECK(field(12, s) == "cached-tokens");  // not a multiple of 2N = 8
  const auto odd = test::resolve_scenario("h100-sxm", "attn:32:8:128", 1, 4, 1028, "contiguous", "causal", std::nullopt, "ring-flash-attn");
  CHECK(field(0, odd) == "seq");
  const auto jax = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 4, 1024, "contiguous", "causal", std::nullopt, "jax-blockwise");
  CHECK(field(0, jax) == "impl");
}

TEST_CASE("decode: the shards add up to the cache, one device has no collectives", "[prefill][decode]") {
  for (const std::int64_t n : {1, 2, 8}) {
    auto s = test::resolve_scenario("h100-sxm", "llama3-8b", 1, n, 65536, "contiguous", "causal", std::nullopt, "ring-flash-attn");
    s.spec.batch = 4;
    const auto r = models::predict_decode(s, 65536);
    INFO("N " << n);
    // K and V (2) of 8 KV heads of dimension 128 in bf16 (2 bytes), per cached token of 4 sequences.
    CHECK(r.cache_bytes_read_per_layer * static_cast<double>(n) == Approx(4.0 * 65536 * 8 * 128 * 2 * 2));
    CHECK(r.kv_cache_bytes * static_cast<double>(n) == Approx(4.0 * 65536 * 32 * 8 * 128 * 2 * 2));
    if (n == 1) {
      CHECK(r.query_broadcast_s == 0);
      CHECK(r.output_gather_s == 0);
      CHECK(r.communication_share == 0);
    } else {
      CHECK(r.query_broadcast_s > 0);
      CHECK(r.output_gather_s > r.query_broadcast_s);  // outputs carry the log-sum-exp too
    }
    CHECK(r.tp_communication_s == 0);  // mp 1
    CHECK(r.elementwise_s > 0);
    CHECK(r.tpot_s == Approx(32 * (r.attention_layer_s + r.merge_s + r.query_broadcast_s + r.output_gather_s) +
                             r.weights_read_s + r.elementwise_s));
    CHECK(r.tokens_per_s == Approx(4 / r.tpot_s));
  }
}

TEST_CASE("decode: the cache's layout changes no work, so a library sharding it only in zigzag decodes", "[prefill][decode]") {
  // The new token attends to every cached token wherever its shard sits: every layout, the same TPOT.
  for (const std::int64_t n : {2, 8}) {
    INFO("N " << n);
    const auto base = models::predict_decode(
        test::resolve_scenario("h100-sxm", "llama3-8b", 1, n, 65536, "contiguous", "causal", std::nullopt, "ring-flash-attn"), 65536);
    for (const char* layout : {"zigzag", "striped"}) {
      INFO(layout);
      const auto r = models::predict_decode(
          test::resolve_scenario("h100-sxm", "llama3-8b", 1, n, 65536, layout, "causal", std::nullopt, "ring-flash-attn"), 65536);
      CHECK(r.tpot_s == base.tpot_s);
      CHECK(r.memory_bytes == base.memory_bytes);
    }
  }
  // TransformerEngine's ring offers zigzag only under a causal mask: decode's scenario takes it.
  models::ScenarioSpec spec;
  spec.hardware = "h100-sxm";
  spec.model = "llama3-8b";
  spec.sp = 8;
  spec.impl = "te-p2p";
  const auto decode = models::inference_spec(spec, models::RunPhase::Decode, 65536, models::Catalog{});
  CHECK(decode.layout.text() == "zigzag");
  CHECK(decode.n_seq == 65536);
  spec.impl = "ring-flash-attn";
  CHECK(models::inference_spec(spec, models::RunPhase::Decode, 65536, models::Catalog{}).layout.text() == "contiguous");
}

TEST_CASE("prefill and decode default to the serving stack: FlashAttention-3 on Hopper, FlashAttention-2 elsewhere",
          "[prefill][decode][impl]") {
  const models::Catalog cat;
  models::ScenarioSpec spec;
  spec.hardware = "h100-sxm";
  spec.model = "llama3-8b";
  spec.sp = 8;
  spec.n_seq = 65536;
  const auto prefill_spec = models::inference_spec(spec, models::RunPhase::Prefill, 0, cat);
  CHECK(prefill_spec.impl == "cp-serve");
  CHECK(prefill_spec.phase == models::RunPhase::Prefill);
  const auto hopper = models::resolve(prefill_spec, cat);
  REQUIRE(hopper.impl.kernel_model);
  CHECK(hopper.impl.kernel_model->name == "flash-attn-3");
  CHECK(hopper.profile.provenance.calibrated);  // FlashAttention-3's chart fit on this GPU
  // Decode takes the serving stack too, on the sharding its prefill leaves (zigzag).
  const auto decode_spec = models::inference_spec(spec, models::RunPhase::Decode, 65536, cat);
  CHECK(decode_spec.impl == "cp-serve");
  CHECK(decode_spec.layout.text() == "zigzag");
  CHECK(models::predict_decode(models::resolve(decode_spec, cat), 65536).tpot_s > 0);
  // A training library named for a prefill is still what runs (research and comparison).
  spec.impl = "ring-flash-attn";
  const auto fa2 = models::resolve(models::inference_spec(spec, models::RunPhase::Prefill, 0, cat), cat);
  CHECK(fa2.impl.kernel_model->name == "flash-attn-2");
  // The FlashAttention-3 fit is the faster kernel on Hopper (its chart: 1.5-2x FlashAttention-2's rate).
  const auto serve = models::predict_prefill(hopper, 0, PrefillVariant::PassKV);
  const auto train = models::predict_prefill(fa2, 0, PrefillVariant::PassKV);
  CHECK(serve.attention_layer_s < 0.9 * train.attention_layer_s);
  // Below Hopper both call FlashAttention-2 with the same fitted kernel parameters: the same prefill.
  for (const char* gpu : {"a100-80gb", "l40s"}) {
    INFO(gpu);
    spec.hardware = gpu;
    spec.impl = "";
    const auto a = models::resolve(models::inference_spec(spec, models::RunPhase::Prefill, 0, cat), cat);
    spec.impl = "ring-flash-attn";
    const auto b = models::resolve(models::inference_spec(spec, models::RunPhase::Prefill, 0, cat), cat);
    CHECK(a.impl.name == "cp-serve");
    CHECK(a.impl.kernel_model->name == "flash-attn-2");
    for (const auto v : {PrefillVariant::PassKV, PrefillVariant::PassQ}) {
      const auto x = models::predict_prefill(a, 8192, v), y = models::predict_prefill(b, 8192, v);
      CHECK(x.attention_layer_s == Approx(y.attention_layer_s).epsilon(1e-12));
      CHECK(x.ttft_s == Approx(y.ttft_s).epsilon(1e-12));
    }
  }
}

TEST_CASE("decode: the query and the partial outputs move by NCCL's all-gather over each tensor-parallel lane's ring",
          "[prefill][decode]") {
  // Oracle: NCCL's all-gather over the fabric (models/transport/collectives.hpp), on groups built
  // here from the placement (ring rank j of tensor-parallel lane k is device j x mp + k), with
  // nccl-tests' byte count (the output: N shards).
  for (const auto& [mp, n] : {std::pair<std::int64_t, std::int64_t>{1, 8}, {1, 32}, {2, 16}, {8, 4}}) {
    INFO("mp " << mp << " ring " << n);
    const auto s = test::resolve_scenario("h100-sxm", "llama3-8b", mp, n, 65536, "contiguous", "causal", std::nullopt,
                                          "ring-flash-attn");
    REQUIRE(s.transport);
    const auto d = models::predict_decode(s, 65536);
    std::vector<std::vector<std::int64_t>> lanes(static_cast<std::size_t>(mp));
    for (std::int64_t k = 0; k < mp; ++k)
      for (std::int64_t j = 0; j < n; ++j) lanes[static_cast<std::size_t>(k)].push_back(j * mp + k);
    const double h = static_cast<double>(s.cost->heads_per_device()), dim = static_cast<double>(s.model.head_dim);
    const double q = std::ceil(h * dim * 2 / static_cast<double>(n)), out = std::ceil(h * (dim * 2 + 4));
    const auto& fabric = s.transport->fabric();
    CHECK(d.query_broadcast_s ==
          Approx(models::transport::collective(fabric, models::transport::Collective::AllGather, lanes, q * static_cast<double>(n)).seconds).epsilon(1e-12));
    CHECK(d.output_gather_s ==
          Approx(models::transport::collective(fabric, models::transport::Collective::AllGather, lanes, out * static_cast<double>(n)).seconds).epsilon(1e-12));
    // NCCL's latency per ring step: tens of microseconds once the ring leaves its node.
    CHECK(d.output_gather_s > (s.ring_crosses_nodes() ? 2e-5 : 4e-6));
  }
}

TEST_CASE("prefill: pass-Q's partial outputs return by NCCL's all-to-all over the machine, every pair at once",
          "[prefill]") {
  // Oracle: every pair's transfer of each tensor-parallel lane's ring at once through the fabric's
  // fluid (models/transport/collectives.hpp concurrent), one block of partial outputs per pair.
  for (const auto& [hw, mp, n] : {std::tuple<const char*, std::int64_t, std::int64_t>{"h100-sxm", 1, 8},
                                  {"h100-sxm", 1, 32}, {"h100-sxm", 2, 16}, {"l20", 1, 8}, {"a100-80gb-pcie", 1, 4}}) {
    INFO(hw << " mp " << mp << " ring " << n);
    const auto s = test::resolve_scenario(hw, "llama3-8b", mp, n, 64 * n, "zigzag", "causal", std::nullopt, "ring-flash-attn");
    REQUIRE(s.transport);
    const auto r = models::predict_prefill(s, 0, PrefillVariant::PassQ);
    CHECK(r.all_to_all_on_transport);
    CHECK_FALSE(r.all_to_all_bound.empty());
    const double block = r.return_bytes / static_cast<double>(n - 1);
    std::vector<models::transport::Transfer> all;
    for (std::int64_t k = 0; k < mp; ++k)
      for (std::int64_t a = 0; a < n; ++a)
        for (std::int64_t b = 0; b < n; ++b)
          if (a != b) all.push_back({a * mp + k, b * mp + k, std::round(block)});
    CHECK(r.all_to_all_s == Approx(models::transport::concurrent(s.transport->fabric(), all).seconds).epsilon(1e-9));
  }
  // 65,536 GPUs in 8,192 nodes with a NIC per GPU: each GPU's NIC carries its blocks for the other
  // nodes' N - 8 GPUs while 7 go over NVLink, so the return is NIC-bound; priced in O(N).
  const std::int64_t n = 65536;
  const auto s = test::resolve_scenario("h100-sxm", "llama3-8b", 1, n, 2 * n, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  REQUIRE(s.transport);
  const auto r = models::predict_prefill(s, 0, PrefillVariant::PassQ);
  const auto& fabric = s.transport->fabric();
  const double block = std::round(r.return_bytes / static_cast<double>(n - 1));
  const double nic = fabric.machine().nic_bytes_per_s * fabric.scale();
  const auto inter = fabric.route(0, 8);
  CHECK(r.all_to_all_s == Approx(inter.latency_s + static_cast<double>(n - 8) * block / nic).epsilon(1e-9));
}

TEST_CASE("inference under tensor parallelism: two all-reduces per layer of the device's tokens, as training prices them",
          "[prefill][decode]") {
  // Closed form (CostModel::op_s, Megatron's all-reduce as a ring over mp in one node): per
  // all-reduce 2 (mp - 1) latencies and 2 (mp - 1) / mp of the tokens' bf16 activations over the
  // link; two per layer, forward only.
  const auto all_reduces = [](const models::ResolvedScenario& s, double tokens) {
    const double mp = static_cast<double>(s.spec.mp);
    const double bytes = tokens * static_cast<double>(s.model.d_model) * 2;
    const double bw = s.hardware.intra_link_bandwidth_bytes_per_s * s.profile.link_efficiency;
    const double lat = s.profile.link_latency_s.value_or(s.hardware.intra_link_latency_s);
    return 2.0 * static_cast<double>(s.model.layers) * (2 * (mp - 1) * lat + 2 * (mp - 1) / mp * bytes / bw);
  };
  for (const std::int64_t mp : {1, 2, 4}) {
    INFO("mp " << mp);
    // Prefill: 2 x 4 devices in one node, 32,768 new tokens over 65,536 cached: 8,192 new tokens per device.
    auto s = test::resolve_scenario("h100-sxm", "llama3-8b", mp, 8 / mp, 32768, "zigzag", "causal", std::nullopt,
                                    "ring-flash-attn");
    for (const auto v : {PrefillVariant::PassKV, PrefillVariant::PassQ}) {
      const auto r = models::predict_prefill(s, 65536, v);
      CHECK(r.tp_communication_s == Approx(mp == 1 ? 0.0 : all_reduces(s, 32768.0 / static_cast<double>(8 / mp))));
      CHECK(r.ttft_s == Approx(32 * r.attention_layer_s + r.other_compute_s + r.tp_communication_s));
      if (mp > 1) CHECK_THAT(r.why, Catch::Contains("tensor-parallel all-reduces"));
    }
    // Decode: one token of each of 4 sequences.
    s.spec.batch = 4;
    const auto d = models::predict_decode(s, 65536);
    CHECK(d.tp_communication_s == Approx(mp == 1 ? 0.0 : all_reduces(s, 4.0)));
    CHECK(d.tpot_s == Approx(32 * (d.attention_layer_s + d.merge_s + d.query_broadcast_s + d.output_gather_s) +
                             d.weights_read_s + d.elementwise_s + d.tp_communication_s));
  }
}

TEST_CASE("decode: a long cache gains from the ring, a short one pays the ring's collectives", "[prefill][decode]") {
  const auto at = [](std::int64_t n, std::int64_t batch, std::int64_t context) {
    auto s = test::resolve_scenario("h100-sxm", "llama3-8b", 1, n, context, "contiguous", "causal", std::nullopt, "ring-flash-attn");
    s.spec.batch = batch;
    return models::predict_decode(s, context);
  };
  // One sequence with 1M tokens of cache: 137 GB of K/V (32 layers), more than one H100 holds; a
  // ring of 8 holds an eighth each and reads an eighth per step.
  const auto long_ring = at(8, 1, 1 << 20), long_alone = at(1, 1, 1 << 20);
  CHECK(long_ring.tpot_s < long_alone.tpot_s);
  CHECK(long_ring.fits_memory);
  CHECK_FALSE(long_alone.fits_memory);
  CHECK_THAT(long_alone.why, Catch::Contains("cache-bound"));
  // 4k tokens, one sequence: reading the weights dominates either way; a ring of 32 (four nodes)
  // adds two collectives per layer across nodes and is slower than one device.
  const auto short_ring = at(32, 1, 4096), short_alone = at(1, 1, 4096);
  CHECK(short_ring.tpot_s > short_alone.tpot_s);
  CHECK(short_ring.communication_share > 0.05);
  CHECK_THAT(short_alone.why, Catch::Contains("weight-bound"));
}

TEST_CASE("decode: bad requests are InputErrors naming the field", "[prefill][decode]") {
  auto s = test::resolve_scenario("h100-sxm", "llama3-8b", 1, 8, 65536, "contiguous", "causal", std::nullopt, "ring-flash-attn");
  CHECK_THROWS_AS(models::predict_decode(s, 0), models::InputError);
  CHECK_THROWS_AS(models::predict_decode(s, 65537), models::InputError);
  try {
    (void)models::predict_decode(s, 12);
  } catch (const models::InputError& e) {
    CHECK(e.field() == "cached-tokens");
  }
}

TEST_CASE("prefill: a transfer-bound why names the rounds that wait for the hop, or pass-Q's all-to-all", "[prefill]") {
  // 32 H100s across nodes, 64k new tokens over 128k cached: pass-KV's K/V hop outlasts most rounds'
  // calls; pass-Q's queries hide and its returned outputs are what is exposed.
  auto s = test::resolve_scenario("h100-sxm", "llama3-8b", 1, 32, 65536, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  const auto kv = models::predict_prefill(s, 131072, PrefillVariant::PassKV);
  std::int64_t waiting = 0;
  for (const auto& round : kv.rounds) waiting += round.transfer_s > round.compute_max_s ? 1 : 0;
  INFO(kv.why);
  REQUIRE(kv.why.starts_with("transfer-bound"));
  CHECK(kv.why.find("waiting for the hop in " + std::to_string(waiting) + " of 31 rounds") != std::string::npos);
  const auto q = models::predict_prefill(s, 131072, PrefillVariant::PassQ);
  INFO(q.why);
  for (const auto& round : q.rounds) CHECK(round.transfer_s <= round.compute_max_s);
  CHECK(q.why.find("all-to-all returning pass-Q's partial outputs") != std::string::npos);
}

TEST_CASE("prefill: the ring hop is the training ring's on the machine, PCIe sharing and staged copies included",
          "[prefill]") {
  const models::Catalog cat;
  for (const char* hw : {"l20", "rtx-4090", "h100-sxm", "a100-80gb"}) {
    INFO(hw);
    models::ScenarioSpec spec;
    spec.hardware = hw;
    spec.model = "llama3-8b";
    spec.sp = 8;
    spec.n_seq = 65536;
    const auto s = models::resolve(models::inference_spec(spec, models::RunPhase::Prefill, 0, cat), cat);
    const auto hop = models::prefill_hop(s);
    const bool crosses = s.ring_crosses_nodes();
    CHECK(hop.bandwidth_bytes_per_s == s.cost->ring_bandwidth_bytes_per_s(crosses));
    CHECK(hop.latency_s == s.cost->ring_latency_s(crosses));
    // pass-Q's hop time is that rate's: message bytes over it plus its latency, each round.
    const auto q = models::predict_prefill(s, 0, PrefillVariant::PassQ);
    REQUIRE(q.rounds.size() == 8);
    CHECK(q.rounds.front().transfer_s == Approx(hop.latency_s + q.message_bytes / hop.bandwidth_bytes_per_s));
  }
}
