// The kernel-time model: the list schedule against brute force, wave quantisation, tile counts of
// forward and backward calls against a brute-force walk of the kernel's loops, and the
// qualitative physics a flash-attention call must show (causal half the work of full; per-tile
// costs amortise as blocks grow; fewer CTAs than slots cost a whole wave).
#include <algorithm>
#include <numeric>
#include <random>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/families/kernel_time.hpp"
#include "models/catalog/resolve.hpp"

using namespace ringsim::models;

namespace {

// Greedy list scheduling by brute force: each CTA to the slot that frees first (lowest index on ties).
double brute_makespan(const std::vector<double>& pattern, std::int64_t repeats, std::int64_t slots) {
  std::vector<double> free(static_cast<std::size_t>(slots), 0.0);
  double end = 0;
  for (std::int64_t r = 0; r < repeats; ++r)
    for (const double w : pattern) {
      auto it = std::min_element(free.begin(), free.end());
      *it += w;
      end = std::max(end, *it);
    }
  return end;
}

// The drain by brute force, SM by SM: CTAs go in launch order to the first slot that frees (slot s
// on SM s mod sm_count; the lowest slot on ties), each SM's residents sharing it by processor
// sharing (j of k CTAs get (1 + gain (k - j) / (k - 1)) / k of it each); `pattern` holds wall
// times at k CTAs per SM. Event by event: the next finish, everything advanced to it.
double brute_drain(const std::vector<double>& pattern, std::int64_t repeats, std::int64_t sm_count, std::int64_t k,
                   double gain) {
  const std::int64_t slots = sm_count * k, n = static_cast<std::int64_t>(pattern.size()) * repeats;
  std::vector<double> left(static_cast<std::size_t>(slots), -1.0);  // SM-seconds; < 0: free
  std::int64_t next = 0;
  const auto work = [&](std::int64_t i) { return pattern[static_cast<std::size_t>(i) % pattern.size()] / static_cast<double>(k); };
  for (std::int64_t s = 0; s < slots && next < n; ++s) left[static_cast<std::size_t>(s)] = work(next++);
  const auto rate = [&](std::int64_t s) {
    std::int64_t j = 0;
    for (std::int64_t t = s % sm_count; t < slots; t += sm_count) j += left[static_cast<std::size_t>(t)] >= 0 ? 1 : 0;
    return k == 1 ? 1.0 : (1.0 + gain * static_cast<double>(k - j) / static_cast<double>(k - 1)) / static_cast<double>(k);
  };
  double now = 0;
  for (;;) {
    std::int64_t first = -1;
    double dt = 0;
    std::vector<double> rates(static_cast<std::size_t>(slots), 0.0);
    for (std::int64_t s = 0; s < slots; ++s) {
      if (left[static_cast<std::size_t>(s)] < 0) continue;
      rates[static_cast<std::size_t>(s)] = rate(s);
      const double t = left[static_cast<std::size_t>(s)] / rates[static_cast<std::size_t>(s)];
      if (first < 0 || t < dt) first = s, dt = t;
    }
    if (first < 0) return now;
    now += dt;
    for (std::int64_t s = 0; s < slots; ++s)
      if (left[static_cast<std::size_t>(s)] >= 0)
        left[static_cast<std::size_t>(s)] = std::max(0.0, left[static_cast<std::size_t>(s)] - rates[static_cast<std::size_t>(s)] * dt);
    left[static_cast<std::size_t>(first)] = next < n ? work(next++) : -1.0;
    for (std::int64_t s = 0; s < slots; ++s)  // others that finished at the same instant
      if (s != first && left[static_cast<std::size_t>(s)] == 0) left[static_cast<std::size_t>(s)] = next < n ? work(next++) : -1.0;
  }
}

KernelSpec toy_spec() {
  KernelSpec s;
  s.name = "toy";
  s.fwd_tiles = {{64, 16, 8, 4, 4096}, {128, 16, 16, 4, 8192}};
  s.bwd_tiles = {{128, 8, 16, 8, 8192}};
  s.registers_per_thread = 128;
  s.fwd_alu_per_element = 2;
  s.bwd_alu_per_element = 3;
  s.mask_alu_per_element = 1;
  return s;
}

KernelRates toy_rates() {
  KernelRates r;
  r.sm_count = 4;
  r.registers_per_sm = 65536;
  r.shared_memory_per_sm_bytes = 16384;
  r.fwd_flops_per_s = 1e12;
  r.bwd_flops_per_s = 5e11;
  r.exp_per_s = 1e10;
  r.alu_per_s = 2e10;
  r.hbm_bytes_per_s = 1e11;
  r.tile_overhead_s = 1e-7;
  r.cta_overhead_s = 1e-6;
  r.softmax_overlap = 0.5;
  return r;
}

}  // namespace

