#pragma once
// The tile schedule of one device in one ring round, taken from the workload model rather than
// from build_schedule: the kernel then visits exactly the tiles the analytic model and the
// simulator charge, so a timed launch and its prediction describe the same work. Plain C++
// (no CUDA) so it is testable on machines without a GPU.
#include <cstdint>

#include "kernels/schedule.hpp"
#include "models/workload/workload.hpp"

namespace ringsim::kernels {

// The element rule a mask maps onto, and what the rule needs besides positions.
struct MaskRule {
  TileKind rule = TileKind::Causal;
  std::int32_t window = 0;  // Window only
  bool buckets = false;     // IndexRanges: per-token document ids go into q_bucket / k_bucket
};

// Causal -> Causal, full -> Full, window:W -> Window, documents -> IndexRanges with bucket =
// document id. Throws models::InputError for the index-based sparse masks (qkdrop, hash, ...):
// their workload tiles live on compacted / sorted index lists that a positional schedule cannot
// express.
[[nodiscard]] MaskRule mask_rule(const models::Mask& mask);

// Device `device`'s block pair in round `round` of `workload`: local Q rows are that device's
// tokens, local K/V cols those of the K/V block it holds in that round (Workload::kv_block_of).
// Items are exactly the tiles Workload::for_each_tile reports visited; a tile is Full when every
// pair in it is allowed and of the mask's rule otherwise. Throws InputError for unsupported
// masks and for blocks or tiles beyond int32.
[[nodiscard]] TileSchedule schedule_from_workload(const models::Workload& workload, std::int64_t round,
                                                  std::int64_t device);

}  // namespace ringsim::kernels
