#include "calibration/kernel_curves.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "calibration/kernel_time_memo.hpp"
#include "models/cost/profile_params.hpp"
#include "models/families/kernel_time.hpp"
#include "models/io/error.hpp"
#include "models/io/limits.hpp"

namespace ringsim::calibration {

using models::InputError;

const char* to_string(KernelPass p) noexcept {
  switch (p) {
    case KernelPass::Fwd: return "fwd";
    case KernelPass::Bwd: return "bwd";
    case KernelPass::FwdBwd: return "fwd+bwd";
  }
  return "fwd";
}

void check_kernel_row(const KernelRow& r, const KernelRowColumns& c, const std::string& file) {
  const auto count = [&](std::int64_t v, std::int64_t hi, const std::string& field, const char* what) {
    if (v < 1 || v > hi)
      throw InputError(file, r.line, field,
                       fmt::format("expected {} from 1 to {} in one kernel call, got {}", what, hi, v));
  };
  count(r.q_len, kMaxKernelRowTokens, c.q_len, "queries");
  count(r.k_len, kMaxKernelRowTokens, c.k_len, "keys");
  count(r.batch, models::kMaxBatch, c.batch, "sequences");
  count(r.heads, kMaxKernelRowHeads, c.heads, "query heads");
  count(r.kv_heads, kMaxKernelRowHeads, c.kv_heads, "K/V heads");
  count(r.head_dim, kMaxKernelRowHeads, c.head_dim, "elements per head");
  // Q (and K, V) of the call in one GPU's memory: at most 2^40 elements each, beyond any GPU's
  // memory (2 TiB in bf16), which also keeps every CTA count of the kernel model exact.
  const double q_elements = static_cast<double>(r.batch) * static_cast<double>(r.heads) *
                            static_cast<double>(r.q_len) * static_cast<double>(r.head_dim);
  const double kv_elements = static_cast<double>(r.batch) * static_cast<double>(r.kv_heads) *
                             static_cast<double>(r.k_len) * static_cast<double>(r.head_dim);
  if (q_elements > kMaxKernelRowElements || kv_elements > kMaxKernelRowElements)
    throw InputError(file, r.line, c.batch,
                     fmt::format("{} sequences x {} heads x {} {} x head dim {} = {:.3g} elements of {}, more than the "
                                 "2^40 any GPU's memory holds",
                                 r.batch, q_elements >= kv_elements ? r.heads : r.kv_heads,
                                 q_elements >= kv_elements ? r.q_len : r.k_len,
                                 q_elements >= kv_elements ? "queries" : "keys", r.head_dim,
                                 std::max(q_elements, kv_elements), q_elements >= kv_elements ? "Q" : "K"));
  if (r.heads % r.kv_heads != 0)
    throw InputError(file, r.line, c.kv_heads,
                     fmt::format("the {} query heads are not a multiple of the {} K/V heads (each K/V head serves a "
                                 "whole group of query heads)",
                                 r.heads, r.kv_heads));
  if (!(r.seconds >= kMinKernelRowSeconds && r.seconds <= kMaxKernelRowSeconds))
    throw InputError(file, r.line, c.seconds,
                     fmt::format("expected a kernel time from {:g} s to {:g} s, got {:.4g} s", kMinKernelRowSeconds,
                                 kMaxKernelRowSeconds, r.seconds));
}

double seconds_from_tflops(double tflops, KernelPass pass, const KernelRow& r) {
  const double fwd = 4.0 * static_cast<double>(r.batch) * static_cast<double>(r.q_len) * static_cast<double>(r.k_len) *
                     static_cast<double>(r.heads) * static_cast<double>(r.head_dim) / (r.causal ? 2.0 : 1.0);
  const double factor = pass == KernelPass::Fwd ? 1.0 : pass == KernelPass::Bwd ? 2.5 : 3.5;
  return factor * fwd / (tflops * 1e12);
}

double predict_kernel_row(const KernelRow& row, const models::KernelSpec& spec, const models::Hardware& hw,
                          const models::Profile& p) {
  return predict_kernel_row(row, spec, models::KernelRates::of(hw, p));
}

namespace {

models::KernelCall call_of(const KernelRow& row) {
  models::KernelCall c;
  c.q_len = row.q_len;
  c.k_len = row.k_len;
  c.causal = row.causal;
  c.diagonal = row.k_len - row.q_len;  // bottom-right aligned
  c.heads = row.heads;
  c.kv_heads = row.kv_heads;
  c.batch = row.batch;
  c.head_dim = row.head_dim;
  return c;
}

}  // namespace

double predict_kernel_row(const KernelRow& row, const models::KernelSpec& spec, const models::KernelRates& rates) {
  const models::KernelCall c = call_of(row);
  switch (row.pass) {
    case KernelPass::Fwd: return models::flash_fwd_s(spec, rates, c);
    case KernelPass::Bwd: return models::flash_bwd_s(spec, rates, c);
    case KernelPass::FwdBwd: return models::flash_fwd_s(spec, rates, c) + models::flash_bwd_s(spec, rates, c);
  }
  return 0;
}

namespace {

// A call this short shows its launches' fixed cost (a few microseconds each).
constexpr double kShortCallS = 100e-6;

struct Free {
  const models::ProfileParameter* param;
  double scale;  // fitted in units of `scale` (seconds as microseconds) so the steps are alike
};

models::Profile with(const models::Profile& base, const std::vector<Free>& free, const Eigen::VectorXd& x) {
  models::Profile p = base;
  for (std::size_t i = 0; i < free.size(); ++i) p.*(free[i].param->field) = x[static_cast<Eigen::Index>(i)] * free[i].scale;
  return p;
}

struct Problem {
  const std::vector<KernelRow>& rows;
  const models::KernelSpec& spec;
  const models::Hardware& hw;
  const models::Profile& base;
  const std::vector<Free>& free;
  KernelTimeMemo& memo;  // the rows' kernel times, computed once per rates they read
  // Relative prediction of every row in `use` under x: predicted / measured (observed: 1).
  [[nodiscard]] Eigen::VectorXd ratios(const Eigen::VectorXd& x, const std::vector<std::size_t>& use) const {
    const auto rates = models::KernelRates::of(hw, with(base, free, x));
    Eigen::VectorXd out(static_cast<Eigen::Index>(use.size()));
    for (std::size_t i = 0; i < use.size(); ++i)
      out[static_cast<Eigen::Index>(i)] = memo.seconds(use[i], rates) / rows[use[i]].seconds;
    return out;
  }
  [[nodiscard]] FitResult fit(const std::vector<std::size_t>& use, const Eigen::VectorXd& start, int extra_starts,
                              const std::function<void()>& after_start) const {
    std::vector<Parameter> params;
    for (std::size_t i = 0; i < free.size(); ++i)
      params.push_back({std::string(free[i].param->name), free[i].param->lower / free[i].scale,
                        free[i].param->upper / free[i].scale, start[static_cast<Eigen::Index>(i)]});
    FitOptions o;
    o.extra_starts = extra_starts;
    o.after_start = after_start;
    return fit_least_squares([&](const Eigen::VectorXd& x) { return ratios(x, use); },
                             Eigen::VectorXd::Ones(static_cast<Eigen::Index>(use.size())), params, o);
  }
};

}  // namespace

namespace {

// Which passes the rows time, after checking each (check_kernel_row's bounds, a tile for its head
// dim); `split`: forward and backward timed apart.
struct RowPasses {
  bool fwd = false, split = false;
};

RowPasses check_rows(const std::vector<KernelRow>& rows, const models::KernelSpec& spec, const models::Hardware& hw,
                     const models::Profile& base) {
  bool fwd = false, bwd = false;
  const auto base_rates = models::KernelRates::of(hw, base);
  for (const auto& r : rows) {
    check_kernel_row(r, {}, {});
    // A head dim the kernel has no tile for is the row's, not the kernel file's, mistake.
    try {
      if (r.pass != KernelPass::Bwd) (void)models::flash_fwd_tile(spec, base_rates, call_of(r));
      if (r.pass != KernelPass::Fwd) (void)spec.tile(true, r.head_dim, r.causal, base_rates.device);
    } catch (const InputError& e) {
      throw InputError({}, r.line, "head_dim", e.message());
    }
    fwd |= r.pass != KernelPass::Bwd;
    bwd |= r.pass != KernelPass::Fwd;
  }
  // Forward + backward rows alone cannot tell the two efficiencies apart: one for both (the
  // backward's left at 0, which the kernel model reads as the forward's).
  const bool split = fwd && bwd &&
                     std::any_of(rows.begin(), rows.end(), [](const KernelRow& r) { return r.pass != KernelPass::FwdBwd; });
  return {fwd, split};
}

// default_kernel_free_parameters for rows check_rows has checked (the fit checks them once).
std::vector<std::string> default_free(const std::vector<KernelRow>& rows, const models::KernelSpec& spec,
                                      const models::Hardware& hw, const models::Profile& base, const RowPasses& passes) {
  const bool split = passes.split;
  std::vector<std::string> names;
  names.emplace_back(passes.fwd || !split ? "attention_efficiency" : "attention_bwd_efficiency");
  if (split) names.emplace_back("attention_bwd_efficiency");
  names.emplace_back("cta_overhead_s");
  // The softmax's share of a tile does not grow with the head dim, the matrix products' does:
  // rows of two or more head dims tell how much of it the matrix unit hides.
  std::set<std::int64_t> dims;
  for (const auto& r : rows) dims.insert(r.head_dim);
  if (dims.size() >= 2) names.emplace_back("softmax_overlap");
  // Calls of at most one wave show how fast CTAs run on SMs they share with fewer others.
  const auto rates = models::KernelRates::of(hw, base);
  const auto one_wave = [&](const KernelRow& r) {
    const bool backward = r.pass == KernelPass::Bwd;
    const auto& t = spec.tile(backward, r.head_dim, r.causal, rates.device);
    const std::int64_t blocks = backward ? (r.k_len + t.block_n - 1) / t.block_n : (r.q_len + t.block_m - 1) / t.block_m;
    return blocks * r.batch * r.heads <= hw.sm_count * models::ctas_per_sm(spec, t, rates);
  };
  if (std::count_if(rows.begin(), rows.end(), one_wave) >= 3) names.emplace_back("solo_cta_gain");
  // Forward tiles whose shared-memory bytes per FLOP differ by half again or more (the split
  // kernel's 64-query tile against the 128-query one; head dim 256's 8 warps against 64's 4) tell
  // the shared-memory bound from the matrix unit's.
  if (hw.shared_memory_bytes_per_clock_per_sm > 0) {
    // Whether the shared-memory bytes per matrix FLOP of the tiles the rows of one pass run
    // reach `factor` times their smallest (false without such rows).
    const auto spread_reaches = [&](bool backward, double factor) {
      double lo = 0, hi = 0;
      for (const auto& r : rows) {
        if (backward ? r.pass != KernelPass::Bwd : r.pass == KernelPass::Bwd) continue;
        const auto& t = backward ? spec.tile(true, r.head_dim, r.causal, rates.device) : models::flash_fwd_tile(spec, rates, call_of(r));
        const double flops = 4.0 * static_cast<double>(t.max_head_dim) * (backward ? spec.bwd_flops_factor : 1.0);
        const double per_flop = (backward ? spec.bwd_smem_bytes(t) : spec.fwd_smem_bytes(t)) / flops;
        if (!(per_flop > 0)) continue;  // a tile without a bound (no warp layout) tells no rate
        lo = lo > 0 ? std::min(lo, per_flop) : per_flop;
        hi = std::max(hi, per_flop);
      }
      return lo > 0 && hi >= factor * lo;
    };
    if (spread_reaches(false, 1.5)) names.emplace_back("shared_memory_efficiency");
    // The backward's tiles change less with the head dim (head dim 32's 128 x 128 tile with V in
    // registers against 128's 64 x 128: 1.35 x; 64 to 256: 1.17 x). Where backward rows are
    // timed apart and span a quarter or more, the bound binds on some head dims and not others;
    // with one head dim it would only trade places with attention_bwd_efficiency.
    if (split && spread_reaches(true, 1.25)) names.emplace_back("bwd_shared_memory_efficiency");
  }
  // Calls of tens of microseconds show the launches' fixed cost; long calls hide it.
  if (std::any_of(rows.begin(), rows.end(), [](const KernelRow& r) { return r.seconds < kShortCallS; }))
    names.emplace_back("kernel_launch_s");
  return names;
}

}  // namespace

std::vector<std::string> default_kernel_free_parameters(const std::vector<KernelRow>& rows, const models::KernelSpec& spec,
                                                        const models::Hardware& hw, const models::Profile& base) {
  return default_free(rows, spec, hw, base, check_rows(rows, spec, hw, base));
}

std::vector<KernelPassScore> score_passes(const std::vector<KernelRow>& rows, const std::vector<double>& fitted_s,
                                          const std::vector<double>& held_out_s) {
  std::vector<KernelPassScore> out;
  for (const KernelPass pass : {KernelPass::Fwd, KernelPass::Bwd, KernelPass::FwdBwd}) {
    KernelPassScore s;
    s.pass = pass;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].pass != pass) continue;
      ++s.rows;
      s.in_sample_mape += std::abs(fitted_s[i] / rows[i].seconds - 1);
      s.held_out_mape += std::abs(held_out_s[i] / rows[i].seconds - 1);
      s.held_out_signed += held_out_s[i] / rows[i].seconds - 1;
    }
    if (s.rows == 0) continue;
    const auto n = static_cast<double>(s.rows);
    s.in_sample_mape /= n;
    s.held_out_mape /= n;
    s.held_out_signed /= n;
    out.push_back(s);
  }
  return out;
}