TEST_CASE("the list schedule equals brute-force greedy scheduling and is exact for uniform waves", "[kernel]") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const auto m = std::uniform_int_distribution<int>(1, 9)(rng);
    std::vector<double> pattern;
    for (int i = 0; i < m; ++i) pattern.push_back(std::uniform_real_distribution<double>(0.1, 5.0)(rng));
    const std::int64_t repeats = std::uniform_int_distribution<std::int64_t>(1, 12)(rng);
    const std::int64_t slots = std::uniform_int_distribution<std::int64_t>(1, 10)(rng);
    // Exact below its limit: a generous one.
    CHECK(list_schedule_makespan(pattern, repeats, slots, 1 << 20) ==
          Approx(brute_makespan(pattern, repeats, slots)).epsilon(1e-12));
  }
  // Uniform CTAs: whole waves, ceil(n / slots) of them.
  CHECK(list_schedule_makespan({2.0}, 10, 4, 1 << 20) == Approx(3 * 2.0));
  CHECK(list_schedule_makespan({2.0}, 8, 4, 1 << 20) == Approx(2 * 2.0));
  // Beyond the exact limit the fluid bulk stays within one CTA of the exact answer.
  std::vector<double> causal;
  for (int i = 1; i <= 16; ++i) causal.push_back(static_cast<double>(i));
  const double exact = brute_makespan(causal, 400, 24);
  const double approx = list_schedule_makespan(causal, 400, 24, 32);
  CHECK(std::abs(approx - exact) <= 16.0);
  CHECK(list_schedule_makespan({}, 5, 3) == 0);
}

TEST_CASE("CTAs of one duration take the closed form the greedy schedule would give", "[kernel]") {
  std::mt19937_64 rng(12);
  for (int trial = 0; trial < 300; ++trial) {
    const auto m = std::uniform_int_distribution<int>(1, 9)(rng);
    const double w = std::uniform_real_distribution<double>(0.1, 5.0)(rng);
    const std::vector<double> even(static_cast<std::size_t>(m), w);
    const std::int64_t repeats = std::uniform_int_distribution<std::int64_t>(1, 40)(rng);
    const std::int64_t slots = std::uniform_int_distribution<std::int64_t>(1, 10)(rng);
    CHECK(list_schedule_makespan(even, repeats, slots, 1 << 20) ==
          Approx(brute_makespan(even, repeats, slots)).epsilon(1e-12));
    // Beyond the exact limit, against the heap's schedule of the same fluid start (one CTA a hair
    // longer keeps the heap path; it moves the makespan by at most that hair).
    auto uneven = even;
    uneven.back() *= 1 + 1e-12;
    const std::int64_t limit = std::uniform_int_distribution<std::int64_t>(1, 3)(rng) * slots;
    CHECK(list_schedule_makespan(even, repeats, slots, limit) ==
          Approx(list_schedule_makespan(uneven, repeats, slots, limit)).epsilon(1e-9));
  }
}

TEST_CASE("the closed form for CTAs of one duration equals the list schedule", "[kernel]") {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 1000; ++trial) {
    const double w = std::uniform_real_distribution<double>(0.01, 5.0)(rng);
    const std::int64_t ctas = std::uniform_int_distribution<std::int64_t>(1, 3000)(rng);
    const std::int64_t slots = std::uniform_int_distribution<std::int64_t>(1, 300)(rng);
    const std::int64_t limit = std::uniform_int_distribution<std::int64_t>(0, 40)(rng) * slots;
    INFO(w << " x " << ctas << " on " << slots << ", exact up to " << limit);
    CHECK(uniform_makespan(w, ctas, slots, limit) ==
          Approx(list_schedule_makespan({w}, ctas, slots, limit)).epsilon(1e-12));
    if (ctas <= 200) CHECK(uniform_makespan(w, ctas, slots, 1 << 20) == Approx(brute_makespan({w}, ctas, slots)).epsilon(1e-12));
  }
  CHECK(uniform_makespan(2.0, 10, 4) == Approx(3 * 2.0));
  CHECK(uniform_makespan(2.0, 0, 4) == 0);
}

