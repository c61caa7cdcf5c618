// Kernel curves: the fit recovers planted flash-family parameters from rows the kernel model
// itself produced, a held-out shape group is predicted by a fit that never saw it, chart TFLOP/s
// convert by the benchmark's rule, and FlashAttention-2's split-KV forward follows its heuristic.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "calibration/kernel_curves.hpp"
#include "models/catalog/catalog.hpp"
#include "models/families/kernel_time.hpp"
#include "models/io/error.hpp"

using namespace ringsim;
using calibration::KernelPass;
using calibration::KernelRow;

namespace {

struct Setup {
  models::Catalog catalog;
  models::Hardware hw = catalog.hardware("h100-sxm");
  models::Implementation impl = catalog.implementation("ring-flash-attn");
  models::Profile base = catalog.profile("", hw, "ring-flash-attn");
};

Setup& setup() {
  static Setup s;
  return s;
}

// Forward and backward rows of several shapes, timed by `truth`: a group per sequence length, or
// per length and head dim.
std::vector<KernelRow> planted(const models::Profile& truth,
                               const std::vector<std::int64_t>& lengths = {1024, 2048, 4096, 8192, 16384},
                               const std::vector<std::int64_t>& dims = {64, 128}, bool group_by_dim = false) {
  auto& s = setup();
  std::vector<KernelRow> rows;
  for (const std::int64_t n : lengths)
    for (const std::int64_t d : dims)
      for (const bool causal : {false, true})
        for (const KernelPass pass : {KernelPass::Fwd, KernelPass::Bwd}) {
          KernelRow r;
          r.gpu = "H100";
          r.pass = pass;
          r.batch = 16384 / n;
          r.heads = r.kv_heads = 2048 / d;
          r.head_dim = d;
          r.q_len = r.k_len = n;
          r.causal = causal;
          r.group = group_by_dim ? std::to_string(n) + "/" + std::to_string(d) : std::to_string(n);
          r.seconds = calibration::predict_kernel_row(r, *s.impl.kernel_model, s.hw, truth);
          rows.push_back(r);
        }
  return rows;
}

// The planted matrix-unit rates and per-CTA cost of the shared-memory cases.
models::Profile bound_truth() {
  models::Profile truth = setup().base;
  truth.attention_efficiency = 0.45;
  truth.attention_bwd_efficiency = 0.4;
  truth.cta_overhead_s = 2e-6;
  return truth;
}

}  // namespace

TEST_CASE("kernel curves recover planted flash parameters and score only held-out groups", "[calibration][kernels]") {
  auto& s = setup();
  models::Profile truth = s.base;
  truth.attention_efficiency = 0.61;
  truth.attention_bwd_efficiency = 0.43;
  truth.cta_overhead_s = 3e-6;
  truth.softmax_overlap = 0.35;
  // The backward at the forward's shared-memory rate, where it stays under the matrix unit's: the
  // base's own backward rate would bind every backward row and leave attention_bwd_efficiency
  // untold (the next cases plant the bounds).
  truth.bwd_shared_memory_efficiency = 0;
  const auto rows = planted(truth);
  models::Profile start = s.base;
  start.bwd_shared_memory_efficiency = 0;
  start.attention_efficiency = 0.3;
  start.attention_bwd_efficiency = 0.7;
  start.cta_overhead_s = 0;
  start.softmax_overlap = 0.8;
  const auto fit = calibration::fit_kernel_curves(rows, *s.impl.kernel_model, s.hw, start);
  REQUIRE(fit.parameters.size() == 4);  // two head dims: the softmax overlap is free too
  CHECK(fit.profile.attention_efficiency == Approx(0.61).epsilon(1e-3));
  CHECK(fit.profile.attention_bwd_efficiency == Approx(0.43).epsilon(1e-3));
  CHECK(fit.profile.cta_overhead_s == Approx(3e-6).epsilon(1e-2));
  CHECK(fit.profile.softmax_overlap == Approx(0.35).epsilon(1e-2));
  for (const auto& sc : fit.scores) CHECK(sc.held_out_mape < 1e-3);
  CHECK(fit.groups == 5);

  // One group measured 1.5x slower: a fold that never saw it predicts the planted time, so its
  // held-out error is about a third; a fit that scored its own rows would hide most of it.
  auto skewed = rows;
  for (auto& r : skewed)
    if (r.group == "4096") r.seconds *= 1.5;
  const auto f2 = calibration::fit_kernel_curves(skewed, *s.impl.kernel_model, s.hw, start);
  double held = 0, in = 0;
  int n = 0;
  for (std::size_t i = 0; i < skewed.size(); ++i) {
    if (skewed[i].group != "4096") continue;
    held += std::abs(f2.held_out_s[i] / skewed[i].seconds - 1);
    in += std::abs(f2.fitted_s[i] / skewed[i].seconds - 1);
    ++n;
  }
  CHECK(held / n == Approx(1.0 / 3).margin(0.02));
  CHECK(in / n < held / n);
}

