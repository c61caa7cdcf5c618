// Schedules built from the workload model (kernels/workload_schedule): CPU only, always built.
// The kernel must visit exactly the tiles the model charges, with element rules that agree with
// the mask pair by pair, or a validate run would compare different work.
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "kernels/workload_schedule.hpp"
#include "models/io/error.hpp"
#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"
#include "models/workload/sparse_io.hpp"
#include "models/workload/workload.hpp"

using ringsim::kernels::schedule_from_workload;
using ringsim::kernels::TileItem;
using ringsim::kernels::TileKind;
using ringsim::kernels::TileSchedule;
namespace models = ringsim::models;

namespace {

// Compares one device-round's schedule with the workload's tiles and the mask's predicate.
void check_device_round(const models::Workload& w, std::int64_t round, std::int64_t device) {
  const TileSchedule s = schedule_from_workload(w, round, device);
  REQUIRE_NOTHROW(s.validate());
  std::map<std::pair<std::int64_t, std::int64_t>, models::TileCount> visited;
  w.for_each_tile(round, device, [&](std::int64_t, const models::TileCount& t) {
    if (t.visited) visited[{t.q_tile, t.k_tile}] = t;
  });
  REQUIRE(s.items.size() == visited.size());
  const auto& layout = w.layout();
  const auto q_pos = layout.positions(device);
  const auto k_pos = layout.positions(models::Workload::kv_block_of(device, round, layout.n_dev()));
  std::int64_t mismatches = 0;
  for (const TileItem& it : s.items) {
    const auto found = visited.find({it.q_tile, it.k_tile});
    REQUIRE(found != visited.end());
    const auto& t = found->second;
    CHECK((it.kind == TileKind::Full) == (t.allowed == t.rows * t.cols));
    std::int64_t allowed = 0;
    for (std::int32_t qi = 0; qi < s.q_tile_rows(it.q_tile); ++qi) {
      for (std::int32_t ki = 0; ki < s.k_tile_cols(it.k_tile); ++ki) {
        const auto q = static_cast<std::size_t>(it.q_tile) * static_cast<std::size_t>(s.tile_q) + static_cast<std::size_t>(qi);
        const auto k = static_cast<std::size_t>(it.k_tile) * static_cast<std::size_t>(s.tile_k) + static_cast<std::size_t>(ki);
        const bool kernel = s.allowed(it, static_cast<std::int32_t>(q), static_cast<std::int32_t>(k));
        mismatches += kernel != w.mask().allowed(q_pos[q], k_pos[k], 0);
        allowed += kernel;
      }
    }
    CHECK(allowed == t.allowed);
  }
  CHECK(mismatches == 0);
}

void check_ring(const models::Layout& layout, const models::Mask& mask, models::TileShape tile,
                TileKind expected_partial) {
  const models::Workload w(layout, mask, tile, 1);
  bool saw_partial = false;
  for (std::int64_t r = 0; r < w.rounds(); ++r) {
    for (std::int64_t d = 0; d < w.devices(); ++d) {
      INFO(layout.name() << " " << mask.name() << " round " << r << " device " << d);
      check_device_round(w, r, d);
      for (const auto& it : schedule_from_workload(w, r, d).items) {
        if (it.kind != TileKind::Full) {
          CHECK(it.kind == expected_partial);
          saw_partial = true;
        }
      }
    }
  }
  // Every mask here but `full` has boundary tiles somewhere in the ring.
  CHECK(saw_partial == (expected_partial != TileKind::Full));
}

}  // namespace

TEST_CASE("workload schedules list exactly the visited tiles with the mask's rule", "[kernels][workload]") {
  const std::int64_t n_seq = 384, n_dev = 4;
  const models::TileShape tile{32, 16};
  for (const auto& layout : {models::Layout::contiguous(n_seq, n_dev), models::Layout::striped(n_seq, n_dev),
                             models::Layout::zigzag(n_seq, n_dev)}) {
    check_ring(layout, *models::make_causal(), tile, TileKind::Causal);
    check_ring(layout, *models::make_full(), tile, TileKind::Full);
    check_ring(layout, *models::make_window(50), tile, TileKind::Window);
    check_ring(layout, *models::make_documents({0, 37, 150, 151, 300}, n_seq), tile, TileKind::IndexRanges);
  }
}

TEST_CASE("workload schedules reject index-based sparse masks with one input error", "[kernels][workload]") {
  const auto layout = models::Layout::contiguous(256, 2);
  const auto mask = models::make_sparse_mask(models::MaskSpec::parse("qkdrop:0.5"), 256, 1, 1);
  const models::Workload w(layout, *mask, {32, 32}, 1);
  CHECK_THROWS_AS(schedule_from_workload(w, 0, 0), models::InputError);
}
