#include "models/pipeline/step.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

namespace ringsim::models {

void PipelineDurations::check(const PipelineSchedule& s) const {
  const auto chunks = static_cast<std::size_t>(s.chunks());
  if (fwd_s.size() != chunks || bwd_s.size() != chunks)
    throw std::invalid_argument("pipeline durations: expected " + std::to_string(chunks) + " forward and backward times");
  const auto bad = [](double x) { return !(x >= 0) || !std::isfinite(x); };
  if (bad(hop_s) || std::any_of(fwd_s.begin(), fwd_s.end(), bad) || std::any_of(bwd_s.begin(), bwd_s.end(), bad))
    throw std::invalid_argument("pipeline durations must be finite and non-negative");
}

PipelineDurations PipelineDurations::lockstep(const PipelineSchedule& s, double fwd, double bwd, double hop) {
  PipelineDurations d;
  d.fwd_s.assign(static_cast<std::size_t>(s.chunks()), fwd);
  d.bwd_s.assign(static_cast<std::size_t>(s.chunks()), bwd);
  d.hop_s = hop;
  return d;
}

double PipelineStep::bubble_fraction() const noexcept {
  if (step_s <= 0) return 0;
  double least = step_s;
  for (const double b : busy_s) least = std::min(least, b);
  return 1.0 - least / step_s;
}

namespace {

// A planner steps through the same few schedules and, for points that differ only in what does
// not change a pass's duration (ZeRO stages, the gradient's sharding), the same durations point
// after point: each thread keeps the ranks' orders per schedule and the steps per (schedule,
// durations), bounded (emptied when full), exact (keyed by the durations' bits).
using Orders = std::vector<std::vector<PipelinePass>>;

const Orders& orders_of(const PipelineSchedule& s) {
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t>;
  thread_local std::map<Key, Orders> memo;
  thread_local std::int64_t passes = 0;
  const Key key{static_cast<int>(s.kind), s.stages, s.virtual_stages, s.micro_batches};
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  const std::int64_t listed = 2 * s.chunks() * s.micro_batches;  // passes over all ranks (checked to fit)
  if (passes + listed > (std::int64_t{1} << 22)) {
    memo.clear();
    passes = 0;
  }
  Orders orders(static_cast<std::size_t>(s.stages));
  for (std::size_t r = 0; r < orders.size(); ++r) orders[r] = s.order(static_cast<std::int64_t>(r));
  passes += listed;
  return memo.emplace(key, std::move(orders)).first->second;
}

std::string step_key(const PipelineSchedule& s, const PipelineDurations& d) {
  std::string key;
  const auto put = [&](const auto& x) { key.append(reinterpret_cast<const char*>(&x), sizeof x); };
  put(static_cast<int>(s.kind));
  put(s.stages);
  put(s.virtual_stages);
  put(s.micro_batches);
  put(d.hop_s);
  for (const double x : d.fwd_s) put(x);
  for (const double x : d.bwd_s) put(x);
  return key;
}

PipelineStep longest_path(const PipelineSchedule& s, const PipelineDurations& d) {
  const std::int64_t p = s.stages, m = s.micro_batches, chunks = s.chunks();
  const auto P = static_cast<std::size_t>(p);
  // End time of each (direction, model stage, micro-batch); -1 until it has run.
  const auto slot = [&](bool backward, std::int64_t j, std::int64_t mb) {
    return static_cast<std::size_t>(((backward ? chunks : 0) + j) * m + mb);
  };
  std::vector<double> end(static_cast<std::size_t>(2 * chunks * m), -1.0);
  const Orders& order = orders_of(s);
  std::vector<std::size_t> next(P, 0);
  PipelineStep out;
  out.busy_s.assign(P, 0.0);
  std::vector<double> free_at(P, 0.0);
  // Each sweep runs, rank by rank, every pass whose input has been computed; a sweep that runs
  // none would mean the orders wait on each other (they never do: tests).
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t r = 0; r < P; ++r) {
      auto& i = next[r];
      while (i < order[r].size()) {
        const PipelinePass& x = order[r][i];
        const std::int64_t j = x.chunk * p + static_cast<std::int64_t>(r);
        double ready = free_at[r];
        if (x.backward ? j < chunks - 1 : j > 0) {
          const double from = end[slot(x.backward, x.backward ? j + 1 : j - 1, x.micro_batch)];
          if (from < 0) break;
          ready = std::max(ready, from + d.hop_s);
        }
        const double t = x.backward ? d.bwd_s[static_cast<std::size_t>(j)] : d.fwd_s[static_cast<std::size_t>(j)];
        free_at[r] = ready + t;
        end[slot(x.backward, j, x.micro_batch)] = free_at[r];
        out.busy_s[r] += t;
        ++i;
        progress = true;
      }
    }
  }
  for (std::size_t r = 0; r < P; ++r) {
    if (next[r] != order[r].size())
      throw std::logic_error("pipeline schedule deadlocked at rank " + std::to_string(r));
    out.step_s = std::max(out.step_s, free_at[r]);
  }
  return out;
}

}  // namespace

PipelineStep pipeline_step(const PipelineSchedule& s, const PipelineDurations& d) {
  s.check(0);
  d.check(s);
  thread_local std::unordered_map<std::string, PipelineStep> memo;
  auto key = step_key(s, d);
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  if (memo.size() >= 4096) memo.clear();
  auto step = longest_path(s, d);
  memo.emplace(std::move(key), step);
  return step;
}

}  // namespace ringsim::models
