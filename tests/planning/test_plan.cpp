// The planner against a brute-force reading of its equivalent sweep: for each goal, the best
// feasible row found by a plain scan of every row is the planner's first plan.
#include <algorithm>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "planning/plan.hpp"
#include "planning/prefilter.hpp"
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

// llama3-8b at 128k on up to `devices` H100, one tile, ZeRO-3 and selective recomputation: every
// strategy and implementation, few memory variants (fast in the sanitizer build).
PlanRequest h100_request(std::int64_t devices) {
  PlanRequest r;
  r.hardware = "h100-sxm";
  r.model = "llama3-8b";
  r.n_seq = 131072;
  r.devices = devices;
  r.tiles = {std::nullopt};
  r.zero = {models::Sharding::Zero3};
  r.recompute = {models::Recompute::Selective};
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
    CHECK(score(plans.front().plan, goal) == score(*best, goal));
    if (goal == Goal::MaxThroughput) CHECK(plans.front().plan.tokens_per_s == best->tokens_per_s);
    // Every plan is feasible, plans are ranked, none repeats another or ties with another; a
    // plan's ties are feasible, ranked after it, with its step and all but the implementation,
    // the layout, the tile and the memory options alike.
    std::set<std::string> identities, keys;
    std::int64_t grouped = 0;
    for (std::size_t i = 0; i < plans.size(); ++i) {
      const auto& p = plans[i].plan;
      CHECK(feasible(p, req));
      if (i > 0) CHECK_FALSE(better(p, plans[i - 1].plan, goal));
      CHECK(identities.insert(plan_identity(p)).second);
      CHECK(keys.insert(tie_key(p)).second);
      for (const auto& t : plans[i].ties) {
        CHECK(feasible(t, req));
        CHECK(better(p, t, goal));
        CHECK(t.step_s == p.step_s);
        CHECK(tie_key(t) == tie_key(p));
        CHECK(identities.insert(plan_identity(t)).second);
      }
      grouped += 1 + static_cast<std::int64_t>(plans[i].ties.size());
    }
    CHECK(grouped <= feasible_rows);
    // Brute force of the groups: the first `top` distinct tie keys in ranked order, and every
    // feasible row of those keys (one per identity) among them.
    std::vector<const SweepResult*> ranked;
    for (const auto& x : rows)
      if (feasible(x, req)) ranked.push_back(&x);
    std::stable_sort(ranked.begin(), ranked.end(), [&](const SweepResult* a, const SweepResult* b) { return better(*a, *b, goal); });
    std::set<std::string> seen, top_keys;
    std::int64_t members = 0;
    for (const auto* x : ranked) {
      if (!seen.insert(plan_identity(*x)).second) continue;
      if (static_cast<std::int64_t>(top_keys.size()) < req.top) top_keys.insert(tie_key(*x));
      members += top_keys.count(tie_key(*x)) > 0;
    }
    CHECK(static_cast<std::int64_t>(plans.size()) == static_cast<std::int64_t>(top_keys.size()));
    CHECK(grouped == members);
    // The streamed search (the grid's runnable points only, compacting as it goes, on every
    // core) gives the same plans and ties.
    auto small = req;
    small.top = 2;  // compaction then happens often
    const auto streamed = search_plans(grid, cat, small, {}, 16);
    const auto direct = best_plans(rows, small);
    REQUIRE(streamed.plans.size() == direct.size());
    for (std::size_t i = 0; i < direct.size(); ++i) {
      CHECK(streamed.plans[i].plan.point.index == direct[i].plan.point.index);
      // The search computes intervals for the listed rows only: the same as the sweep's.
      const auto& si = streamed.plans[i].plan.step_interval;
      const auto& di = direct[i].plan.step_interval;
      CHECK(si.available == di.available);
      CHECK(si.lo == di.lo);
      CHECK(si.hi == di.hi);
      REQUIRE(streamed.plans[i].ties.size() == direct[i].ties.size());
      for (std::size_t k = 0; k < direct[i].ties.size(); ++k)
        CHECK(streamed.plans[i].ties[k].point.index == direct[i].ties[k].point.index);
    }
    CHECK(streamed.searched + streamed.excluded + streamed.same_step == grid.size());
    CHECK(streamed.feasible == feasible_rows);
  }
}

