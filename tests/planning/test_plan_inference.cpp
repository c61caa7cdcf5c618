// sweep and plan in the inference phases: the planner's fewest devices for a latency target
// against a plain scan of its equivalent sweep, the phase axis against the model it calls, and
// the shape of TTFT against the ring's size.
#include <algorithm>
#include <map>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "models/catalog/resolve.hpp"
#include "models/inference/phase.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "planning/plan.hpp"
#include "planning/sweep.hpp"

using namespace ringsim;
using namespace ringsim::planning;

namespace {

PlanRequest prefill_request(double ttft_s) {
  PlanRequest r;
  r.hardware = "h100-sxm";
  r.model = "llama3-8b";
  r.phase = models::RunPhase::Prefill;
  r.goal = Goal::MinDevices;
  r.n_seq = 65536;
  r.cached_tokens = 65536;
  r.devices = 32;
  r.target_latency_s = ttft_s;
  r.impls = {"ring-flash-attn"};
  r.top = 3;
  return r;
}

// What a prefill point gives when evaluated by itself, outside a sweep.
models::InferencePrediction direct(const models::Catalog& catalog, models::RunPhase phase, std::int64_t mp,
                                   std::int64_t sp, std::int64_t n_seq, std::int64_t cached) {
  models::ScenarioSpec spec;
  spec.hardware = "h100-sxm";
  spec.model = "llama3-8b";
  spec.mp = mp;
  spec.sp = sp;
  spec.n_seq = n_seq;
  const auto s = models::resolve(models::inference_spec(spec, phase, cached, catalog), catalog);
  return models::predict_inference(s, phase, cached);
}

}  // namespace

TEST_CASE("plan --ttft: the answer meets the target, fits, and no smaller device count does", "[plan][inference]") {
  const models::Catalog catalog;
  for (const double target : {0.5, 2.0}) {
    INFO(target);
    const auto r = prefill_request(target);
    const auto grid = plan_grid(r, catalog);
    const auto found = search_plans(grid, catalog, r, SweepOptions{});
    REQUIRE_FALSE(found.plans.empty());
    const auto& best = found.plans.front().plan;
    CHECK(best.step_s <= target);
    CHECK(best.memory.fits);
    REQUIRE(best.inference);
    CHECK(best.inference->latency_s == best.step_s);
    // A plain scan of every row of the equivalent sweep: nothing with fewer devices answers.
    std::map<std::int64_t, bool> counts;
    for (const auto& row : evaluate_all(grid, catalog, SweepOptions{})) {
      if (!row.ok || row.devices() >= best.devices()) continue;
      counts[row.devices()] = true;
      CHECK_FALSE((row.memory.fits && row.step_s <= target));
    }
    // Each smaller device count is listed once, with why it fails.
    REQUIRE(found.smaller.size() == counts.size());
    for (const auto& row : found.smaller) {
      CHECK(row.devices() < best.devices());
      const auto why = shortfall(row, r);
      CHECK((why.starts_with("too slow: TTFT") || why.starts_with("does not fit")));
    }
  }
  // A tighter target needs at least as many devices.
  const auto loose = search_plans(plan_grid(prefill_request(2.0), catalog), catalog, prefill_request(2.0), SweepOptions{});
  const auto tight = search_plans(plan_grid(prefill_request(0.5), catalog), catalog, prefill_request(0.5), SweepOptions{});
  CHECK(tight.plans.front().plan.devices() >= loose.plans.front().plan.devices());
}

TEST_CASE("plan --tpot: a cache too large for one device is planned on a ring, and why fewer fail", "[plan][inference]") {
  const models::Catalog catalog;
  PlanRequest r;
  r.hardware = "h100-sxm";
  r.model = "llama3-8b";
  r.phase = models::RunPhase::Decode;
  r.goal = Goal::MinDevices;
  r.cached_tokens = 1 << 20;  // 137 GB of cache: no single H100 holds it
  r.devices = 16;
  r.mps = {1};
  r.impls = {"ring-flash-attn"};
  r.target_latency_s = 0.05;
  const auto found = search_plans(plan_grid(r, catalog), catalog, r, SweepOptions{});
  REQUIRE_FALSE(found.plans.empty());
  CHECK(found.plans.front().plan.devices() > 1);
  CHECK(found.plans.front().plan.step_s <= 0.05);
  REQUIRE_FALSE(found.smaller.empty());
  CHECK(found.smaller.front().devices() == 1);
  CHECK(shortfall(found.smaller.front(), r).starts_with("does not fit"));
}