TEST_CASE("kernel curves recover a planted shared-memory bound from split and unsplit forwards", "[calibration][kernels]") {
  auto& s = setup();
  const auto& kernel = *s.impl.kernel_model;
  models::Profile truth = bound_truth();
  truth.shared_memory_efficiency = 0.85;
  // Head dim 128: 32 heads run the 128-query tile (24 bytes per element: under the matrix unit at
  // these rates), one head over 1024 queries splits its keys into 64-query tiles (42 bytes: bound).
  std::vector<KernelRow> rows;
  auto add = [&](std::int64_t heads, std::int64_t q, std::int64_t k) {
    for (const bool causal : {false, true})
      for (const KernelPass pass : {KernelPass::Fwd, KernelPass::Bwd}) {
        KernelRow r;
        r.gpu = "H100";
        r.pass = pass;
        r.heads = r.kv_heads = heads;
        r.head_dim = 128;
        r.q_len = q;
        r.k_len = k;
        r.causal = causal;
        r.group = std::to_string(heads) + "x" + std::to_string(q) + "x" + std::to_string(k);
        r.seconds = calibration::predict_kernel_row(r, kernel, s.hw, truth);
        rows.push_back(r);
      }
  };
  for (const std::int64_t n : {1024, 2048, 4096}) add(32, n, n);
  for (const std::int64_t k : {8192, 16384, 32768}) add(1, 1024, k);
  const auto rates = models::KernelRates::of(s.hw, truth);
  REQUIRE(models::flash_fwd_tile(kernel, rates, models::KernelCall{1024, 8192, false, 0, 1, 1, 1, 128}).block_m == 64);
  models::Profile start = s.base;
  start.attention_efficiency = 0.3;
  start.attention_bwd_efficiency = 0.6;
  start.cta_overhead_s = 0;
  start.shared_memory_efficiency = 0;  // no bound in the base: the fit starts at the full rate
  const auto fit = calibration::fit_kernel_curves(rows, kernel, s.hw, start,
                                                  {"attention_efficiency", "attention_bwd_efficiency", "cta_overhead_s",
                                                   "shared_memory_efficiency"});
  CHECK(fit.profile.shared_memory_efficiency == Approx(0.85).epsilon(1e-3));
  CHECK(fit.profile.attention_efficiency == Approx(0.45).epsilon(1e-3));
  for (const auto& sc : fit.scores) CHECK(sc.held_out_mape < 1e-3);
  // The default free list takes the bound for these rows (tiles of 24 and 42 bytes per element at
  // one head dim), not for rows of one tile shape per head dim (planted: 11 and 24 bytes per 4d FLOPs).
  const auto names = [](const calibration::KernelCurveFit& f) {
    std::vector<std::string> n;
    for (const auto& p : f.parameters) n.push_back(p.name);
    return n;
  };
  const auto by_default = names(calibration::fit_kernel_curves(rows, kernel, s.hw, start));
  CHECK(std::find(by_default.begin(), by_default.end(), "shared_memory_efficiency") != by_default.end());
  // What a fit frees by default is what default_kernel_free_parameters says, in its order (the
  // other cases ask it alone rather than run fits of minutes under the sanitizers).
  CHECK(by_default == calibration::default_kernel_free_parameters(rows, kernel, s.hw, start));
  const auto one_shape = names(calibration::fit_kernel_curves(planted(s.base), kernel, s.hw, s.base));
  CHECK(std::find(one_shape.begin(), one_shape.end(), "shared_memory_efficiency") == one_shape.end());
}