TEST_CASE("the last wave drains: SMs left with fewer CTAs run them faster", "[kernel]") {
  std::mt19937_64 rng(14);
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t sms = std::uniform_int_distribution<std::int64_t>(1, 12)(rng);
    const std::int64_t k = std::uniform_int_distribution<std::int64_t>(1, 4)(rng);
    const double gain = std::uniform_real_distribution<double>(0.0, static_cast<double>(std::max<std::int64_t>(1, k - 1)))(rng);
    const std::int64_t repeats = std::uniform_int_distribution<std::int64_t>(1, 8 * sms * k)(rng);
    const double w = std::uniform_real_distribution<double>(0.1, 5.0)(rng);
    INFO(repeats << " CTAs of " << w << " on " << sms << " SMs x " << k << ", gain " << gain);
    // CTAs of one duration: the leftover CTAs sit alone on their SMs, as brute force finds.
    const double uniform = drained_makespan({w}, repeats, sms, k, gain, 1 << 20);
    CHECK(uniform == Approx(brute_drain({w}, repeats, sms, k, gain)).epsilon(1e-9));
    // Past the exact limit (32 x slots by default) the bulk is fluid: within one CTA of brute force.
    const std::int64_t many = repeats * 8;
    CHECK(std::abs(drained_makespan({w}, many, sms, k, gain) - brute_drain({w}, many, sms, k, gain)) <= w + 1e-9);
    // Uneven CTAs: which CTAs share an SM at the end is dealt by rank, not tracked slot by slot,
    // so brute force is matched up to what the end's sharing can change (the longest CTA's
    // speed-up); never slower than the list schedule.
    const auto m = std::uniform_int_distribution<int>(1, 9)(rng);
    std::vector<double> pattern;
    for (int i = 0; i < m; ++i) pattern.push_back(std::uniform_real_distribution<double>(0.1, 5.0)(rng));
    const std::int64_t r = std::max<std::int64_t>(1, repeats / m);
    const double drained = drained_makespan(pattern, r, sms, k, gain, 1 << 20);
    const double longest = *std::max_element(pattern.begin(), pattern.end());
    const double bound = k > 1 ? longest * gain / (1 + gain) : 0.0;
    CHECK(std::abs(drained - brute_drain(pattern, r, sms, k, gain)) <= bound + 1e-9);
    CHECK(drained <= list_schedule_makespan(pattern, r, sms * k, 1 << 20) + 1e-9);
    // Gain 0 is the list schedule itself.
    CHECK(drained_makespan(pattern, r, sms, k, 0.0, 1 << 20) == list_schedule_makespan(pattern, r, sms * k, 1 << 20));
    // Continuous in the CTAs' durations (a fit differentiates it): one CTA a hair longer moves it
    // a hair, even where that reorders which slot frees first.
    auto nudged = pattern;
    nudged[static_cast<std::size_t>(trial % m)] *= 1 + 1e-9;
    CHECK(drained_makespan(nudged, r, sms, k, gain, 1 << 20) == Approx(drained).epsilon(1e-7));
  }
  // 256 CTAs on 108 SMs of 2 (A800's forward at head dim 128): two wall-time units for the first
  // 216, then 40 alone on their SMs at (1 + g) / 2 of the SM each.
  CHECK(drained_makespan({2.0}, 256, 108, 2, 0.8) == Approx(2.0 + 1.0 / ((1 + 0.8) / 2)));
  // 1024 CTAs: the last 160 leave 52 SMs with two, which set the end: whole waves.
  CHECK(drained_makespan({2.0}, 1024, 108, 2, 0.8) == Approx(5 * 2.0));
}

TEST_CASE("CTAs per SM follow registers and shared memory", "[kernel]") {
  auto s = toy_spec();
  auto r = toy_rates();
  // 4 warps x 32 threads x 128 registers = 16384: four fit in 65536; 4096 B of 16384 B: four again.
  CHECK(ctas_per_sm(s, s.fwd_tiles[0], r) == 4);
  CHECK(ctas_per_sm(s, s.fwd_tiles[1], r) == 2);  // shared memory: 8192 of 16384
  s.registers_per_thread = 255;
  CHECK(ctas_per_sm(s, s.fwd_tiles[0], r) == 2);  // registers: 32640 each
  r.shared_memory_per_sm_bytes = 100;
  CHECK(ctas_per_sm(s, s.fwd_tiles[0], r) == 1);  // never below one
}

