#include "calibration/trace/from_trace.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "calibration/trace/ring_calls.hpp"
#include "calibration/trace/step_summary.hpp"
#include "calibration/trace/trace_ranks.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::calibration {

using models::InputError;

namespace {

// A call's kernels: consecutive ops of the class launched by one CPU operator.
struct Call {
  double seconds = 0;
  std::int64_t external_id = -1;
};

std::map<std::int64_t, std::vector<Call>> calls_by_step(const Trace& t, const std::vector<std::int64_t>& steps,
                                                        const KernelClasses& classes, OpClass cls) {
  std::map<std::int64_t, std::vector<std::size_t>> idx;
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    if (steps[i] != kOutsideSteps && classes.classify(t.ops[i]) == cls) idx[steps[i]].push_back(i);
  std::map<std::int64_t, std::vector<Call>> out;
  for (auto& [step, ops] : idx) {
    std::stable_sort(ops.begin(), ops.end(), [&](std::size_t a, std::size_t b) { return t.ops[a].start_us < t.ops[b].start_us; });
    auto& calls = out[step];
    for (const std::size_t i : ops) {
      const GpuOp& op = t.ops[i];
      const double s = (op.end_us - op.start_us) * 1e-6;
      if (!calls.empty() && op.external_id >= 0 && calls.back().external_id == op.external_id) calls.back().seconds += s;
      else calls.push_back({s, op.external_id});
    }
  }
  return out;
}

std::string shape_group(const models::KernelCall& c) {
  return fmt::format("{}x{}{}", c.q_len, c.k_len, c.causal ? " causal" : "");
}

}  // namespace

std::vector<KernelRow> attention_rows(const std::vector<Trace>& traces, const KernelClasses& classes,
                                      const models::ResolvedScenario& s) {
  const auto ring = ring_kernel_calls(s);
  const std::int64_t layers = std::max<std::int64_t>(1, s.model.layers);
  // Every rank first: a trace from a larger ring is that, not a count mismatch; a rank given twice
  // is refused, not fitted twice.
  const auto positions = ring_positions(trace_ranks(traces), s.spec.sp);
  std::vector<KernelRow> rows;
  for (std::size_t f = 0; f < traces.size(); ++f) {
    const Trace& t = traces[f];
    const std::int64_t rank = positions[f];
    const auto& mine = ring[static_cast<std::size_t>(rank)];
    const auto steps = op_steps(t);
    for (const auto& [cls, pass] : {std::pair{OpClass::AttentionFwd, KernelPass::Fwd}, std::pair{OpClass::AttentionBwd, KernelPass::Bwd}}) {
      for (const auto& [step, calls] : calls_by_step(t, steps, classes, cls)) {
        const std::size_t expected = mine.size() * static_cast<std::size_t>(layers);
        if (calls.size() != expected)
          throw InputError(t.file, 0, "traces",
                           fmt::format("rank {} step {} has {} attention {} calls where the scenario makes {} ({} per "
                                       "layer x {} layers): check --seq, --mesh, --layout, --model and --impl",
                                       rank, step, calls.size(), pass == KernelPass::Fwd ? "forward" : "backward", expected,
                                       mine.size(), layers));
        for (std::size_t i = 0; i < calls.size(); ++i) {
          const auto& rc = mine[i % mine.size()].call;
          KernelRow r;
          r.gpu = s.hardware.name;
          r.pass = pass;
          r.batch = rc.batch;
          r.heads = rc.heads;
          r.kv_heads = rc.kv_heads;
          r.head_dim = rc.head_dim;
          r.q_len = rc.q_len;
          r.k_len = rc.k_len;
          r.causal = rc.causal;
          r.seconds = calls[i].seconds;
          r.group = shape_group(rc);
          r.line = step;
          if (!(r.seconds > 0))
            throw InputError(t.file, 0, "traces", fmt::format("rank {} step {}: an attention call of zero duration", rank, step));
          rows.push_back(r);
        }
      }
    }
  }
  if (rows.empty())
    throw InputError(traces.size() == 1 ? traces.front().file : std::string(), 0, "traces",
                     fmt::format("no attention forward or backward kernel in any step of {} (trace summarize lists the "
                                 "kernels no rule classes; docs/traces.md: your own kernel names)", files_text(traces)));
  return rows;
}

