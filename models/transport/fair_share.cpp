#include "models/transport/fair_share.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>

namespace ringsim::models::transport {
namespace {

void check(std::span<const double> capacity, std::span<const std::vector<ResourceUse>> flows) {
  for (std::size_t r = 0; r < capacity.size(); ++r)
    if (!(capacity[r] > 0) || !std::isfinite(capacity[r]))
      throw std::invalid_argument("resource " + std::to_string(r) + " has a non-positive or infinite capacity");
  for (const auto& f : flows)
    for (const auto& u : f) {
      if (u.resource < 0 || static_cast<std::size_t>(u.resource) >= capacity.size())
        throw std::invalid_argument("a flow names resource " + std::to_string(u.resource) + " of " +
                                    std::to_string(capacity.size()));
      if (!(u.weight > 0) || !std::isfinite(u.weight)) throw std::invalid_argument("a flow has a non-positive weight");
    }
}

// Progressive filling over the flows marked active; rates of the others are left as they are.
// Every unfrozen flow runs at the common level L, so resource r fills at the level
// (capacity_r - frozen_r) / load_r, where frozen_r is what its frozen flows use and load_r the
// summed weight of its unfrozen ones: a heap of those levels (stale entries skipped by version)
// takes O(uses log uses), as the simulator's water-filling does.
void fill(std::span<const double> capacity, std::span<const std::vector<ResourceUse>> flows,
          const std::vector<char>& active, FlowRates& out) {
  const std::size_t nr = capacity.size();
  std::vector<double> frozen_use(nr, 0.0);
  std::vector<double> load(nr, 0.0);
  std::vector<std::uint32_t> version(nr, 0);
  std::vector<std::vector<std::uint32_t>> on(nr);
  std::vector<char> frozen(flows.size(), 1);
  for (std::size_t f = 0; f < flows.size(); ++f) {
    if (!active[f]) continue;
    if (flows[f].empty()) {
      out.rate_bytes_per_s[f] = std::numeric_limits<double>::infinity();
      out.bottleneck[f] = -1;
      continue;
    }
    frozen[f] = 0;
    for (const auto& u : flows[f]) {
      const auto r = static_cast<std::size_t>(u.resource);
      load[r] += u.weight;
      on[r].push_back(static_cast<std::uint32_t>(f));
    }
  }
  using Entry = std::tuple<double, std::size_t, std::uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  auto level_of = [&](std::size_t r) { return std::max(capacity[r] - frozen_use[r], 0.0) / load[r]; };
  for (std::size_t r = 0; r < nr; ++r)
    if (load[r] > 0) heap.emplace(level_of(r), r, version[r]);
  while (!heap.empty()) {
    const auto [level, r, v] = heap.top();
    heap.pop();
    if (v != version[r] || !(load[r] > 0)) continue;
    for (const auto f : on[r]) {
      if (frozen[f]) continue;
      frozen[f] = 1;
      out.rate_bytes_per_s[f] = level;
      out.bottleneck[f] = static_cast<std::int32_t>(r);
      for (const auto& u : flows[f]) {
        const auto o = static_cast<std::size_t>(u.resource);
        frozen_use[o] += level * u.weight;
        load[o] -= u.weight;
        ++version[o];
        if (o != r && load[o] > 1e-12) heap.emplace(std::max(level_of(o), level), o, version[o]);
      }
    }
    load[r] = 0;
  }
}

}  // namespace

FlowRates max_min_rates(std::span<const double> capacity, std::span<const std::vector<ResourceUse>> flows) {
  check(capacity, flows);
  FlowRates out;
  out.rate_bytes_per_s.assign(flows.size(), 0.0);
  out.bottleneck.assign(flows.size(), -1);
  fill(capacity, flows, std::vector<char>(flows.size(), 1), out);
  return out;
}

std::vector<double> fluid_finish_s(std::span<const double> capacity, std::span<const std::vector<ResourceUse>> flows,
                                   std::span<const double> bytes) {
  check(capacity, flows);
  if (bytes.size() != flows.size()) throw std::invalid_argument("one byte count per flow expected");
  std::vector<double> left(bytes.begin(), bytes.end());
  std::vector<double> done(flows.size(), 0.0);
  std::vector<char> active(flows.size(), 0);
  std::size_t running = 0;
  for (std::size_t f = 0; f < flows.size(); ++f) {
    if (!(left[f] >= 0) || !std::isfinite(left[f])) throw std::invalid_argument("a flow has a negative byte count");
    if (left[f] > 0 && !flows[f].empty()) {
      active[f] = 1;
      ++running;
    }
  }
  FlowRates rates;
  rates.rate_bytes_per_s.assign(flows.size(), 0.0);
  rates.bottleneck.assign(flows.size(), -1);
  double now = 0;
  while (running > 0) {
    fill(capacity, flows, active, rates);
    double step = std::numeric_limits<double>::infinity();
    for (std::size_t f = 0; f < flows.size(); ++f)
      if (active[f]) step = std::min(step, left[f] / rates.rate_bytes_per_s[f]);
    now += step;
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (!active[f]) continue;
      left[f] -= step * rates.rate_bytes_per_s[f];
      // A flow within rounding of its end finishes now (equal flows finish together).
      if (left[f] <= 1e-9 * bytes[f]) {
        left[f] = 0;
        active[f] = 0;
        done[f] = now;
        --running;
      }
    }
  }
  return done;
}

}  // namespace ringsim::models::transport
