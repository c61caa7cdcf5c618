#include "calibration/host_steps.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "models/io/error.hpp"

namespace ringsim::calibration {

using models::InputError;

HostCounts host_counts(const models::RingSteps& steps, const std::string& layout, std::int64_t devices,
                       std::int64_t rank, std::int64_t tokens) {
  const models::StepCalls* plan = steps.plan("causal", layout);
  if (!plan) throw InputError({}, 0, "layout", "the ring library has no causal step plan for layout '" + layout + "'");
  if (devices < 1 || rank < 0 || rank >= devices)
    throw InputError({}, 0, "rank", "expected a rank in [0, devices)");
  HostCounts n;
  // Step s works on the block of device rank - s (mod devices): the ring passes blocks forward.
  for (std::int64_t s = 0; s < devices; ++s) {
    const std::int64_t k = ((rank - s) % devices + devices) % devices;
    n.steps += 1;
    for (const auto& call : plan->of(models::step_class(rank, k)))
      if (call.kernel && call.q.of(tokens) > 0 && call.k.of(tokens) > 0) n.calls += 1;
  }
  return n;
}

namespace {

struct Solve {
  double step = 0, call = 0, step_se = 0, call_se = 0;
};

// min sum ((a s_i + b c_i) / y_i - 1)^2 over a, b >= 0; nullopt when the rows cannot tell the
// two apart (steps and calls proportional).
std::optional<Solve> solve(const std::vector<const HostRow*>& rows) {
  double ss = 0, sc = 0, cc = 0, s1 = 0, c1 = 0;
  for (const auto* r : rows) {
    const double s = r->steps / r->seconds, c = r->calls / r->seconds;
    ss += s * s, sc += s * c, cc += c * c, s1 += s, c1 += c;
  }
  const double det = ss * cc - sc * sc;
  if (!(det > 1e-9 * ss * cc)) return std::nullopt;
  Solve x;
  x.step = (s1 * cc - c1 * sc) / det;
  x.call = (ss * c1 - sc * s1) / det;
  // A negative term is held at its bound and the other refitted alone.
  if (x.step < 0) x = Solve{0, c1 / cc, 0, 0};
  if (x.call < 0) x = Solve{s1 / ss, 0, 0, 0};
  double rss = 0;
  for (const auto* r : rows) {
    const double e = (x.step * r->steps + x.call * r->calls) / r->seconds - 1;
    rss += e * e;
  }
  const double dof = static_cast<double>(rows.size()) - 2;
  if (dof > 0) {
    const double sigma2 = rss / dof;
    x.step_se = std::sqrt(sigma2 * cc / det);
    x.call_se = std::sqrt(sigma2 * ss / det);
  }
  return x;
}

double predict(const Solve& x, const HostRow& r) { return x.step * r.steps + x.call * r.calls; }

}  // namespace

HostFit fit_host_steps(std::vector<HostRow> rows, const models::RingSteps& steps) {
  HostFit fit;
  for (auto& r : rows) {
    HostCounts n;
    try {
      n = host_counts(steps, r.layout, r.devices, r.rank, r.tokens);
    } catch (const InputError& e) {
      throw InputError({}, r.line, e.field(), e.message());
    }
    r.steps = n.steps;
    r.calls = n.calls;
  }
  fit.rows = rows;
  fit.fitted_s.assign(rows.size(), 0);
  fit.held_out_s.assign(rows.size(), 0);
  for (const char* pass : {"fwd", "bwd"}) {
    std::vector<const HostRow*> mine;
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i < fit.rows.size(); ++i)
      if (fit.rows[i].pass == pass) mine.push_back(&fit.rows[i]), at.push_back(i);
    if (mine.empty()) continue;
    if (mine.size() < 3)
      throw InputError({}, 0, "rows", std::string("the ") + pass + " pass has " + std::to_string(mine.size()) +
                                          " runs; the step and call terms need at least 3");
    const auto all = solve(mine);
    if (!all)
      throw InputError({}, 0, "rows", std::string("the ") + pass +
                                          " runs cannot tell the step's time from the call's: every run makes as many calls "
                                          "per step (add runs of a contiguous ring, whose later blocks are not called)");
    HostPassFit p;
    p.pass = pass;
    p.step_s = all->step, p.call_s = all->call, p.step_se = all->step_se, p.call_se = all->call_se;
    p.rows = static_cast<std::int64_t>(mine.size());
    std::int64_t held = 0;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      fit.fitted_s[at[i]] = predict(*all, *mine[i]);
      p.in_sample_mape += std::abs(fit.fitted_s[at[i]] / mine[i]->seconds - 1);
      std::vector<const HostRow*> rest;
      for (std::size_t j = 0; j < mine.size(); ++j)
        if (j != i) rest.push_back(mine[j]);
      if (const auto x = solve(rest)) {
        fit.held_out_s[at[i]] = predict(*x, *mine[i]);
        p.held_out_mape += std::abs(fit.held_out_s[at[i]] / mine[i]->seconds - 1);
        ++held;
      } else {
        fit.held_out_s[at[i]] = std::nan("");
      }
    }
    p.in_sample_mape /= static_cast<double>(mine.size());
    p.held_out_mape = held ? p.held_out_mape / static_cast<double>(held) : std::nan("");
    std::map<std::string, std::vector<const HostRow*>> by;
    for (const auto* r : mine) by[r->layout].push_back(r);
    for (const auto& [layout, group] : by) {
      std::vector<const HostRow*> rest;
      for (const auto* r : mine)
        if (r->layout != layout) rest.push_back(r);
      HostLayoutScore sc;
      sc.layout = layout;
      if (const auto x = solve(rest)) {
        sc.identified = true;
        for (const auto* r : group) sc.held_out_mape += std::abs(predict(*x, *r) / r->seconds - 1);
        sc.held_out_mape /= static_cast<double>(group.size());
      }
      p.by_layout.push_back(sc);
    }
    fit.passes.push_back(p);
  }
  if (fit.passes.empty()) throw InputError({}, 0, "rows", "no fwd or bwd runs");
  return fit;
}

}  // namespace ringsim::calibration
