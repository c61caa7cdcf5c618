#include "models/transport/scenario_transport.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ringsim::models::transport {

std::string describe_bound(const Fabric& fabric, std::int32_t resource, std::int64_t sharing) {
  if (resource < 0 || resource >= fabric.resource_count()) return {};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g GB/s", fabric.capacities()[static_cast<std::size_t>(resource)] / 1e9);
  const auto name = fabric.resource_name(resource);
  if (sharing > 1) return name + " (" + std::to_string(sharing) + " transfers share " + buf + ")";
  return name + " (" + buf + ")";
}

ScenarioTransport::ScenarioTransport(MachineSpec machine, std::int64_t devices, double scale)
    : fabric_(machine, std::max<std::int64_t>(1, (devices + std::max<std::int64_t>(machine.gpus, 1) - 1) /
                                                     std::max<std::int64_t>(machine.gpus, 1)),
              scale),
      devices_(devices) {}

const ScenarioTransport& ScenarioTransport::widened(std::int64_t devices) const {
  if (devices <= devices_) return *this;
  std::lock_guard lock(mutex_);
  auto it = wider_.find(devices);
  if (it == wider_.end())
    it = wider_.emplace(devices, std::make_unique<ScenarioTransport>(fabric_.machine(), devices, fabric_.scale())).first;
  return *it->second;
}

HopRates ScenarioTransport::ring(const std::string& key, std::span<const Transfer> ts) const {
  std::lock_guard lock(mutex_);
  if (const auto it = rings_.find(key); it != rings_.end()) return it->second;
  const HopRates h = ts.empty() ? HopRates{} : hop_rates(fabric_, ts);
  rings_.emplace(key, h);
  return h;
}

}  // namespace ringsim::models::transport