TEST_CASE("sweep over the phase: each row is the phase's prediction of that point", "[sweep][inference]") {
  const models::Catalog catalog;
  SweepGrid g;
  g.phase = {models::RunPhase::Train, models::RunPhase::Prefill, models::RunPhase::Decode};
  g.hardware = {"h100-sxm"};
  g.model = {"llama3-8b"};
  g.mesh = {{1, 4}, {2, 8}};
  g.n_seq = {16384};
  g.cached_tokens = {0, 65536};
  g.layout = {models::LayoutSpec::parse("zigzag")};
  g.intervals = false;
  CHECK(g.has_inference());
  std::int64_t inference_rows = 0;
  for (const auto& row : evaluate_all(g, catalog, SweepOptions{})) {
    const auto& p = row.point;
    INFO(models::to_string(p.phase) << " " << p.spec.mp << "x" << p.spec.sp << " cached " << p.cached_tokens);
    if (p.phase == models::RunPhase::Train) {
      // A training step has no cache: the points with one are skipped, the others are as before.
      CHECK(row.ok == (p.cached_tokens == 0));
      CHECK_FALSE(row.inference);
      continue;
    }
    if (p.phase == models::RunPhase::Decode && p.cached_tokens == 0) {
      CHECK_FALSE(row.ok);
      CHECK(row.note.starts_with("cached-tokens"));
      continue;
    }
    REQUIRE(row.ok);
    ++inference_rows;
    const auto want = direct(catalog, p.phase, p.spec.mp, p.spec.sp, p.spec.n_seq, p.cached_tokens);
    CHECK(row.step_s == want.latency_s);
    CHECK(row.tokens_per_s == want.tokens_per_s);
    CHECK(row.memory.total_bytes == want.memory_bytes);
    if (p.phase == models::RunPhase::Prefill) CHECK(row.step_s == std::min(want.pass_kv_s, want.pass_q_s));
  }
  CHECK(inference_rows == 6);
  // A training-only grid keeps its fingerprint and columns: the new axes are written only when used.
  SweepGrid train;
  CHECK_FALSE(train.to_json().contains("phase"));
  CHECK_FALSE(train.has_inference());
  CHECK(sweep_columns(false) == sweep_columns());
  const auto back = SweepGrid::from_json(g.to_json(), "g.json");
  CHECK(back.phase == g.phase);
  CHECK(back.cached_tokens == g.cached_tokens);
  CHECK(back.fingerprint() == g.fingerprint());
}

TEST_CASE("prefill: TTFT falls with the ring inside a node, until crossing nodes costs more than it gains",
          "[plan][inference]") {
  const models::Catalog catalog;
  double last = 1e300;
  for (const std::int64_t sp : {1, 2, 4, 8}) {
    const auto x = direct(catalog, models::RunPhase::Prefill, 1, sp, 131072, 0);
    INFO(sp);
    CHECK(x.latency_s < last);
    last = x.latency_s;
  }
  // A short prompt: past the node (8 H100s) the hops cross nodes, communication is exposed and the
  // ring of 16 is no faster than the ring of 8.
  const auto node = direct(catalog, models::RunPhase::Prefill, 1, 8, 8192, 0);
  const auto two_nodes = direct(catalog, models::RunPhase::Prefill, 1, 16, 8192, 0);
  CHECK(two_nodes.exposed_s > 0);
  CHECK(two_nodes.latency_s >= node.latency_s);
}