TEST_CASE("flash call times: causal costs about half of full, backward more than forward", "[kernel]") {
  const auto s = toy_spec();
  const auto r = toy_rates();
  KernelCall full{2048, 2048, false, 0, 8, 8, 1, 64};
  KernelCall causal = full;
  causal.causal = true;
  const double tf = flash_fwd_s(s, r, full), tc = flash_fwd_s(s, r, causal);
  CHECK(tc < 0.6 * tf);
  CHECK(tc > 0.45 * tf);
  CHECK(flash_bwd_s(s, r, full) > tf);
  // Zero-sized calls cost nothing.
  KernelCall empty = full;
  empty.q_len = 0;
  CHECK(flash_fwd_s(s, r, empty) == 0);
  CHECK(flash_bwd_s(s, r, empty) == 0);
  // A head dim above every tile configuration is refused by name.
  KernelCall wide = full;
  wide.head_dim = 512;
  CHECK_THROWS_AS(flash_fwd_s(s, r, wide), InputError);
}

TEST_CASE("per-tile and per-CTA costs amortise as the call grows", "[kernel]") {
  const auto s = toy_spec();
  auto r = toy_rates();
  // Time per element of work with and without the fixed costs: the overhead's share falls with k_len.
  auto share = [&](std::int64_t k_len) {
    KernelCall c{512, k_len, false, 0, 64, 64, 1, 64};
    const double with = flash_fwd_s(s, r, c);
    auto bare = r;
    bare.cta_overhead_s = 0;
    const double without = flash_fwd_s(s, bare, c);
    return (with - without) / with;
  };
  CHECK(share(4096) < share(256));
  CHECK(share(256) > 0);
}

TEST_CASE("fewer CTAs than slots cost a whole wave", "[kernel]") {
  const auto s = toy_spec();
  const auto r = toy_rates();  // 4 SMs x 4 CTAs = 16 slots for the 16-row tile
  // 1 head of 256 rows = 16 CTAs: one wave; 17 CTAs would take two.
  KernelCall one{256, 1024, false, 0, 1, 1, 1, 64};
  KernelCall more{272, 1024, false, 0, 1, 1, 1, 64};
  CHECK(flash_fwd_s(s, r, more) == Approx(2 * flash_fwd_s(s, r, one)).epsilon(1e-9));
}

TEST_CASE("the kernel's loops visit the tiles a brute-force walk finds", "[kernel]") {
  // A causal call with one head and one slot: the makespan is the sum of every CTA's work, so the
  // forward and backward times pin the visited and straddling tile counts.
  auto s = toy_spec();
  s.fwd_tiles = {{64, 4, 3, 1, 0}};
  s.bwd_tiles = {{64, 3, 4, 1, 0}};
  KernelRates r;
  r.sm_count = 1;
  r.registers_per_sm = 32 * 255;  // one CTA per SM
  r.shared_memory_per_sm_bytes = 1 << 20;
  r.fwd_flops_per_s = r.bwd_flops_per_s = 1e300;  // only the counted costs remain
  r.exp_per_s = r.alu_per_s = 1e300;
  r.hbm_bytes_per_s = 1e300;
  r.tile_overhead_s = 1.0;  // 1 s per visited tile
  r.cta_overhead_s = 0;
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    KernelCall c;
    c.q_len = std::uniform_int_distribution<std::int64_t>(1, 30)(rng);
    c.k_len = std::uniform_int_distribution<std::int64_t>(1, 30)(rng);
    c.causal = true;
    c.diagonal = std::uniform_int_distribution<std::int64_t>(-30, 30)(rng);
    c.head_dim = 64;
    auto visited = [&](std::int64_t bm, std::int64_t bn) {
      std::int64_t n = 0;
      for (std::int64_t i0 = 0; i0 < c.q_len; i0 += bm)
        for (std::int64_t j0 = 0; j0 < c.k_len; j0 += bn) {
          bool any = false;
          for (std::int64_t i = i0; i < std::min(c.q_len, i0 + bm); ++i)
            for (std::int64_t j = j0; j < std::min(c.k_len, j0 + bn); ++j) any = any || j <= i + c.diagonal;
          n += any;
        }
      return n;
    };
    INFO(c.q_len << "x" << c.k_len << " diagonal " << c.diagonal);
    CHECK(flash_fwd_s(s, r, c) == Approx(static_cast<double>(visited(4, 3))));
    CHECK(flash_bwd_s(s, r, c) == Approx(static_cast<double>(visited(3, 4))));
  }
}