TEST_CASE("kernel curves recover a planted backward shared-memory bound from head dims 32 to 256", "[calibration][kernels]") {
  auto& s = setup();
  const auto& kernel = *s.impl.kernel_model;
  models::Profile truth = bound_truth();
  // The backward's bytes per FLOP: head dim 32's tile 27 / 320, 64's 42 / 640, 128's 80 / 1280,
  // 256's 188 / 2560. A shared-memory rate of 1/16 of the matrix unit's FLOP rate binds some head
  // dims and not others (the softmax's share of a tile moves where).
  const double flops = s.hw.peak_flops_per_s(truth.attention_precision) / static_cast<double>(s.hw.sm_count) *
                       truth.attention_bwd_efficiency;
  truth.bwd_shared_memory_efficiency = flops / 16 / (s.hw.shared_memory_bytes_per_clock_per_sm * s.hw.sm_clock_hz);
  REQUIRE(truth.bwd_shared_memory_efficiency > 0.05);
  REQUIRE(truth.bwd_shared_memory_efficiency < 1);
  const auto rows = planted(truth, {2048, 4096, 8192}, {32, 64, 128, 256}, true);
  // The bound is planted where it matters: some backward rows slower for it, others not.
  auto unbound = truth;
  unbound.bwd_shared_memory_efficiency = 1;
  int slower = 0, same = 0;
  for (const auto& r : rows) {
    if (r.pass != KernelPass::Bwd) continue;
    const double t = calibration::predict_kernel_row(r, kernel, s.hw, unbound);
    (t < 0.999 * r.seconds ? slower : same) += 1;
  }
  REQUIRE(slower > 0);
  REQUIRE(same > 0);
  models::Profile start = s.base;
  start.attention_efficiency = 0.3;
  start.attention_bwd_efficiency = 0.6;
  start.cta_overhead_s = 0;
  start.bwd_shared_memory_efficiency = 0;
  const std::vector<std::string> free{"attention_efficiency", "attention_bwd_efficiency", "cta_overhead_s",
                                      "bwd_shared_memory_efficiency"};
  const auto fit = calibration::fit_kernel_curves(rows, kernel, s.hw, start, free);
  CHECK(fit.profile.bwd_shared_memory_efficiency == Approx(truth.bwd_shared_memory_efficiency).epsilon(1e-3));
  CHECK(fit.profile.attention_bwd_efficiency == Approx(0.4).epsilon(1e-3));
  for (const auto& sc : fit.scores) CHECK(sc.held_out_mape < 1e-3);
  // The default free list takes it for these rows (1.35 x apart), not for head dims 64 and 128
  // alone (planted: 42 / 640 against 80 / 1280, 1.05 x) nor without backward rows timed apart.
  const auto has = [&](const std::vector<KernelRow>& rs, const models::KernelSpec& k) {
    const auto names = calibration::default_kernel_free_parameters(rs, k, s.hw, start);
    return std::find(names.begin(), names.end(), "bwd_shared_memory_efficiency") != names.end();
  };
  CHECK(has(rows, kernel));
  CHECK_FALSE(has(planted(s.base), kernel));
  std::vector<KernelRow> together;
  for (std::size_t i = 0; i + 1 < rows.size(); i += 2) {
    auto r = rows[i];
    r.pass = KernelPass::FwdBwd;
    r.seconds = rows[i].seconds + rows[i + 1].seconds;
    together.push_back(r);
  }
  CHECK_FALSE(has(together, kernel));
  // A tile without a warp layout has no bound and tells no rate: the spread is that of the tiles
  // that have one, whichever order the rows come in (head dim 64's tile stripped of its layout,
  // rows from 128 down to 32: 80 / 1280 against 27 / 320, 1.35 x).
  auto partial = kernel;
  for (auto& t : partial.bwd_tiles)
    if (t.max_head_dim == 64) t.atom_m_sdp = t.atom_n_dkv = t.atom_m_dq = 0;
  const auto descending = planted(truth, {2048, 4096, 8192}, {128, 64, 32}, true);
  CHECK(has(descending, partial));
}