TEST_CASE("plan: the listed plans carry the intervals their sweep rows carry", "[planning][plan]") {
  const models::Catalog cat;
  PlanRequest req = small_request(Goal::MaxThroughput);
  req.impls = {"ring-flash-attn"};  // fitted to step times on a100-80gb: rows have intervals
  req.model = "ringattn-1b";
  req.n_seq = 32768;
  req.devices = 8;
  req.top = 3;
  const auto grid = plan_grid(req, cat);
  const auto direct = best_plans(evaluate_all(grid, cat, {}), req);
  const auto streamed = search_plans(grid, cat, req, {}, 16);
  REQUIRE(!direct.empty());
  REQUIRE(streamed.plans.size() == direct.size());
  // The search folds plans the model cannot tell apart (reordered among themselves by memory
  // spare): the same plans, matched by point.
  std::map<std::int64_t, const PlanChoice*> by_index;
  for (const auto& d : direct) by_index[d.plan.point.index] = &d;
  for (std::size_t i = 0; i < direct.size(); ++i) {
    const auto& s = streamed.plans[i];
    REQUIRE(by_index.count(s.plan.point.index) == 1);
    const auto& d = *by_index.at(s.plan.point.index);
    CHECK(s.plan.step_interval.available);
    CHECK(s.plan.step_interval.lo == d.plan.step_interval.lo);
    CHECK(s.plan.step_interval.hi == d.plan.step_interval.hi);
    REQUIRE(s.ties.size() == d.ties.size());
    for (std::size_t k = 0; k < d.ties.size(); ++k) CHECK(s.ties[k].step_interval.hi == d.ties[k].step_interval.hi);
  }
  // Asked for without intervals, the search lists the same plans with none.
  auto off = grid;
  off.intervals = false;
  const auto bare = search_plans(off, cat, req, {}, 16);
  REQUIRE(bare.plans.size() == direct.size());
  CHECK(bare.plans.front().plan.point.index == direct.front().plan.point.index);
  CHECK_FALSE(bare.plans.front().plan.step_interval.available);
}

TEST_CASE("plan: the points left out before evaluation are points the evaluator refuses", "[planning][plan]") {
  const models::Catalog cat;
  auto req = small_request(Goal::MaxThroughput);
  req.impls = {"", "ringsim-tiles", "te-a2a-p2p", "verl-ulysses"};
  const auto grid = plan_grid(req, cat);
  const auto runnable = runnable_points(grid, cat);
  CHECK(runnable.excluded > 0);
  CHECK(runnable.points + runnable.excluded == grid.size());
  std::vector<bool> kept(static_cast<std::size_t>(grid.size()), false);
  for (const auto& r : runnable.ranges)
    for (std::int64_t i = r.first; i < r.first + r.count; ++i) kept[static_cast<std::size_t>(i)] = true;
  std::int64_t ok = 0;
  for (const auto& x : evaluate_all(grid, cat, {})) {
    if (kept[static_cast<std::size_t>(x.point.index)]) continue;
    INFO(x.point.spec.cp.text() << " mesh " << x.point.spec.mp << "x" << x.point.spec.sp << " impl " << x.point.spec.impl);
    CHECK_FALSE(x.ok);
    ++ok;
  }
  CHECK(ok == runnable.excluded);
}

TEST_CASE("plan: with a global batch pipeline stages are searched and points over the budget are left out unevaluated", "[planning][plan]") {
  const models::Catalog cat;
  auto req = small_request(Goal::MaxThroughput);
  req.n_seq = 16384;
  req.global_batch = 64;
  const auto grid = plan_grid(req, cat);
  // Powers of two within the budget that split llama2-7b's 32 layers.
  CHECK(grid.pp == std::vector<std::int64_t>{1, 2, 4, 8, 16});
  CHECK(grid.global_batch == 64);
  CHECK(plan_grid(small_request(Goal::MaxThroughput), cat).pp == std::vector<std::int64_t>{1});
  // The budget's prefilter keeps exactly the points within it that the plain prefilter keeps.
  const auto all = runnable_points(grid, cat), budget = runnable_points(grid, cat, req.devices);
  std::vector<bool> kept(static_cast<std::size_t>(grid.size()), false);
  for (const auto& r : budget.ranges)
    for (std::int64_t i = r.first; i < r.first + r.count; ++i) kept[static_cast<std::size_t>(i)] = true;
  std::int64_t within = 0;
  for (const auto& r : all.ranges)
    for (std::int64_t i = r.first; i < r.first + r.count; ++i) {
      const auto p = grid.point(i);
      const bool fits = p.pipeline.stages * p.dp * p.spec.mp * p.spec.sp <= req.devices;
      CHECK(kept[static_cast<std::size_t>(i)] == fits);
      within += fits;
    }
  CHECK(budget.points == within);
  // Every plan runs the global batch: micro-batches x dp x batch sequences a step, within the budget.
  const auto found = search_plans(grid, cat, req, {}, 16);
  REQUIRE_FALSE(found.plans.empty());
  for (const auto& c : found.plans) {
    const auto& x = c.plan;
    CHECK(x.devices() <= req.devices);
    CHECK(x.point.pipeline.micro_batches * x.point.dp * x.point.spec.batch == 64);
    CHECK(x.tokens_per_s == Approx(64.0 * 16384 / x.step_s).epsilon(1e-12));
  }
}