TEST_CASE("a forward tile lasts at least as long as its shared-memory traffic", "[kernel]") {
  auto s = toy_spec();
  s.fwd_smem_kv_read_bytes_per_warp = 4;
  s.fwd_smem_kv_write_bytes = 4;
  s.fwd_smem_q_read_bytes = 2;
  // Tile 16 x 8 of 4 warps at head dim 64: 64 x ((4 x 4 + 4) / 16 + 2 / 8) bytes per element.
  CHECK(s.fwd_smem_bytes(s.tile(false, 64, false, {})) == Approx(96.0).epsilon(1e-12));
  auto r = toy_rates();
  // Non-causal: no straddling tiles, whose mask work the bound does not cover.
  const KernelCall c{512, 2048, false, 0, 8, 8, 1, 64};
  const double none = flash_fwd_s(s, r, c);
  // A bound far above the compute rate changes nothing; the backward never reads it.
  r.smem_bytes_per_s = 1e18;
  CHECK(flash_fwd_s(s, r, c) == none);
  // Where the bound binds every tile, the tiles' part of the call scales with 1 / rate: with the
  // fixed costs removed, halving the rate doubles the call.
  r.tile_overhead_s = r.cta_overhead_s = r.memory_latency_s = 0;
  r.smem_bytes_per_s = 0;
  const double bwd = flash_bwd_s(s, r, c);
  r.smem_bytes_per_s = 1e9;
  const double bound = flash_fwd_s(s, r, c);
  CHECK(bound > none);
  auto half = r;
  half.smem_bytes_per_s = 5e8;
  CHECK(flash_fwd_s(s, half, c) == Approx(2 * bound).epsilon(1e-9));
  CHECK(flash_bwd_s(s, half, c) == bwd);
  // Non-increasing in the rate, between the bound and the unbound call.
  double last = bound;
  for (double rate : {2e9, 8e9, 3.2e10, 1e12}) {
    r.smem_bytes_per_s = rate;
    const double t = flash_fwd_s(s, r, c);
    CHECK(t <= last);
    last = t;
  }
}

TEST_CASE("FlashAttention-2's split kernel moves more shared-memory bytes per element than its full tile", "[kernel][config]") {
  const Catalog cat;
  const auto im = cat.implementation("ring-flash-attn");
  REQUIRE(im.kernel_model);
  const auto& k = *im.kernel_model;
  REQUIRE(k.fwd_split_kv);
  // Head dim 128: 128 x 64 tile of 4 warps, 128 x (20 / 128 + 2 / 64) = 24 bytes per element; the
  // split kernel's 64 x 128 of 4 warps, 128 x (20 / 64 + 2 / 128) = 42.
  CHECK(k.fwd_smem_bytes(k.tile(false, 128, false, {})) == Approx(24.0));
  const auto* split = tile_for(k.fwd_split_kv->tiles, 128, false, {});
  REQUIRE(split);
  CHECK(k.fwd_smem_bytes(*split) == Approx(42.0));
  // A call of one head over few query blocks splits and runs the split tile; one of many heads does not.
  const auto hw = cat.hardware("a800");
  CHECK(hw.shared_memory_bytes_per_clock_per_sm == 128);
  const auto r = KernelRates::of(hw, cat.profile("", hw, "ring-flash-attn"));
  CHECK(flash_fwd_tile(k, r, KernelCall{1024, 16384, false, 0, 1, 1, 1, 128}).block_m == 64);
  CHECK(flash_fwd_tile(k, r, KernelCall{4096, 4096, false, 0, 32, 32, 1, 128}).block_m == 128);
}

namespace {

// FlashAttention-3's num_splits_heuristic (Dao-AILab/flash-attention hopper/heuristics.h @ 13d0fd9),
// restated line by line for the cases the kernel model covers (no L2 split): the oracle of SplitKv.
std::int64_t fa3_num_splits(std::int64_t total_mblocks, std::int64_t num_sms, std::int64_t num_n_blocks) {
  if (static_cast<double>(total_mblocks) >= 0.8 * static_cast<double>(num_sms)) return 1;
  if (num_n_blocks <= 4) return 1;
  const std::int64_t max_splits = std::min<std::int64_t>({128, num_sms, num_n_blocks});
  double max_efficiency = 0;
  std::vector<double> efficiency;
  for (std::int64_t n = 1; n <= max_splits; ++n) {
    const double waves = static_cast<double>(total_mblocks * n) / static_cast<double>(num_sms);
    const double eff = waves / std::ceil(waves);
    max_efficiency = std::max(max_efficiency, eff);
    efficiency.push_back(eff);
  }
  for (std::int64_t n = 1; n <= max_splits; ++n)
    if (efficiency[static_cast<std::size_t>(n - 1)] >= 0.85 * max_efficiency) return n;
  return 1;
}

}  // namespace