TEST_CASE("kernel curves refuse rows that cannot be fitted or held out", "[calibration][kernels][errors]") {
  auto& s = setup();
  auto rows = planted(s.base);
  std::vector<KernelRow> one_group;
  for (const auto& r : rows)
    if (r.group == "2048") one_group.push_back(r);
  CHECK_THROWS_AS(calibration::fit_kernel_curves(one_group, *s.impl.kernel_model, s.hw, s.base), models::InputError);
  rows.front().seconds = 0;
  CHECK_THROWS_AS(calibration::fit_kernel_curves(rows, *s.impl.kernel_model, s.hw, s.base), models::InputError);
  CHECK_THROWS_AS(calibration::fit_kernel_curves(planted(s.base), *s.impl.kernel_model, s.hw, s.base, {"no_such"}),
                  models::InputError);
}

TEST_CASE("kernel rows beyond one GPU's call are refused with their line and column", "[calibration][kernels][errors]") {
  auto& s = setup();
  const calibration::KernelRowColumns cols{"batch", "heads_q", "heads_kv", "head_dim", "sq", "skv", "fwd_us"};
  // The field of the InputError check_kernel_row raises for `r` ("" when the row passes).
  const auto field = [&](const KernelRow& r) -> std::string {
    try {
      calibration::check_kernel_row(r, cols, "k.csv");
    } catch (const models::InputError& e) {
      CHECK(e.file() == "k.csv");
      CHECK(e.line() == 7);
      return e.field();
    }
    return "";
  };
  KernelRow good = planted(s.base).front();
  good.line = 7;
  good.heads = 32;
  good.kv_heads = 8;
  CHECK(field(good).empty());
  auto bad = [&](auto change) {
    KernelRow r = good;
    change(r);
    return field(r);
  };
  // Heads that no GQA grouping gives (32 query heads over 3 K/V heads) were fitted as given.
  CHECK(bad([](KernelRow& r) { r.kv_heads = 3; }) == "heads_kv");
  CHECK(bad([](KernelRow& r) { r.kv_heads = 64; }) == "heads_kv");
  CHECK(bad([](KernelRow& r) { r.heads = 65537; }) == "heads_q");
  // A batch of 2^62 was accepted; an INT64_MAX sequence failed with vector::reserve (exit 1).
  CHECK(bad([](KernelRow& r) { r.batch = std::int64_t{1} << 62; }) == "batch");
  CHECK(bad([](KernelRow& r) { r.q_len = std::numeric_limits<std::int64_t>::max(); }) == "sq");
  CHECK(bad([](KernelRow& r) { r.k_len = (std::int64_t{1} << 26) + 1; }) == "skv");
  CHECK(bad([](KernelRow& r) { r.batch = 1 << 20; r.q_len = r.k_len = 1 << 20; }) == "batch");  // 2^51 elements of Q
  // A denormal time crashed the fit (its ratio is inf); no call lasts under a nanosecond.
  CHECK(bad([](KernelRow& r) { r.seconds = 1e-316; }) == "fwd_us");
  CHECK(bad([](KernelRow& r) { r.seconds = 0; }) == "fwd_us");
  CHECK(bad([](KernelRow& r) { r.seconds = std::numeric_limits<double>::infinity(); }) == "fwd_us");
  CHECK(bad([](KernelRow& r) { r.seconds = 2e6; }) == "fwd_us");
  // The fit checks its rows the same way, and a head dim the kernel has no tile for names the row.
  auto rows = planted(s.base);
  rows[3].kv_heads = 3;
  rows[3].line = 12;
  try {
    (void)calibration::fit_kernel_curves(rows, *s.impl.kernel_model, s.hw, s.base);
    FAIL("accepted 3 K/V heads");
  } catch (const models::InputError& e) {
    CHECK(e.line() == 12);
  }
  rows = planted(s.base);
  rows[5].head_dim = 1000;
  rows[5].line = 9;
  try {
    (void)calibration::fit_kernel_curves(rows, *s.impl.kernel_model, s.hw, s.base);
    FAIL("accepted head dim 1000");
  } catch (const models::InputError& e) {
    CHECK(e.line() == 9);
    CHECK(e.field() == "head_dim");
  }
}