std::vector<TraceRank> trace_ranks(const std::vector<Trace>& traces) {
  std::vector<TraceRank> out;
  for (const Trace& t : traces) out.push_back({t.file, t.rank});
  return out;
}

std::string files_text(const std::vector<Trace>& traces) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(traces.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + traces[i].file;
  if (traces.size() > shown) out += fmt::format(" and {} more", traces.size() - shown);
  return out;
}

void check_fit_coverage(const std::vector<Trace>& traces, const std::vector<KernelRow>& shapes,
                        const std::vector<std::string>& free, const models::ResolvedScenario& s) {
  const std::string file = traces.size() == 1 ? traces.front().file : std::string();
  const std::string where = files_text(traces);
  const auto has = [&](KernelPass p) { return std::any_of(shapes.begin(), shapes.end(), [&](const KernelRow& r) { return r.pass == p; }); };
  const auto frees = [&](const char* n) { return std::find(free.begin(), free.end(), n) != free.end(); };
  if (frees("attention_bwd_efficiency") && !has(KernelPass::Bwd))
    throw InputError(file, 0, "free",
                     fmt::format("{} hold no backward attention kernels (a forward-only run: inference, evaluation, or a "
                                 "profile window without the backward), so attention_bwd_efficiency cannot be fitted: "
                                 "--free attention_efficiency fits the forward alone", where));
  if (frees("attention_efficiency") && !has(KernelPass::Fwd))
    throw InputError(file, 0, "free",
                     fmt::format("{} hold no forward attention kernels, so attention_efficiency cannot be fitted: "
                                 "trace a window with whole steps", where));
  std::set<std::string> groups;
  std::string listed;
  for (const auto& r : shapes) {
    if (groups.insert(r.group).second) listed += (listed.empty() ? "" : ", ") + r.group;
  }
  const std::string ring = s.spec.sp == 1 ? "the scenario's ring is one device (no ring steps: one call shape per pass); "
                                          : "";
  if (shapes.size() <= free.size() || groups.size() < 2)
    throw InputError(file, 0, "traces",
                     fmt::format("{} hold {} (pass, shape) rows in {} shape group{} ({}) for {} parameters to fit ({}): a "
                                 "fit needs more rows than parameters and two shape groups or more (one is held out to "
                                 "score it); {}trace a ring of two or more devices, whose steps run calls of other "
                                 "shapes, or fit fewer parameters with --free",
                                 where, shapes.size(), groups.size(), groups.size() == 1 ? "" : "s", listed, free.size(),
                                 models::join_list(free), ring));
}

std::vector<KernelRow> median_by_shape(const std::vector<KernelRow>& rows) {
  std::map<std::tuple<int, std::int64_t, std::int64_t, bool>, std::vector<const KernelRow*>> groups;
  for (const auto& r : rows) groups[{static_cast<int>(r.pass), r.q_len, r.k_len, r.causal}].push_back(&r);
  std::vector<KernelRow> out;
  for (const auto& [key, members] : groups) {
    std::vector<double> t;
    for (const auto* m : members) t.push_back(m->seconds);
    std::sort(t.begin(), t.end());
    KernelRow r = *members.front();
    r.seconds = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
    r.line = static_cast<std::int64_t>(members.size());  // the calls behind the median
    out.push_back(r);
  }
  return out;
}