TEST_CASE("FlashAttention-3 splits short-query calls as its heuristic does, its query heads packed per K/V head",
          "[kernel][config]") {
  const Catalog cat;
  const auto im = cat.implementation("cp-serve");
  const KernelSpec& k = *im.kernel_for(90);
  REQUIRE(k.name == "flash-attn-3");
  REQUIRE(k.fwd_split_kv);
  const SplitKv& sk = *k.fwd_split_kv;
  for (const std::int64_t sms : {78, 114, 132})
    for (std::int64_t work = 1; work <= 140; work += 3)
      for (const std::int64_t blocks : {1, 4, 5, 7, 64, 200, 4096}) {
        INFO(sms << " SMs, " << work << " blocks of queries, " << blocks << " of keys");
        CHECK(sk.splits(work, blocks, sms) == fa3_num_splits(work, sms, blocks));
      }
  const auto hw = cat.hardware("h100-sxm");
  const auto r = KernelRates::of(hw, cat.profile("", hw, "cp-serve"));
  // Packed: 16 tokens of 4 query heads per K/V head are the 64 rows one K/V head's 16 x 4 queries
  // make, so a GQA call times as the call of 8 heads with 64 queries each (no mask: rows are rows).
  const double gqa = flash_fwd_s(k, r, KernelCall{16, 65536, false, 0, 32, 8, 1, 128});
  const double mha = flash_fwd_s(k, r, KernelCall{64, 65536, false, 0, 8, 8, 1, 128});
  CHECK(gqa == Approx(mha).epsilon(1e-12));
  // A decode-sized call splits (8 packed blocks on 132 SMs) and is far faster than one CTA per head
  // walking 65536 keys alone; a call that fills the SMs does not split.
  CHECK(fa3_num_splits(8, 132, 65536 / 176 + 1) > 1);
  KernelSpec unsplit = k;
  unsplit.fwd_split_kv.reset();
  CHECK(flash_fwd_s(unsplit, r, KernelCall{16, 65536, false, 0, 32, 8, 1, 128}) > 4 * gqa);
  CHECK(flash_fwd_tile(k, r, KernelCall{8192, 8192, false, 0, 32, 8, 1, 128}).block_n == 176);
}

TEST_CASE("kernel specs load from configs/kernels through an implementation and reject malformed tiles", "[kernel][config]") {
  const Catalog cat;
  const auto im = cat.implementation("ring-flash-attn");
  REQUIRE(im.kernel_model);
  const TileDevice a100{80, 166912, 167936};
  CHECK(im.kernel_model->tile(false, 128, false, a100).block_m == 128);
  CHECK(im.kernel_model->tile(false, 128, false, a100).block_n == 64);
  CHECK(im.kernel_model->tile(true, 128, false, a100).block_m == 64);
  CHECK(im.kernel_model->tile(false, 100, false, a100).max_head_dim == 128);  // head dim 100 runs as 128
  CHECK(im.kernel_model->name == "flash-attn-2");
  CHECK_FALSE(im.kernel_model->sources.empty());
  nlohmann::json j = {{"name", "k"},
                      {"description", "a kernel"},
                      {"sources", {{{"repo", "o/r"}, {"path", "k.cu"}, {"commit", std::string(40, 'a')}, {"what", "tiles"}}}},
                      {"fwd_tiles", {{{"max_head_dim", 64}, {"block_m", 64}, {"block_n", 64}, {"warps", 4}, {"smem_bytes", 0}}}},
                      {"bwd_tiles", {{{"max_head_dim", 64}, {"block_m", 64}, {"block_n", 64}, {"warps", 4}, {"smem_bytes", 0}}}}};
  CHECK_NOTHROW(KernelSpec::from_json(j, "f.json"));
  auto bad = j;
  bad["fwd_tiles"][0]["block_m"] = 0;
  try {
    (void)KernelSpec::from_json(bad, "f.json");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "f.json");
    CHECK(e.field() == "fwd_tiles[0].block_m");
  }
  bad = j;
  bad["fwd_tiles"].push_back(j["fwd_tiles"][0]);  // head dims must increase
  CHECK_THROWS_AS(KernelSpec::from_json(bad, "f.json"), InputError);
  bad = j;
  bad.erase("sources");  // a kernel cites its code
  CHECK_THROWS_WITH(KernelSpec::from_json(bad, "f.json"), Catch::Contains("cite"));
  // A backward warp layout is all three atoms, each a divisor of the tile's warps.
  auto laid = j;
  laid["bwd_tiles"][0]["atom_m_sdp"] = 2;
  laid["bwd_tiles"][0]["atom_n_dkv"] = 4;
  laid["bwd_tiles"][0]["atom_m_dq"] = 1;
  laid["bwd_tiles"][0]["v_in_regs"] = true;
  const auto ok = KernelSpec::from_json(laid, "f.json");
  CHECK(ok.bwd_tiles[0].atom_m_sdp == 2);
  CHECK(ok.bwd_tiles[0].v_in_regs);
  CHECK(ok.bwd_smem_bytes(ok.bwd_tiles[0]) == 0);  // no element bytes: no backward bound
  bad = laid;
  bad["bwd_tiles"][0].erase("atom_m_dq");
  try {
    (void)KernelSpec::from_json(bad, "f.json");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.field() == "bwd_tiles[0].atom_m_dq");
  }
  bad = laid;
  bad["bwd_tiles"][0]["atom_n_dkv"] = 3;
  CHECK_THROWS_WITH(KernelSpec::from_json(bad, "f.json"), Catch::Contains("divisor"));
  bad = laid;
  bad["bwd_tiles"][0]["v_in_regs"] = 1;
  CHECK_THROWS_WITH(KernelSpec::from_json(bad, "f.json"), Catch::Contains("true or false"));
}

