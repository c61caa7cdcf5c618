#pragma once
// The fabric of one scenario's devices and the transfer patterns its step runs, priced once
// and kept: the ring's hops (every position sending to the next at once), the context-parallel
// collectives and the tensor-parallel all-reduce (NCCL's, models/transport/collectives.hpp).
// The cost model holds it (models/cost/cost.hpp) and asks it instead of its per-hop-type figures;
// plans are memoised by the caller's key, behind a mutex, so one scenario's cost model may be
// shared by threads.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "models/transport/collectives.hpp"
#include "models/transport/fabric.hpp"

namespace ringsim::models::transport {

// What bounds a pattern, in words: "the socket0 root complex (8 transfers share 42 GB/s)".
[[nodiscard]] std::string describe_bound(const Fabric& fabric, std::int32_t resource, std::int64_t sharing);

class ScenarioTransport {
 public:
  // `devices` the scenario's devices (nodes as many as they fill); `scale` as Fabric's.
  ScenarioTransport(MachineSpec machine, std::int64_t devices, double scale);

  [[nodiscard]] const Fabric& fabric() const noexcept { return fabric_; }
  [[nodiscard]] std::int64_t devices() const noexcept { return devices_; }
  // The same machine over more devices (data-parallel replicas beside this mesh), memoised.
  [[nodiscard]] const ScenarioTransport& widened(std::int64_t devices) const;

  // A ring round's transfers all at once (every position to the next), memoised under `key`.
  [[nodiscard]] HopRates ring(const std::string& key, std::span<const Transfer> transfers) const;
  // A collective's plan over `groups` (all at once), memoised under `key`; groups are built only
  // on a miss.
  template <class MakeGroups>
  [[nodiscard]] const CollectivePlan& plan(const std::string& key, Collective kind, MakeGroups&& make_groups) const {
    std::lock_guard lock(mutex_);
    auto it = plans_.find(key);
    if (it == plans_.end()) {
      const std::vector<std::vector<std::int64_t>> groups = make_groups();
      it = plans_.emplace(key, std::make_unique<CollectivePlan>(fabric_, kind, groups)).first;
    }
    return *it->second;
  }

 private:
  Fabric fabric_;
  std::int64_t devices_ = 1;
  mutable std::mutex mutex_;
  mutable std::map<std::string, HopRates> rings_;
  mutable std::map<std::string, std::unique_ptr<CollectivePlan>> plans_;
  mutable std::map<std::int64_t, std::unique_ptr<ScenarioTransport>> wider_;
};

}  // namespace ringsim::models::transport
