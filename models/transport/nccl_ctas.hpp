// How many SMs NCCL's send/receive kernel holds while a ring step's transfer runs beside the
// attention kernel: one CTA per channel, and a ring step's send (to the next rank) and receive
// (from the previous) run on the same channels (one round of NCCL's peer schedule), so a step
// holds the communicator's channels per peer.
//
// NCCL sets that count once per communicator (NVIDIA/nccl src/graph/paths.cc @ 5067397c,
// ncclTopoComputeP2pChannels and ncclTopoGetNchannels): the minimum over the communicator's
// peers of 2 x the NVLinks between the two GPUs (2 over PCIe, 2 per NIC to another node:
// NCCL_NCHANNELS_PER_NET_PEER's default), rounded up to a power of two and bounded by the
// collective channels (32 on NVSwitch nodes). So a ring inside one NVSwitch node holds 2 x its
// GPU's NVLinks (32 on A100 and H100, 16 on the 8-link A800 and H800), and a ring whose group
// reaches another node holds 2 on every hop, its NVLink hops too.
#pragma once

#include <cstdint>

#include "models/hardware/hardware.hpp"

namespace ringsim::models::transport {

// CTAs of NCCL's send/receive kernel during one ring step; 0 where no NCCL kernel runs (TPUs),
// where RCCL's rules apply (AMD: no compute capability) or the device has no SM figures.
[[nodiscard]] std::int64_t nccl_p2p_ctas(const Hardware& hw, bool group_spans_nodes) noexcept;

}  // namespace ringsim::models::transport