namespace {

// Oracle for KernelSpec::bwd_smem_bytes: every warp of the layout reads, element by element, the
// rows of each product's two operands that its output block needs, over the whole reduction; the
// Q and dO tiles and P and dS are written once. Bytes per element of the tile.
double enumerated_bwd_smem_bytes(const KernelTile& t, double element_bytes) {
  const std::int64_t m = t.block_m, n = t.block_n, d = t.max_head_dim, w = t.warps;
  // C (rows x cols) = A (rows x red) B (cols x red)^T with `along` warps along the rows.
  const auto product = [&](std::int64_t rows, std::int64_t cols, std::int64_t red, std::int64_t along, bool b_read) {
    std::int64_t bytes = 0;
    const std::int64_t across = w / along;
    for (std::int64_t wr = 0; wr < along; ++wr)
      for (std::int64_t wc = 0; wc < across; ++wc) {
        for (std::int64_t i = wr * rows / along; i < (wr + 1) * rows / along; ++i)
          for (std::int64_t k = 0; k < red; ++k) ++bytes;  // A's row i
        if (b_read)
          for (std::int64_t j = wc * cols / across; j < (wc + 1) * cols / across; ++j)
            for (std::int64_t k = 0; k < red; ++k) ++bytes;  // B's row j
      }
    return bytes;
  };
  std::int64_t elements = 2 * m * d + 2 * m * n;                       // Q, dO; P, dS written
  elements += product(m, n, d, t.atom_m_sdp, true);                    // S = Q K^T
  elements += product(m, n, d, t.atom_m_sdp, !t.v_in_regs);            // dP = dO V^T
  elements += 2 * product(n, d, m, t.atom_n_dkv, true);                // dV = P^T dO, dK = dS^T Q
  elements += product(m, d, n, t.atom_m_dq, true);                     // dQ = dS K
  return element_bytes * static_cast<double>(elements) / static_cast<double>(m * n);
}

}  // namespace

TEST_CASE("a backward tile's shared-memory bytes match its warps' reads, element by element", "[kernel][config]") {
  const Catalog cat;
  const auto im = cat.implementation("ring-flash-attn");
  REQUIRE(im.kernel_model);
  const auto& k = *im.kernel_model;
  REQUIRE(k.bwd_smem_element_bytes == 2);
  for (const auto& t : k.bwd_tiles) {
    INFO("head dim " << t.max_head_dim);
    REQUIRE(t.atom_m_sdp > 0);
    CHECK(k.bwd_smem_bytes(t) == Approx(enumerated_bwd_smem_bytes(t, 2)).epsilon(1e-12));
  }
  // Hand-counted on a GPU of >= 176 KB per CTA (H100): head dim 32 (128 x 128, 4/4/4, V in
  // registers) 27 bytes per element; 128 (64 x 128, 2/4/2) 80; 256 (64 x 64, 4/2/2) 188.
  const TileDevice hopper{90, 232448, 233472};
  CHECK(k.bwd_smem_bytes(k.tile(true, 32, false, hopper)) == Approx(27.0));
  CHECK(k.bwd_smem_bytes(k.tile(true, 128, false, hopper)) == Approx(80.0));
  CHECK(k.bwd_smem_bytes(k.tile(true, 256, false, hopper)) == Approx(188.0));
}

