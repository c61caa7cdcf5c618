// Plans the model cannot tell apart: a ranking by predicted throughput alone orders plans whose
// difference is far inside the model's error (issue 53). Two plans on one fitted profile share
// most of it (the same kernel fit, links and host terms predict both), so their ratio is known far
// better than either time: the paired interval. Plans inside it are one choice as far as the model
// can say, and among them the one with the most memory spare is the safer pick.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "models/analytic/interval.hpp"
#include "planning/plan.hpp"

namespace ringsim::planning {

namespace {

constexpr double kLevel = 0.9;

// The goal's figure that must be equal for two plans to fold: a throughput difference cannot
// trade against a device or a length the goal asked for.
std::int64_t exact_figure(const SweepResult& x, Goal goal) {
  switch (goal) {
    case Goal::MinDevices: return x.devices();
    case Goal::MaxContext: return x.point.spec.n_seq;
    case Goal::MaxThroughput: return 0;
  }
  return 0;
}

// A step interval's log-space standard deviation (it is symmetric in log around the step).
std::optional<double> log_sd_of(const SweepResult& x, double z) {
  const auto& iv = x.step_interval;
  if (!iv.available || !(iv.lo > 0) || !(iv.hi > iv.lo)) return std::nullopt;
  return std::log(iv.hi / iv.lo) / (2 * z);
}

struct Spread {
  double log_sd;
  bool paired;
};

std::optional<Spread> ratio_spread(const SweepResult& a, const SweepResult& b, Evaluator& ev, double z) {
  if (const auto sd = ev.paired_step_log_sd(a.point, b.point)) return Spread{*sd, true};
  const auto sa = log_sd_of(a, z), sb = log_sd_of(b, z);
  if (!sa || !sb) return std::nullopt;
  return Spread{std::hypot(*sa, *sb), false};
}

}  // namespace

void fold_plans(std::vector<PlanChoice>& plans, const PlanRequest& r, Evaluator& ev) {
  if (!r.fold || r.phase != models::RunPhase::Train) return;
  const double z = models::two_sided_normal_quantile(kLevel);
  std::vector<PlanChoice> out;
  out.reserve(plans.size());
  std::size_t i = 0;
  while (i < plans.size()) {
    std::vector<PlanChoice> fold;
    fold.push_back(std::move(plans[i]));
    fold.back().fold = PlanFold{};
    fold.back().fold->fastest = true;
    std::size_t j = i + 1;
    for (; j < plans.size(); ++j) {
      const auto& x = plans[j].plan;
      if (exact_figure(x, r.goal) != exact_figure(fold.front().plan, r.goal)) break;
      const auto spread = ratio_spread(fold.front().plan, x, ev, z);
      const double ratio = x.tokens_per_s / fold.front().plan.tokens_per_s;
      if (!spread || !(ratio > 0) || std::abs(std::log(ratio)) > z * spread->log_sd) break;
      PlanFold f;
      f.ratio = ratio;
      f.lo = ratio * std::exp(-z * spread->log_sd);
      f.hi = ratio * std::exp(z * spread->log_sd);
      f.paired = spread->paired;
      fold.push_back(std::move(plans[j]));
      fold.back().fold = f;
    }
    if (fold.size() == 1) {
      fold.front().fold.reset();
    } else {
      std::stable_sort(fold.begin(), fold.end(), [](const PlanChoice& a, const PlanChoice& b) {
        return a.plan.memory.spare_bytes() > b.plan.memory.spare_bytes();
      });
      const auto first = static_cast<std::int64_t>(out.size()) + 1;
      for (auto& c : fold) {
        c.fold->first_rank = first;
        c.fold->last_rank = first + static_cast<std::int64_t>(fold.size()) - 1;
      }
    }
    for (auto& c : fold) out.push_back(std::move(c));
    i = j;
  }
  plans = std::move(out);
}

std::string fold_text(const PlanChoice& c) {
  if (!c.fold) return {};
  const auto& f = *c.fold;
  const std::string ranks = fmt::format("ranks {}-{}", f.first_rank, f.last_rank);
  const std::string spare = fmt::format("{:.1f} GiB spare", c.plan.memory.spare_bytes() / (1024.0 * 1024 * 1024));
  if (f.fastest)
    return fmt::format("{} fold: the model cannot tell them apart (90 % intervals of their throughput ratios "
                       "to this, the fastest, contain 1); ranked by memory spare ({})",
                       ranks, spare);
  return fmt::format("{} fold: tokens/s x{:.3f} of the fastest among them, 90 % interval {:.2f}-{:.2f} ({}); "
                     "ranked by memory spare ({})",
                     ranks, f.ratio, f.lo, f.hi, f.paired ? "paired: one fit" : "independent: different fits", spare);
}

}  // namespace ringsim::planning
