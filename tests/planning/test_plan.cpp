// The planner against a brute-force reading of its equivalent sweep: for each goal, the best
// feasible row found by a plain scan of every row is the planner's first plan.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "models/error.hpp"
#include "planning/plan.hpp"
#include "planning/sweep.hpp"

using namespace ringsim;
using namespace ringsim::planning;

namespace {

PlanRequest small_request(Goal goal) {
  PlanRequest r;
  r.hardware = "a100-80gb";
  r.model = "llama2-7b";
  r.goal = goal;
  r.n_seq = 65536;
  r.max_context = 1 << 18;
  r.devices = 16;
  r.target_tokens_per_s = 20000;
  r.tiles = {std::nullopt, models::TileShape{512, 512}};
  // Narrowed search axes: the property holds for any grid, and the suite stays fast in the
  // sanitizer build.
  r.impls = {"jax-blockwise", "ringsim-tiles"};
  r.zero = {models::Sharding::None, models::Sharding::Zero3};
  r.recompute = {models::Recompute::None, models::Recompute::Full};
  r.top = 5;
  return r;
}

// The goal's figure, written out again without the planner's code: larger is better.
double score(const SweepResult& x, Goal goal) {
  switch (goal) {
    case Goal::MinDevices: return -static_cast<double>(x.devices()) + 1e-12 * x.tokens_per_s;
    case Goal::MaxThroughput: return x.tokens_per_s;
    case Goal::MaxContext: return static_cast<double>(x.point.spec.n_seq);
  }
  return 0;
}

}  // namespace

TEST_CASE("plan: the first plan is the best row of the equivalent sweep, for every goal", "[planning][plan]") {
  const models::Catalog cat;
  for (const auto goal : {Goal::MinDevices, Goal::MaxThroughput, Goal::MaxContext}) {
    INFO(to_string(goal));
    const auto req = small_request(goal);
    const auto grid = plan_grid(req, cat);
    const auto rows = evaluate_all(grid, cat, {});
    REQUIRE(static_cast<std::int64_t>(rows.size()) == grid.size());
    // Brute force: scan every row, keep the feasible ones by the request's own words.
    const SweepResult* best = nullptr;
    std::int64_t feasible_rows = 0;
    for (const auto& x : rows) {
      const bool ok = x.ok && x.memory.fits && x.devices() <= req.devices &&
                      (goal != Goal::MinDevices || x.tokens_per_s >= req.target_tokens_per_s);
      if (!ok) continue;
      ++feasible_rows;
      if (!best || score(x, goal) > score(*best, goal)) best = &x;
    }
    REQUIRE(best != nullptr);
    const auto plans = best_plans(rows, req);
    REQUIRE(!plans.empty());
    CHECK(score(plans.front(), goal) == score(*best, goal));
    if (goal == Goal::MaxThroughput) CHECK(plans.front().tokens_per_s == best->tokens_per_s);
    // Every plan is feasible, plans are ranked, none repeats another.
    for (std::size_t i = 0; i < plans.size(); ++i) {
      CHECK(feasible(plans[i], req));
      if (i > 0) {
        CHECK_FALSE(better(plans[i], plans[i - 1], goal));
        CHECK(plan_identity(plans[i]) != plan_identity(plans[i - 1]));
      }
    }
    CHECK(static_cast<std::int64_t>(plans.size()) == std::min<std::int64_t>(req.top, feasible_rows));
    // The streamed search (compacting as it goes, on every core) gives the same plans.
    auto small = req;
    small.top = 2;  // compaction then happens often
    const auto streamed = search_plans(grid, cat, small, {}, 16);
    const auto direct = best_plans(rows, small);
    REQUIRE(streamed.plans.size() == direct.size());
    for (std::size_t i = 0; i < direct.size(); ++i) CHECK(streamed.plans[i].point.index == direct[i].point.index);
    CHECK(streamed.searched == grid.size());
    CHECK(streamed.feasible == feasible_rows);
  }
}

TEST_CASE("plan: more devices never lower the best throughput; max-context grows with the budget", "[planning][plan]") {
  const models::Catalog cat;
  double last = 0;
  std::int64_t last_ctx = 0;
  for (const std::int64_t d : {4, 8, 16}) {
    auto req = small_request(Goal::MaxThroughput);
    req.devices = d;
    const auto best = best_plans(evaluate_all(plan_grid(req, cat), cat, {}), req);
    REQUIRE(!best.empty());
    CHECK(best.front().tokens_per_s >= last);
    last = best.front().tokens_per_s;
    req.goal = Goal::MaxContext;
    const auto ctx = best_plans(evaluate_all(plan_grid(req, cat), cat, {}), req);
    REQUIRE(!ctx.empty());
    CHECK(ctx.front().point.spec.n_seq >= last_ctx);
    last_ctx = ctx.front().point.spec.n_seq;
  }
}

TEST_CASE("plan: a plan file names the field that is wrong", "[planning][plan]") {
  const auto field_of = [](const std::string& text) -> std::string {
    try {
      (void)plan_request_from_json(nlohmann::json::parse(text), "p.json");
    } catch (const models::InputError& e) {
      CHECK(e.file() == "p.json");
      return e.field();
    }
    return "no error";
  };
  CHECK(field_of(R"({"goal": "cheapest"})") == "goal");
  CHECK(field_of(R"({"devices": 0})") == "devices");
  CHECK(field_of(R"({"devices": "8"})") == "devices");
  CHECK(field_of(R"({"goal": "min-devices"})") == "target_tokens_per_s");
  CHECK(field_of(R"({"goal": "max-context", "n_seq": 65536, "max_context": 4096})") == "max_context");
  CHECK(field_of(R"({"layout": ["striped", 3]})") == "layout[1]");
  CHECK(field_of(R"({"budget": 8})") == "budget");
  CHECK(field_of(R"({"goal": "max-throughput", "devices": 8, "n_seq": 65536})") == "no error");
}
