// The planner times a FlashAttention library at its own tile only: every tile it leaves out,
// evaluated anyway, predicts the step of the kept point at the library's own tile, with no less
// memory, so no plan is lost; kernels that take the asked tile keep every tile.
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "models/catalog/resolve.hpp"
#include "models/families/attention_cost.hpp"
#include "planning/plan.hpp"
#include "planning/prefilter.hpp"
#include "planning/sweep.hpp"

using namespace ringsim;
using namespace ringsim::planning;

namespace {

// Plan's own tiles (no --tile), flash libraries beside a blockwise reference kernel, few memory
// variants: small enough to evaluate every point in the sanitizer build.
PlanRequest own_tiles_request() {
  PlanRequest r;
  r.hardware = "h100-sxm";
  r.model = "llama3-8b";
  r.n_seq = 32768;
  r.devices = 8;
  r.impls = {"ring-flash-attn", "usp", "te-all-gather", "ringsim-tiles"};
  r.zero = {models::Sharding::Zero3};
  r.recompute = {models::Recompute::Selective};
  r.include_research = true;
  return r;
}

}  // namespace

TEST_CASE("plan: a FlashAttention library's other tiles predict its own tile's step, and only they are left out",
          "[planning][plan]") {
  const models::Catalog cat;
  const auto req = own_tiles_request();
  REQUIRE(own_tile_once(req));
  const auto grid = plan_grid(req, cat);
  REQUIRE(grid.tile.size() >= 3);
  REQUIRE_FALSE(grid.tile.front().has_value());
  const auto all = runnable_points(grid, cat, req.devices), once = runnable_points(grid, cat, req.devices, true);
  CHECK(once.excluded == all.excluded);
  CHECK(once.points + once.same_step == all.points);
  CHECK(once.same_step > 0);

  std::vector<bool> kept(static_cast<std::size_t>(grid.size()), false);
  for (const auto& r : once.ranges)
    for (std::int64_t i = r.first; i < r.first + r.count; ++i) kept[static_cast<std::size_t>(i)] = true;
  const auto sizes = grid.axis_sizes();
  std::int64_t per_tile = 1;
  for (int a = kTile + 1; a < kAxes; ++a) per_tile *= sizes[static_cast<std::size_t>(a)];

  const auto rows = evaluate_all(grid, cat, {});
  std::map<std::string, std::int64_t> left_out_by_impl;
  std::int64_t compared = 0;
  for (const auto& r : all.ranges)
    for (std::int64_t i = r.first; i < r.first + r.count; ++i) {
      if (kept[static_cast<std::size_t>(i)]) continue;
      const auto& x = rows[static_cast<std::size_t>(i)];
      ++left_out_by_impl[x.impl];
      // The same point at the grid's own-tile entry (index 0 of the tile axis).
      const auto tile_at = x.point.axis[static_cast<std::size_t>(kTile)];
      const auto twin_index = i - tile_at * per_tile;
      REQUIRE(kept[static_cast<std::size_t>(twin_index)]);
      const auto& twin = rows[static_cast<std::size_t>(twin_index)];
      INFO(x.impl << " " << x.point.spec.cp.text() << " " << x.point.spec.layout.text() << " mesh " << x.point.spec.mp
                  << "x" << x.point.spec.sp << " tile " << x.tile_q << "x" << x.tile_k);
      if (!x.ok) continue;  // an asked tile larger than the block: refused, nothing lost
      REQUIRE(twin.ok);
      CHECK(x.step_s == twin.step_s);
      CHECK(x.tokens_per_s == twin.tokens_per_s);
      CHECK(x.prediction.attention_fwd_s == twin.prediction.attention_fwd_s);
      CHECK(x.prediction.attention_bwd_s == twin.prediction.attention_bwd_s);
      CHECK(x.memory.total_bytes >= twin.memory.total_bytes);
      ++compared;
    }
  CHECK(compared > 0);
  // The blockwise reference kernel runs the asked tile: none of its points is left out.
  CHECK_FALSE(left_out_by_impl.contains("ringsim-tiles"));
  CHECK(left_out_by_impl.contains("ring-flash-attn"));
  CHECK(left_out_by_impl.contains("usp"));

  // The search over the kept points finds the plans of a search that evaluates every tile.
  auto every_tile = req;
  every_tile.tiles = grid.tile;
  REQUIRE_FALSE(own_tile_once(every_tile));
  const auto found = search_plans(grid, cat, req, {}, 16);
  const auto slow = search_plans(plan_grid(every_tile, cat), cat, every_tile, {}, 16);
  CHECK(found.same_step == once.same_step);
  CHECK(found.searched + found.excluded + found.same_step == grid.size());
  CHECK(slow.same_step == 0);
  REQUIRE(found.plans.size() == slow.plans.size());
  for (std::size_t k = 0; k < found.plans.size(); ++k) {
    CHECK(found.plans[k].plan.point.index == slow.plans[k].plan.point.index);
    CHECK(found.plans[k].plan.step_s == slow.plans[k].plan.step_s);
  }
}

TEST_CASE("plan's own tile is the least workspace: every FlashAttention library's profile on every GPU it runs on "
          "keeps a default tile no larger than plan's smallest",
          "[planning][plan]") {
  // The prefilter keeps the own tile only; a profile whose default tile were larger than 128 x 128
  // would bound its workspace above the 128 x 128 point the search then leaves out.
  const models::Catalog cat;
  std::int64_t checked = 0;
  for (const auto& name : cat.implementation_names()) {
    const auto im = cat.implementation(name);
    if (im.kernel != "flash") continue;
    for (const auto& hw_name : cat.hardware_names()) {
      const auto hw = cat.hardware(hw_name);
      if (!im.runs_on(hw.kind)) continue;
      const auto p = cat.has_profile(hw, name) ? cat.profile(name + "/" + hw_name, hw, name) : cat.spec_profile(hw, name);
      INFO(name << " on " << hw_name);
      CHECK(p.default_tile.q * p.default_tile.k <= 128 * 128);
      ++checked;
    }
  }
  CHECK(checked > 20);
}

TEST_CASE("kernel families: FlashAttention picks its own tiles where a ring step has closed-form shapes or there is no ring",
          "[planning][plan]") {
  const models::Catalog cat;
  const auto flash = models::make_attention_cost("flash"), blockwise = models::make_attention_cost("blockwise");
  const auto rfa = cat.implementation("ring-flash-attn");
  const auto ring = models::Strategy::parse("ring"), ulysses = models::Strategy::parse("ulysses");
  CHECK(flash->kernel_picks_tiles(rfa, ring, "causal", "zigzag"));
  CHECK(flash->kernel_picks_tiles(rfa, ulysses, "docs", "contiguous"));
  // Packed documents on a ring: the varlen step's work is the block's visited area at the asked tile.
  CHECK_FALSE(flash->kernel_picks_tiles(rfa, ring, "docs", "contiguous"));
  CHECK_FALSE(blockwise->kernel_picks_tiles(cat.implementation("ringsim-tiles"), ring, "causal", "contiguous"));
}
