#include "models/transport/nccl_ctas.hpp"

#include <algorithm>

namespace ringsim::models::transport {

namespace {
// NCCL's bound on the collective channels of an NVSwitch node (MAXCHANNELS in the releases the
// catalog's libraries ship; the channels per peer never exceed the collective channels).
constexpr std::int64_t kMaxChannels = 32;
constexpr std::int64_t kChannelsPerSlowPeer = 2;  // a PCIe peer, or a NIC to another node

std::int64_t pow2_up(std::int64_t v) noexcept {
  std::int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}
}  // namespace

std::int64_t nccl_p2p_ctas(const Hardware& hw, bool group_spans_nodes) noexcept {
  // NCCL's rule: NVIDIA GPUs (a compute capability). RCCL sizes its channels by other rules (AMD),
  // and TPUs run no such kernel.
  if (hw.kind != "gpu" || hw.sm_count <= 0 || hw.compute_capability <= 0) return 0;
  // A PCIe machine (or an NVLink bridge beside PCIe peers): some peer of the group is a PCIe one.
  const bool nvswitch = hw.nvlinks_per_gpu > 0 && !(hw.machine.described && hw.machine.fabric == MachineSpec::Fabric::Pcie);
  if (group_spans_nodes || !nvswitch) return std::min(kChannelsPerSlowPeer, hw.sm_count);
  return std::min({pow2_up(2 * hw.nvlinks_per_gpu), kMaxChannels, hw.sm_count});
}

}  // namespace ringsim::models::transport