KernelCurveFit fit_kernel_curves(const std::vector<KernelRow>& rows, const models::KernelSpec& spec,
                                 const models::Hardware& hw, const models::Profile& base, std::vector<std::string> free_names,
                                 const std::function<void(std::int64_t, std::int64_t)>& progress) {
  const RowPasses passes = check_rows(rows, spec, hw, base);
  const bool split = passes.split;
  if (free_names.empty()) free_names = default_free(rows, spec, hw, base, passes);
  std::vector<Free> free;
  for (const auto& n : free_names) {
    const auto* p = models::find_profile_parameter(n);
    if (!p || !p->fittable) throw InputError({}, 0, "free", "'" + n + "' is not a fittable profile parameter");
    // A parameter the kernel family does not read has no effect on the rows: refused, not fitted.
    if (!base.reads(n))
      throw InputError({}, 0, "free", "kernel family " + base.kernel_family + " does not read '" + n + "'");
    free.push_back({p, n.ends_with("_s") ? 1e-6 : 1.0});
  }
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < rows.size(); ++i) groups[rows[i].group].push_back(i);
  if (rows.size() <= free.size()) throw InputError({}, 0, "rows", "fewer kernel rows than parameters to fit");
  if (groups.size() < 2) throw InputError({}, 0, "rows", "one shape group: nothing to hold out");
  models::Profile start_profile = base;
  const bool bwd_free = std::find(free_names.begin(), free_names.end(), "attention_bwd_efficiency") != free_names.end();
  if (!bwd_free && !split) start_profile.attention_bwd_efficiency = 0;  // tied to the forward's
  else if (!(start_profile.attention_bwd_efficiency > 0)) start_profile.attention_bwd_efficiency = start_profile.attention_efficiency;
  Eigen::VectorXd start(static_cast<Eigen::Index>(free.size()));
  for (std::size_t i = 0; i < free.size(); ++i) {
    double v = start_profile.*(free[i].param->field) / free[i].scale;
    // A limit the base does not set (0: none, below its floor) starts where it limits least.
    if (free[i].param->zero_is_none && v == 0 && free[i].param->lower > 0) v = free[i].param->upper / free[i].scale;
    start[static_cast<Eigen::Index>(i)] = std::clamp(v, free[i].param->lower / free[i].scale, free[i].param->upper / free[i].scale);
  }
  KernelTimeMemo memo(rows, spec);
  const Problem problem{rows, spec, hw, start_profile, free, memo};
  std::vector<std::size_t> all(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) all[i] = i;
  // Progress in least-squares starts: the full fit's 1 + 6, then 1 + 1 per held-out fold.
  constexpr int kFullExtraStarts = 6, kFoldExtraStarts = 1;
  const std::int64_t starts_total =
      (1 + kFullExtraStarts) + static_cast<std::int64_t>(groups.size()) * (1 + kFoldExtraStarts);
  std::int64_t starts_done = 0;
  const std::function<void()> after_start = [&] {
    ++starts_done;
    if (progress) progress(starts_done, starts_total);
  };
  FitResult full;
  try {
    full = problem.fit(all, start, kFullExtraStarts, after_start);
  } catch (const std::invalid_argument& e) {
    throw InputError({}, 0, "rows", e.what());
  }
  KernelCurveFit out;
  out.profile = with(start_profile, free, full.params);
  out.groups = static_cast<std::int64_t>(groups.size());
  for (std::size_t i = 0; i < free.size(); ++i) {
    const auto k = static_cast<Eigen::Index>(i);
    out.parameters.push_back({std::string(free[i].param->name), full.params[k] * free[i].scale,
                              full.std_errors[k] * free[i].scale, full.at_bound[i]});
  }
  out.fitted_s.resize(rows.size());
  out.held_out_s.resize(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) out.fitted_s[i] = full.predicted[static_cast<Eigen::Index>(i)] * rows[i].seconds;
  // Leave one shape group out: refit without it (from the full fit), predict it.
  for (const auto& [name, held] : groups) {
    std::vector<std::size_t> train;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].group != name) train.push_back(i);
    if (train.size() <= free.size()) throw InputError({}, 0, "rows", "too few rows outside shape group " + name);
    FitResult fold;
    try {
      fold = problem.fit(train, full.params, kFoldExtraStarts, after_start);
    } catch (const std::invalid_argument& e) {
      throw InputError({}, 0, "rows", "without shape group " + name + ": " + e.what());
    }
    const auto r = problem.ratios(fold.params, held);
    for (std::size_t j = 0; j < held.size(); ++j) out.held_out_s[held[j]] = r[static_cast<Eigen::Index>(j)] * rows[held[j]].seconds;
  }
  out.scores = score_passes(rows, out.fitted_s, out.held_out_s);
  out.kernel_times_computed = memo.computed();
  out.kernel_times_remembered = memo.served();
  return out;
}

}  // namespace ringsim::calibration