TEST_CASE("kernel curves report each least-squares start and remember kernel times they asked for before",
          "[calibration][kernels]") {
  auto& s = setup();
  models::Profile truth = bound_truth();
  const auto rows = planted(truth, {1024, 2048, 4096});
  std::vector<std::pair<std::int64_t, std::int64_t>> calls;
  const auto fit = calibration::fit_kernel_curves(rows, *s.impl.kernel_model, s.hw, s.base, {},
                                                  [&](std::int64_t done, std::int64_t total) { calls.emplace_back(done, total); });
  // The full fit's 1 + 6 starts, then 1 + 1 per held-out group: counted one by one to the total.
  const std::int64_t total = 7 + 2 * fit.groups;
  REQUIRE(calls.size() == static_cast<std::size_t>(total));
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].first == static_cast<std::int64_t>(i) + 1);
    CHECK(calls[i].second == total);
  }
  // Forward rows do not read the backward's parameters nor backward rows the forward's, and the
  // Jacobian's centre is the point just accepted: a good share of the rows' timings are
  // remembered rather than computed again (the list schedule is nearly all of a fit's time).
  INFO("computed " << fit.kernel_times_computed << ", remembered " << fit.kernel_times_remembered);
  CHECK(fit.kernel_times_remembered > fit.kernel_times_computed / 4);
  // And what is remembered is what the kernel model gives: the same fit without the memo's help
  // would predict each row as the fitted profile does.
  for (std::size_t i = 0; i < rows.size(); ++i)
    CHECK(fit.fitted_s[i] == Approx(calibration::predict_kernel_row(rows[i], *s.impl.kernel_model, s.hw, fit.profile)).epsilon(1e-12));
}

TEST_CASE("chart TFLOP/s convert to seconds by the benchmark's FLOP rule", "[calibration][kernels]") {
  KernelRow r;
  r.batch = 2;
  r.heads = 16;
  r.head_dim = 128;
  r.q_len = r.k_len = 4096;
  const double fwd_flops = 4.0 * 2 * 4096 * 4096 * 16 * 128;
  CHECK(calibration::seconds_from_tflops(100, KernelPass::Fwd, r) == Approx(fwd_flops / 1e14));
  CHECK(calibration::seconds_from_tflops(100, KernelPass::Bwd, r) == Approx(2.5 * fwd_flops / 1e14));
  r.causal = true;
  CHECK(calibration::seconds_from_tflops(100, KernelPass::FwdBwd, r) == Approx(3.5 * fwd_flops / 2 / 1e14));
}