TEST_CASE("a backward tile lasts at least as long as its shared-memory traffic, at the forward's rate unless set", "[kernel]") {
  auto s = toy_spec();
  auto& t = s.bwd_tiles[0];  // 8 x 16, 8 warps, head dim 128
  t.atom_m_sdp = 2;
  t.atom_n_dkv = 4;
  t.atom_m_dq = 2;
  s.bwd_smem_element_bytes = 2;
  CHECK(s.bwd_smem_bytes(t) == Approx(enumerated_bwd_smem_bytes(t, 2)));
  auto r = toy_rates();
  r.tile_overhead_s = r.cta_overhead_s = r.memory_latency_s = 0;
  const KernelCall c{512, 2048, false, 0, 8, 8, 1, 128};
  const double none = flash_bwd_s(s, r, c), fwd = flash_fwd_s(s, r, c);
  r.bwd_smem_bytes_per_s = 1e18;  // far above the compute rate: no change
  CHECK(flash_bwd_s(s, r, c) == none);
  r.bwd_smem_bytes_per_s = 1e9;
  const double bound = flash_bwd_s(s, r, c);
  CHECK(bound > none);
  CHECK(flash_fwd_s(s, r, c) == fwd);  // the forward reads its own rate
  auto half = r;
  half.bwd_smem_bytes_per_s = 5e8;
  // Bound on every tile: the tiles' part doubles; the pre- and post-processing kernels do not.
  const double fixed = flash_bwd_s(s, [&] {
    auto z = r;
    z.bwd_flops_per_s = z.exp_per_s = z.alu_per_s = 1e30;
    z.bwd_smem_bytes_per_s = 1e30;
    return z;
  }(), c);
  CHECK(flash_bwd_s(s, half, c) - fixed == Approx(2 * (bound - fixed)).epsilon(1e-9));
  // Through a profile: 0 takes the forward's efficiency, a value its own.
  const Catalog cat;
  const auto hw = cat.hardware("h100-sxm");
  const double peak = hw.shared_memory_bytes_per_clock_per_sm * hw.sm_clock_hz;
  REQUIRE(peak > 0);
  Profile p;
  p.shared_memory_efficiency = 0.8;
  CHECK(KernelRates::of(hw, p).bwd_smem_bytes_per_s == Approx(0.8 * peak));
  p.bwd_shared_memory_efficiency = 0.6;
  CHECK(KernelRates::of(hw, p).bwd_smem_bytes_per_s == Approx(0.6 * peak));
  CHECK(KernelRates::of(hw, p).smem_bytes_per_s == Approx(0.8 * peak));
}

TEST_CASE("a pass reads only its pass_rates: the other pass's fields do not move its time", "[kernel]") {
  // What calibration/kernel_time_memo.hpp relies on: a forward (backward) timed under rates whose
  // cleared fields hold anything else gives the same bits. Every catalog kernel, split and unsplit
  // forwards, causal and GQA calls, one and several waves.
  const Catalog catalog;
  const auto dir = catalog.root() + "/configs/kernels";
  std::mt19937_64 rng(50);
  std::uniform_real_distribution<double> u(0.1, 3.0);
  for (const char* name : {"flash-attn-2", "flash-attn-3", "cudnn-fused"}) {
    const auto spec = KernelSpec::load_named(dir, name, {}, "kernel");
    for (const char* gpu : {"a100-80gb", "h100-sxm"}) {
      const auto hw = catalog.hardware(gpu);
      const auto r = KernelRates::of(hw, catalog.spec_profile(hw, "ring-flash-attn"));
      for (int i = 0; i < 40; ++i) {
        KernelCall c;
        c.q_len = 128 << (i % 7);
        c.k_len = (i % 3 == 0) ? 64 * c.q_len : c.q_len;
        c.causal = i % 2 == 1;
        c.diagonal = c.k_len - c.q_len;
        c.kv_heads = 1 + i % 4;
        c.heads = c.kv_heads * (1 + i % 3);
        c.batch = 1 + i % 5;
        c.head_dim = i % 4 == 0 ? 64 : 128;
        INFO(name << " on " << gpu << ": " << c.q_len << "x" << c.k_len << " causal " << c.causal << " heads " << c.heads
                  << "/" << c.kv_heads << " batch " << c.batch << " d " << c.head_dim);
        // Every field pass_rates clears for one pass, changed.
        KernelRates other = r;
        other.bwd_flops_per_s *= u(rng);
        other.bwd_smem_bytes_per_s *= u(rng);
        other.hbm_bytes_per_s *= u(rng);
        CHECK(pass_rates(other, false).bwd_flops_per_s == 0);
        CHECK(flash_fwd_s(spec, other, c) == flash_fwd_s(spec, r, c));
        other = r;
        other.fwd_flops_per_s *= u(rng);
        other.smem_bytes_per_s *= u(rng);
        CHECK(pass_rates(other, true).fwd_flops_per_s == 0);
        CHECK(flash_bwd_s(spec, other, c) == flash_bwd_s(spec, r, c));
      }
    }
  }
}
