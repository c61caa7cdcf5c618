#include "kernels/workload_schedule.hpp"

#include <limits>
#include <string>

#include "models/io/error.hpp"

namespace ringsim::kernels {

using models::InputError;

namespace {

std::int32_t to_i32(std::int64_t v, const char* field) {
  if (v < 0 || v > std::numeric_limits<std::int32_t>::max())
    throw InputError({}, 0, field, "value " + std::to_string(v) + " does not fit the kernel's int32 indices");
  return static_cast<std::int32_t>(v);
}

std::vector<std::int32_t> positions_i32(const models::Layout& layout, std::int64_t device) {
  std::vector<std::int32_t> out;
  const auto p = layout.positions(device);
  out.reserve(p.size());
  for (const auto v : p) out.push_back(to_i32(v, "n_seq"));
  return out;
}

// Document id of every position 0..n_seq-1. The mask hides its document starts, but inside a
// document consecutive positions see each other and across a boundary they do not, so the
// element predicate alone recovers the ids.
std::vector<std::int32_t> document_ids(const models::Mask& mask, std::int64_t n_seq) {
  std::vector<std::int32_t> id(static_cast<std::size_t>(n_seq), 0);
  for (std::int64_t t = 1; t < n_seq; ++t) {
    const auto i = static_cast<std::size_t>(t);
    id[i] = id[i - 1] + (mask.allowed(t, t - 1, 0) ? 0 : 1);
  }
  return id;
}

}  // namespace

MaskRule mask_rule(const models::Mask& mask) {
  switch (mask.kind()) {
    case models::MaskKind::Causal: return {TileKind::Causal, 0, false};
    case models::MaskKind::Full: return {TileKind::Full, 0, false};
    case models::MaskKind::Window: {
      const auto w = mask.window().value_or(0);
      if (w < 1) throw InputError({}, 0, "mask", "window mask '" + mask.name() + "' has no positive width");
      return {TileKind::Window, to_i32(w, "mask"), false};
    }
    case models::MaskKind::Documents: return {TileKind::IndexRanges, 0, true};
    case models::MaskKind::QKDrop:
    case models::MaskKind::Hash: break;
  }
  throw InputError({}, 0, "mask",
                   "the CUDA kernel runs causal, full, window:W and docs:FILE masks; '" + mask.name() +
                       "' is index-based (its tiles are on compacted or sorted token lists)");
}

TileSchedule schedule_from_workload(const models::Workload& workload, std::int64_t round, std::int64_t device) {
  const auto& layout = workload.layout();
  const auto& mask = workload.mask();
  const MaskRule rule = mask_rule(mask);
  const auto n = layout.n_dev();
  const auto kv_device = models::Workload::kv_block_of(device, round, n);

  TileSchedule s;
  s.q_pos = positions_i32(layout, device);
  s.k_pos = positions_i32(layout, kv_device);
  s.rows = to_i32(static_cast<std::int64_t>(s.q_pos.size()), "block");
  s.cols = to_i32(static_cast<std::int64_t>(s.k_pos.size()), "block");
  s.tile_q = to_i32(workload.tile().q, "tile");
  s.tile_k = to_i32(workload.tile().k, "tile");
  if (rule.buckets) {
    const auto ids = document_ids(mask, layout.n_seq());
    for (const auto p : s.q_pos) s.q_bucket.push_back(ids[static_cast<std::size_t>(p)]);
    for (const auto p : s.k_pos) s.k_bucket.push_back(ids[static_cast<std::size_t>(p)]);
  }
  std::vector<TileItem> items;
  // Structured masks have one mask head; the kernel's heads all share it.
  workload.for_each_tile(round, device, [&](std::int64_t head, const models::TileCount& t) {
    if (head != 0 || !t.visited) return;
    const bool full = t.allowed == t.rows * t.cols;
    items.push_back(TileItem{static_cast<std::int32_t>(t.q_tile), static_cast<std::int32_t>(t.k_tile),
                             full ? TileKind::Full : rule.rule, full || rule.rule != TileKind::Window ? 0 : rule.window});
  });
  s.set_items(std::move(items));
  return s;
}

}  // namespace ringsim::kernels