TEST_CASE("split-KV: the heuristic's choice, and a lone head's forward spread over the SMs", "[calibration][kernels]") {
  auto& s = setup();
  const auto& sk = *s.impl.kernel_model->fwd_split_kv;
  const std::int64_t sms = 132, slots = sk.slots_per_sm * sms;
  // Enough CTAs to fill the GPU: no split.
  CHECK(sk.splits(static_cast<std::int64_t>(0.8 * static_cast<double>(slots)) + 1, 64, sms) == 1);
  for (const std::int64_t work : {1, 3, 16, 50, 100, 200})
    for (const std::int64_t blocks : {1, 7, 32, 128, 1024}) {
      const auto n = sk.splits(work, blocks, sms);
      INFO(work << " CTAs, " << blocks << " key blocks: " << n << " splits");
      REQUIRE(n >= 1);
      CHECK(n <= std::min<std::int64_t>({sk.max_splits, slots, blocks}));
      // The choice is the first eligible count within the fraction of the best wave efficiency.
      const auto per = [&](std::int64_t k) { return (blocks + k - 1) / k; };
      const auto eff = [&](std::int64_t k) {
        const double w = static_cast<double>(work * k) / static_cast<double>(slots);
        return w / std::ceil(w);
      };
      double best = 0;
      const std::int64_t most = std::min<std::int64_t>({sk.max_splits, slots, blocks});
      for (std::int64_t k = 1; k <= most; ++k)
        if (k == 1 || per(k) != per(k - 1)) best = std::max(best, eff(k));
      CHECK(eff(n) >= sk.efficiency_fraction * best);
      for (std::int64_t k = 1; k < n; ++k)
        if (k == 1 || per(k) != per(k - 1)) CHECK(eff(k) < sk.efficiency_fraction * best);
    }
  // One head of 8k queries: 128 CTAs unsplit on 264 slots; split, the keys spread over more CTAs.
  const auto rates = models::KernelRates::of(s.hw, s.base);
  models::KernelCall c;
  c.q_len = c.k_len = 8192;
  c.head_dim = 128;
  auto unsplit = *s.impl.kernel_model;
  unsplit.fwd_split_kv.reset();
  CHECK(models::flash_fwd_s(*s.impl.kernel_model, rates, c) < 0.8 * models::flash_fwd_s(unsplit, rates, c));
  // Many heads fill the GPU: the same time with or without the rule.
  c.heads = c.kv_heads = 32;
  CHECK(models::flash_fwd_s(*s.impl.kernel_model, rates, c) == models::flash_fwd_s(unsplit, rates, c));
}

TEST_CASE("a partial wave: CTAs on SMs they share with fewer others run faster, by processor sharing", "[calibration][kernels]") {
  // Gain 0: every CTA gets its 1/k share, as the list schedule assumes.
  const std::vector<double> pattern = {4.0, 2.0, 6.0, 1.0};  // wall times with k CTAs per SM
  CHECK(models::partial_wave_makespan(pattern, 2, 4, 2, 0) < 0);
  for (const std::int64_t sms : {4, 5, 8}) {
    const double tiny = 1e-9;
    CHECK(models::partial_wave_makespan(pattern, 2, sms, 2, tiny) ==
          Approx(models::list_schedule_makespan(pattern, 2, sms * 2)).epsilon(1e-6));
  }
  // More CTAs than one wave holds: not this schedule.
  CHECK(models::partial_wave_makespan(pattern, 3, 4, 2, 1.0) < 0);
  // Gain k - 1: a lone CTA has the whole SM, k times faster than its share.
  CHECK(models::partial_wave_makespan(pattern, 1, 8, 2, 1.0) == Approx(6.0 / 2));
  // Two CTAs of SM-seconds 1 and 3 (walls 2 and 6 with k = 2) sharing one SM at gain g: together
  // at 1/2 each until the short one ends (t = 2), then the long one alone at (1 + g) / 2.
  for (const double g : {0.25, 0.5, 1.0}) {
    const double expect = 2.0 + (3.0 - 1.0) / ((1.0 + g) / 2.0);
    CHECK(models::partial_wave_makespan({2.0, 6.0}, 1, 1, 2, g) == Approx(expect));
  }
  // A gain above k - 1 is the whole SM.
  CHECK(models::partial_wave_makespan({6.0}, 1, 1, 2, 5.0) == Approx(3.0));
}
