#include "calibration/kernel_time_memo.hpp"

#include <algorithm>
#include <bit>

namespace ringsim::calibration {

namespace {

// Every field of KernelRates, as bits: a field added to it must be added here too (the size
// check fails to compile until it is), or two rates differing only there would share a time.
static_assert(sizeof(models::KernelRates) == KernelTimeMemo::kKeyWords * 8,
              "KernelRates changed: list its new field in key_of");

KernelTimeMemo::Key key_of(const models::KernelRates& r) {
  const auto i = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const auto d = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  return {i(r.sm_count),
          i(r.registers_per_sm),
          i(r.shared_memory_per_sm_bytes),
          i(r.device.compute_capability),
          i(r.device.smem_per_block_bytes),
          i(r.device.smem_per_sm_bytes),
          d(r.fwd_flops_per_s),
          d(r.bwd_flops_per_s),
          d(r.exp_per_s),
          d(r.alu_per_s),
          d(r.hbm_bytes_per_s),
          d(r.memory_latency_s),
          d(r.tile_overhead_s),
          d(r.cta_overhead_s),
          d(r.launch_s),
          d(r.solo_gain),
          d(r.smem_bytes_per_s),
          d(r.bwd_smem_bytes_per_s),
          d(r.softmax_overlap)};
}

}  // namespace

KernelTimeMemo::KernelTimeMemo(const std::vector<KernelRow>& rows, const models::KernelSpec& spec)
    : rows_(rows), spec_(spec), slots_(rows.size()) {}

double KernelTimeMemo::seconds(std::size_t i, const models::KernelRates& rates) {
  const KernelRow& row = rows_[i];
  // A forward + backward row reads every rate; a pass alone only its own (models::pass_rates).
  const Key key = key_of(row.pass == KernelPass::FwdBwd ? rates : models::pass_rates(rates, row.pass == KernelPass::Bwd));
  Slot& slot = slots_[i];
  for (std::size_t k = 0; k < slot.used; ++k) {
    const std::size_t w = (slot.next + kWays - 1 - k) % kWays;  // the most recent first
    if (slot.keys[w] == key) {
      ++served_;
      return slot.values[w];
    }
  }
  const double t = predict_kernel_row(row, spec_, rates);
  ++computed_;
  slot.keys[slot.next] = key;
  slot.values[slot.next] = t;
  slot.next = (slot.next + 1) % kWays;
  slot.used = std::min(slot.used + 1, kWays);
  return t;
}

}  // namespace ringsim::calibration