TraceLinkFit fit_trace_link(const std::vector<Trace>& traces, const KernelClasses& classes) {
  std::map<double, std::vector<double>> by_size;
  for (const Trace& t : traces)
    for (const GpuOp& op : t.ops)
      if (op.message_bytes > 0 && classes.classify(op) == OpClass::P2p) by_size[op.message_bytes].push_back((op.end_us - op.start_us) * 1e-6);
  if (by_size.empty())
    throw InputError({}, 0, "traces",
                     "no point-to-point kernel with a recorded message size (PyTorch records sizes with the NCCL kernels "
                     "or record_param_comms; docs/traces.md)");
  TraceLinkFit fit;
  for (auto& entry : by_size) {
    // Not a structured binding: clang does not let a lambda capture one.
    std::vector<double>& times = entry.second;
    std::sort(times.begin(), times.end());
    const auto at = [&times](double q) { return times[static_cast<std::size_t>(std::floor(q * static_cast<double>(times.size() - 1)))]; };
    fit.sizes.push_back({entry.first, static_cast<std::int64_t>(times.size()), at(0.10), at(0.5)});
  }
  double excess = 0;
  for (const auto& z : fit.sizes) excess += z.median_s - z.p10_s;
  fit.sync_excess_s = excess / static_cast<double>(fit.sizes.size());
  auto& hop = fit.hop;
  hop.rows = static_cast<std::int64_t>(fit.sizes.size());
  hop.pattern = "ring transfers of a traced run (point-to-point kernels, 10th percentile per size)";
  if (fit.sizes.size() == 1) {
    hop.bandwidth_bytes_per_s = fit.sizes[0].bytes / fit.sizes[0].p10_s;
    return fit;
  }
  // Least squares of time = latency + bytes / bandwidth on relative error (each size weighs alike).
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& z : fit.sizes) {
    const double w = 1.0 / (z.p10_s * z.p10_s);
    sw += w, sx += w * z.bytes, sy += w * z.p10_s, sxx += w * z.bytes * z.bytes, sxy += w * z.bytes * z.p10_s;
  }
  const double det = sw * sxx - sx * sx;
  const double slope = (sw * sxy - sx * sy) / det, intercept = (sy - slope * sx) / sw;
  if (!(slope > 0) || !std::isfinite(slope))
    throw InputError({}, 0, "traces", "the point-to-point times do not grow with the message size: no bandwidth to fit");
  hop.bandwidth_bytes_per_s = 1.0 / slope;
  hop.latency_s = std::max(0.0, intercept);
  fit.latency_identified = true;
  // Residual standard errors, and leave one size out where three or more sizes were sent.
  if (fit.sizes.size() >= 3) {
    double rss = 0, held = 0;
    for (std::size_t i = 0; i < fit.sizes.size(); ++i) {
      const auto& z = fit.sizes[i];
      const double r = (hop.latency_s + z.bytes / hop.bandwidth_bytes_per_s - z.p10_s) / z.p10_s;
      rss += r * r;
      double w0 = 0, x0 = 0, y0 = 0, xx0 = 0, xy0 = 0;
      for (std::size_t j = 0; j < fit.sizes.size(); ++j) {
        if (j == i) continue;
        const auto& u = fit.sizes[j];
        const double w = 1.0 / (u.p10_s * u.p10_s);
        w0 += w, x0 += w * u.bytes, y0 += w * u.p10_s, xx0 += w * u.bytes * u.bytes, xy0 += w * u.bytes * u.p10_s;
      }
      const double sl = (w0 * xy0 - x0 * y0) / (w0 * xx0 - x0 * x0), ic = (y0 - sl * x0) / w0;
      held += std::abs(ic + sl * z.bytes - z.p10_s) / z.p10_s;
    }
    const double sigma2 = rss / static_cast<double>(fit.sizes.size() - 2);
    hop.bandwidth_se = std::sqrt(sigma2 * sw / det) / (slope * slope);
    hop.latency_se = std::sqrt(sigma2 * sxx / det);
    hop.held_out_mape = held / static_cast<double>(fit.sizes.size());
  }
  return fit;
}

}  // namespace ringsim::calibration