TEST_CASE("plan requests for inference: targets with their phase, durations with their unit", "[plan][inference]") {
  using models::parse_duration_s;
  CHECK(parse_duration_s("5s", "ttft") == 5.0);
  CHECK(parse_duration_s("50ms", "tpot") == Approx(0.05));
  CHECK(parse_duration_s(" 2.5 s", "ttft") == 2.5);
  for (const char* bad : {"5", "0s", "-1ms", "nan s", "infs", "1e9s", "5 min", "", "ms", "5ss"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_duration_s(bad, "ttft"), models::InputError);
  }
  // Below a microsecond no target is meant: a denormal one made "how far from it" an infinite
  // percentage ("(inf%)"). The accepted range is [1 us, 1 day], in the message.
  CHECK(parse_duration_s("1e-6s", "ttft") == 1e-6);
  CHECK(parse_duration_s("0.001ms", "ttft") == Approx(1e-6));
  CHECK(parse_duration_s("86400s", "ttft") == 86400);
  for (const char* bad : {"1e-320s", "4.9e-324s", "9e-7s", "0.0009ms", "86401s"}) {
    INFO(bad);
    try {
      (void)parse_duration_s(bad, "ttft");
      FAIL("accepted");
    } catch (const models::InputError& e) {
      CHECK(e.field() == "ttft");
      CHECK(std::string(e.message()).find("1 us to a day") != std::string::npos);
    }
  }
  const auto req = plan_request_from_json(
      nlohmann::json::parse(R"({"phase": "prefill", "ttft": "5s", "cached_tokens": 131072, "devices": 64})"), "p.json");
  CHECK(req.goal == Goal::MinDevices);
  CHECK(req.target_latency_s == 5.0);
  CHECK(req.cached_tokens == 131072);
  CHECK(plan_request_from_json(nlohmann::json::parse(R"({"phase": "decode", "tpot": 0.05, "cached_tokens": 8192})"), "p.json")
            .target_latency_s == 0.05);
  const auto field_of = [](const char* text) {
    try {
      (void)plan_request_from_json(nlohmann::json::parse(text), "p.json");
    } catch (const models::InputError& e) {
      return e.field();
    }
    return std::string("accepted");
  };
  CHECK(field_of(R"({"phase": "decode", "ttft": "5s", "cached_tokens": 8})") == "ttft");
  CHECK(field_of(R"({"phase": "prefill", "tpot": "5ms"})") == "tpot");
  CHECK(field_of(R"({"phase": "prefill", "ttft": "5"})") == "ttft");
  CHECK(field_of(R"({"phase": "prefill", "ttft": -1})") == "ttft");
  CHECK(field_of(R"({"phase": "prefill", "ttft": 1e-320})") == "ttft");
  CHECK(field_of(R"({"phase": "prefill", "ttft": "1e-320s"})") == "ttft");
  CHECK(field_of(R"({"phase": "prefill", "ttft": 1e-6})") == "accepted");
  CHECK(field_of(R"({"phase": "decode", "tpot": "50ms"})") == "cached_tokens");
  CHECK(field_of(R"({"phase": "train", "cached_tokens": 64})") == "cached_tokens");
  CHECK(field_of(R"({"phase": "warm"})") == "phase");
  CHECK(field_of(R"({"phase": "prefill", "ttft": "1s", "goal": "max-context"})") == "goal");
  CHECK(field_of(R"({"phase": "prefill", "ttft": "1s", "zero": [3]})") == "zero");
  CHECK(field_of(R"({"phase": "prefill", "ttft": "1s", "cp": ["ulysses"]})") == "cp");
}

TEST_CASE("training min-devices out of reach: each device count's closest row, as a brute-force scan finds it", "[plan]") {
  const models::Catalog catalog;
  PlanRequest r;
  r.hardware = "h100-sxm";
  r.model = "llama3-8b";
  r.goal = Goal::MinDevices;
  r.n_seq = 32768;
  r.devices = 4;
  r.impls = {"ring-flash-attn"};
  r.target_tokens_per_s = 1e9;  // no four H100s train an 8B model at a billion tokens a second
  r.top = 3;
  const auto grid = plan_grid(r, catalog);
  const auto found = search_plans(grid, catalog, r, SweepOptions{});
  CHECK(found.plans.empty());
  // The scan: per device count, the fitting row with the most tokens/s (else the least memory).
  std::map<std::int64_t, SweepResult> best;
  for (const auto& row : evaluate_all(grid, catalog, SweepOptions{})) {
    if (!row.ok || row.devices() > r.devices) continue;
    const auto it = best.find(row.devices());
    const bool better =
        it == best.end() || (row.memory.fits != it->second.memory.fits
                                 ? row.memory.fits
                                 : row.memory.fits ? row.tokens_per_s > it->second.tokens_per_s
                                                   : row.memory.total_bytes < it->second.memory.total_bytes);
    if (better) best.insert_or_assign(row.devices(), row);
  }
  REQUIRE(found.smaller.size() == best.size());
  for (const auto& row : found.smaller) {
    const auto& want = best.at(row.devices());
    CHECK(row.memory.fits == want.memory.fits);
    if (row.memory.fits) {
      CHECK(row.tokens_per_s == want.tokens_per_s);
      CHECK(shortfall(row, r).starts_with("too slow: "));
    }
  }
}