TEST_CASE("plan: more devices never lower the best throughput, max-context grows with the budget", "[planning][plan]") {
  const models::Catalog cat;
  double last = 0;
  std::int64_t last_ctx = 0;
  for (const std::int64_t d : {4, 8, 16}) {
    auto req = small_request(Goal::MaxThroughput);
    req.devices = d;
    const auto best = best_plans(evaluate_all(plan_grid(req, cat), cat, {}), req);
    REQUIRE(!best.empty());
    CHECK(best.front().plan.tokens_per_s >= last);
    last = best.front().plan.tokens_per_s;
    req.goal = Goal::MaxContext;
    const auto ctx = best_plans(evaluate_all(plan_grid(req, cat), cat, {}), req);
    REQUIRE(!ctx.empty());
    CHECK(ctx.front().plan.point.spec.n_seq >= last_ctx);
    last_ctx = ctx.front().plan.point.spec.n_seq;
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

TEST_CASE("plan: production libraries compete by default, research and reference kernels when asked, labelled",
          "[planning][plan]") {
  const models::Catalog catalog;
  auto r = h100_request(8);
  const auto g = plan_grid(r, catalog);
  for (const auto& name : g.impl) {
    INFO(name);
    CHECK(catalog.implementation(name).maturity == models::Maturity::Production);
  }
  r.include_research = true;
  const auto wide = plan_grid(r, catalog);
  CHECK(wide.impl.size() > g.impl.size());
  CHECK(std::find(wide.impl.begin(), wide.impl.end(), "scfa") != wide.impl.end());
  // Every row says what it is: a research kernel's is labelled, and so is a derived profile.
  SweepResult x;
  x.maturity = models::Maturity::Research;
  x.profile_origin = "derived";
  CHECK(x.deployability() == "[research; derived]");
  x.maturity = models::Maturity::Production;
  x.profile_origin = "fitted";
  CHECK(x.deployability().empty());
  // On TPUs no production library is modelled: the others compete rather than nothing.
  r.hardware = "tpu-v4";
  r.model = "ringattn-1b";
  r.include_research = false;
  CHECK_FALSE(plan_grid(r, catalog).impl.empty());
  // The plan file spells it include_research, a boolean.
  CHECK(plan_request_from_json(nlohmann::json{{"include_research", true}}, "p.json").include_research);
  CHECK_THROWS_AS(plan_request_from_json(nlohmann::json{{"include_research", "yes"}}, "p.json"), models::InputError);
}

TEST_CASE("plan: the best of each strategy is the best feasible row of that strategy in the equivalent sweep",
          "[planning][plan]") {
  const models::Catalog cat;
  auto r = h100_request(16);
  r.recompute.push_back(models::Recompute::Full);
  r.top = 2;
  const auto grid = plan_grid(r, cat);
  // Brute force: every row of the sweep, the best feasible one per strategy family (rows without
  // context parallelism, sp 1, are their own family: "none").
  std::map<std::string, SweepResult> want, want_impl;
  for (const auto& x : evaluate_all(grid, cat, {})) {
    if (!feasible(x, r)) continue;
    const auto f = x.point.spec.sp == 1 ? std::string("none") : x.point.spec.cp.family_name();
    if (!want.count(f) || better(x, want.at(f), r.goal)) want.insert_or_assign(f, x);
    if (!want_impl.count(x.impl) || better(x, want_impl.at(x.impl), r.goal)) want_impl.insert_or_assign(x.impl, x);
  }
  // A compaction every 16 rows: the per-strategy bests must survive what the ranked list drops.
  const auto found = search_plans(grid, cat, r, {}, 16);
  REQUIRE(found.best_per_strategy.size() == want.size());
  CHECK(want.size() >= 4);  // ring, allgather, ulysses, usp, double-ring on 16 H100
  for (std::size_t i = 0; i < found.best_per_strategy.size(); ++i) {
    const auto& got = found.best_per_strategy[i];
    const auto& w = want.at(got.strategy_family());
    INFO(got.point.spec.cp.text());
    CHECK(got.point.index == w.point.index);
    if (i > 0) CHECK_FALSE(better(got, found.best_per_strategy[i - 1], r.goal));  // best first
  }
  CHECK(found.best_per_strategy.front().point.index == found.plans.front().plan.point.index);
  // And per implementation.
  REQUIRE(found.best_per_implementation.size() == want_impl.size());
  CHECK(want_impl.size() >= 5);
  for (std::size_t i = 0; i < found.best_per_implementation.size(); ++i) {
    const auto& got = found.best_per_implementation[i];
    INFO(got.impl);
    CHECK(got.point.index == want_impl.at(got.impl).point.index);
    if (i > 0) CHECK_FALSE(better(got, found.best_per_implementation[i - 1], r.goal));
  }
}

TEST_CASE("plan: min-devices finds the fewest devices of any count, as budgets scanned one by one do", "[planning][plan]") {
  // The oracle knows nothing of how the planner enumerates replicas: the best throughput on at
  // most b devices for every b (each a max-throughput plan, whose configurations on exactly b
  // devices have a data-parallel degree dividing b), and the fewest devices is the first b whose
  // best reaches the target. A target the best 12-device plan reaches needs more than 8 devices
  // and at most 12, counts no power-of-two replica count reaches on power-of-two meshes.
  const models::Catalog cat;
  const auto best_within = [&](std::int64_t b) {
    auto req = small_request(Goal::MaxThroughput);
    req.devices = b;
    const auto plans = best_plans(evaluate_all(plan_grid(req, cat), cat, {}), req);
    return plans.empty() ? 0.0 : plans.front().plan.tokens_per_s;
  };
  // The best throughput never falls with the budget, so with best[8] short of the target the
  // first budget reaching it lies in 9..12: those are the only ones scanned.
  std::vector<double> best(13, 0.0);
  best[8] = best_within(8);
  best[12] = best_within(12);
  const double target = best[12];
  REQUIRE(target > best[8]);
  std::int64_t fewest = 9;
  for (; fewest < 12; ++fewest) {
    best[static_cast<std::size_t>(fewest)] = best_within(fewest);
    if (best[static_cast<std::size_t>(fewest)] >= target) break;
  }
  CHECK(fewest > 8);
  auto req = small_request(Goal::MinDevices);
  req.devices = 16;
  req.target_tokens_per_s = target;
  const auto plans = best_plans(evaluate_all(plan_grid(req, cat), cat, {}), req);
  REQUIRE(!plans.empty());
  CHECK(plans.front().plan.devices() == fewest);
  CHECK(plans.front().plan.tokens_per_s >= target);
}

TEST_CASE("plan: pipeline schedules searched as asked equal the equivalent sweep's best, interleaving only pipelines",
          "[planning][plan]") {
  const models::Catalog cat;
  auto req = small_request(Goal::MaxThroughput);
  req.global_batch = 16;
  req.pps = {1, 2, 4};
  req.pp_schedules = {"1f1b", "interleaved:2"};
  const auto grid = plan_grid(req, cat);
  CHECK(grid.pp_schedule == req.pp_schedules);
  const auto rows = evaluate_all(grid, cat, {});
  const SweepResult* best = nullptr;
  bool interleaved_pipeline = false;
  for (const auto& x : rows) {
    // A pp-1 point cannot interleave: it is refused, never a twin of its 1F1B point.
    if (x.point.pipeline.stages == 1 && x.point.pipeline.kind == models::PipelineKind::Interleaved) CHECK_FALSE(x.ok);
    if (!feasible(x, req)) continue;
    interleaved_pipeline |= x.point.pipeline.kind == models::PipelineKind::Interleaved;
    if (!best || x.tokens_per_s > best->tokens_per_s) best = &x;
  }
  CHECK(interleaved_pipeline);
  REQUIRE(best != nullptr);
  const auto found = search_plans(grid, cat, req, {});
  REQUIRE(!found.plans.empty());
  double top = 0;
  for (const auto& c : found.plans) top = std::max(top, c.plan.tokens_per_s);
  CHECK(top == best->tokens_per_s);
}

TEST_CASE("plan: min-devices on the worked example (64 H100, llama3-8b, 1M tokens, 10k tokens/s) equals the budget scan",
          "[planning][plan]") {
  // docs/planning.md's second example, with the command line's defaults. The best throughput on
  // at most b devices never falls as b grows (a larger budget keeps every smaller configuration),
  // so the fewest devices n is right when the best plan on n devices reaches the target and the
  // best on n - 1 does not: two max-throughput searches, which know nothing of min-devices.
  const models::Catalog cat;
  PlanRequest req;
  req.hardware = "h100-sxm";
  req.model = "llama3-8b";
  req.n_seq = 1048576;
  req.devices = 64;
  req.goal = Goal::MinDevices;
  req.target_tokens_per_s = 10000;
  req.top = 3;
  const auto found = search_plans(plan_grid(req, cat), cat, req, {});
  REQUIRE(!found.plans.empty());
  const std::int64_t n = found.plans.front().plan.devices();
  CHECK(found.plans.front().plan.tokens_per_s >= req.target_tokens_per_s);
  const auto best_within = [&](std::int64_t b) {
    auto r = req;
    r.goal = Goal::MaxThroughput;
    r.devices = b;
    r.top = 1;
    const auto f = search_plans(plan_grid(r, cat), cat, r, {});
    return f.plans.empty() ? 0.0 : f.plans.front().plan.tokens_per_s;
  };
  CHECK(best_within(n) >= req.target_tokens_per_s);
  CHECK(best_within(n - 1) < req.target_tokens_per_s);
}

TEST_CASE("plan: plans inside the paired interval of the fastest fold and rank by memory spare, outside they keep the goal's order",
          "[planning][plan][interval]") {
  const models::Catalog cat;
  const double z = models::two_sided_normal_quantile(0.9);
  for (const Goal goal : {Goal::MaxThroughput, Goal::MinDevices}) {
    auto req = h100_request(16);
    req.goal = goal;
    req.target_tokens_per_s = 20000;
    req.top = 10;
    const auto grid = plan_grid(req, cat);
    const auto found = search_plans(grid, cat, req, {});
    auto bare_grid = grid;
    bare_grid.intervals = false;
    const auto ranked = search_plans(bare_grid, cat, req, {});
    INFO(to_string(goal));
    REQUIRE(found.plans.size() == ranked.plans.size());
    // Without intervals nothing folds: the goal's order.
    for (const auto& c : ranked.plans) CHECK_FALSE(c.fold);
    Evaluator ev(cat, grid);
    std::size_t folded = 0;
    for (std::size_t i = 0; i < found.plans.size();) {
      const auto& c = found.plans[i];
      if (!c.fold) {
        // Unfolded plans sit where the goal's ranking put them among the unfolded ones.
        ++i;
        continue;
      }
      const auto& f = *c.fold;
      REQUIRE(f.first_rank == static_cast<std::int64_t>(i) + 1);
      REQUIRE(f.last_rank > f.first_rank);
      REQUIRE(f.last_rank <= static_cast<std::int64_t>(found.plans.size()));
      const auto first = static_cast<std::size_t>(f.first_rank - 1), last = static_cast<std::size_t>(f.last_rank - 1);
      // One fastest, the best in the goal's figure; every member's interval of its ratio to the
      // fastest contains 1, and its ratio is the figures' own; the members run from most spare down.
      const SweepResult* fastest = nullptr;
      for (std::size_t k = first; k <= last; ++k)
        if (found.plans[k].fold->fastest) {
          CHECK(fastest == nullptr);
          fastest = &found.plans[k].plan;
        }
      REQUIRE(fastest != nullptr);
      for (std::size_t k = first; k <= last; ++k) {
        const auto& m = found.plans[k];
        REQUIRE(m.fold);
        CHECK(m.fold->first_rank == f.first_rank);
        CHECK(m.fold->last_rank == f.last_rank);
        CHECK(m.plan.tokens_per_s <= fastest->tokens_per_s);
        CHECK(m.fold->ratio == Approx(m.plan.tokens_per_s / fastest->tokens_per_s));
        CHECK(m.fold->lo <= 1.0);
        CHECK(m.fold->hi >= 1.0);
        if (goal == Goal::MinDevices) CHECK(m.plan.devices() == fastest->devices());
        if (k > first) CHECK(m.plan.memory.spare_bytes() <= found.plans[k - 1].plan.memory.spare_bytes());
        if (!m.fold->fastest && m.fold->paired) {
          // Paired: the spread the evaluator gives the pair, narrower than the two intervals as
          // independent errors.
          const auto sd = ev.paired_step_log_sd(fastest->point, m.plan.point);
          REQUIRE(sd);
          CHECK(m.fold->hi / m.fold->ratio == Approx(std::exp(z * *sd)));
          const auto own = [&](const SweepResult& x) { return std::log(x.step_interval.hi / x.step_interval.lo) / (2 * z); };
          CHECK(*sd < std::hypot(own(*fastest), own(m.plan)));
        }
      }
      folded += last - first + 1;
      i = last + 1;
    }
    // The same plans as the goal's ranking, folds only reordered within themselves.
    std::multiset<std::int64_t> a, b;
    for (const auto& c : found.plans) a.insert(c.plan.point.index);
    for (const auto& c : ranked.plans) b.insert(c.plan.point.index);
    CHECK(a == b);
    // llama3-8b at 128k on H100s: libraries within a few per cent of each other, one cuDNN fit:
    // the model cannot tell the first plans apart.
    CHECK(folded >= 2);
  }
}

TEST_CASE("plan: the paired spread of a point with itself is the fit's held-out ratio spread, and different fits have none",
          "[planning][plan][interval]") {
  const models::Catalog cat;
  auto req = h100_request(8);
  req.top = 3;
  const auto grid = plan_grid(req, cat);
  Evaluator ev(cat, grid);
  std::optional<SweepPoint> te, rfa;
  for (std::int64_t i = 0; i < grid.size() && (!te || !rfa); ++i) {
    const auto p = grid.point(i);
    const auto r = ev.evaluate(p);
    if (!r.ok || p.spec.sp == 1) continue;
    if (r.impl == "te-p2p" && !te) te = p;
    if (r.impl == "ring-flash-attn" && !rfa) rfa = p;
  }
  REQUIRE(te);
  REQUIRE(rfa);
  // Both scenarios the same: every parameter's gradient cancels, the ratio's spread is left.
  const auto self = ev.paired_step_log_sd(*te, *te);
  REQUIRE(self);
  const auto profile = cat.profile("h100-sxm", cat.hardware("h100-sxm"), "te-p2p");
  CHECK(*self == Approx(profile.uncertainty.residual_log_sd.at("ratio")));
  // TransformerEngine's cuDNN fit and ring-flash-attention's FlashAttention-2 fit: no shared fit.
  CHECK_FALSE(ev.paired_step_log_sd(*te, *rfa));

  // A fit with fitted parameters (the Striped paper's JAX code on A100: its covariance is carried
  // through both scenarios under each perturbed profile): a point with itself still cancels to the
  // ratio spread, and two points differing in their layout add the parameters' share to it.
  auto jax = small_request(Goal::MaxThroughput);
  jax.impls = {"jax-blockwise"};
  jax.model = "ringattn-1b";
  jax.n_seq = 32768;
  jax.devices = 8;
  const auto jgrid = plan_grid(jax, cat);
  Evaluator jev(cat, jgrid);
  std::vector<SweepPoint> ring;
  for (std::int64_t i = 0; i < jgrid.size() && ring.size() < 2; ++i) {
    const auto p = jgrid.point(i);
    if (p.spec.sp != 8 || p.spec.mp != 1) continue;
    if (!jev.evaluate(p).ok) continue;
    if (ring.empty() || p.spec.layout.text() != ring.front().spec.layout.text()) ring.push_back(p);
  }
  REQUIRE(ring.size() == 2);
  const auto jp = cat.profile("a100-80gb", cat.hardware("a100-80gb"), "jax-blockwise");
  REQUIRE_FALSE(jp.uncertainty.parameters.empty());
  const double r = jp.uncertainty.residual_log_sd.at("ratio");
  const auto same = jev.paired_step_log_sd(ring[0], ring[0]);
  REQUIRE(same);
  CHECK(*same == Approx(r).epsilon(1e-12));
  const auto apart = jev.paired_step_log_sd(ring[0], ring[1]);
  REQUIRE(apart);
  CHECK(*apart >= r);
  // The scenarios' profiles are restored after the perturbed predictions: asked again, the same.
  CHECK(jev.paired_step_log_sd(ring[0], ring[1]) == apart);
}
