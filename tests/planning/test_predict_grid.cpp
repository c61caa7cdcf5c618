// predict's comparison as the core function both front-ends call (planning/predict_runs,
// planning/predict_grid): one implementation per strategy for a mixed layout list, the command
// line's defaults, rows equal to the sweep evaluator's for the same scenarios, and one scenario
// that cannot run is an error while a comparison shows it as a skipped row.
#include <catch2/catch.hpp>

#include <set>

#include <nlohmann/json.hpp>

#include "models/catalog/catalog.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"
#include "planning/predict_grid.hpp"
#include "planning/predict_runs.hpp"
#include "planning/sweep.hpp"

using namespace ringsim;
using namespace ringsim::planning;
using nlohmann::json;

namespace {

std::vector<PredictRow> predict(const json& request) {
  const models::Catalog catalog;
  const auto r = scenario_request_from_json(request, "<test>", kDefaultPredictLayouts);
  r.grid.validate(catalog, "<test>");
  return predict_grid(r.grid, r.layouts_given, catalog, 2);
}

}  // namespace

TEST_CASE("a mixed layout list runs on one implementation, the one expand_runs chooses", "[predict]") {
  const json request = {{"layout", {"contiguous", "striped", "zigzag", "cyclic:2"}}};
  const auto rows = predict(request);
  REQUIRE(rows.size() == 4);
  std::set<std::string> impls;
  for (const auto& r : rows) {
    CHECK(r.result.ok);
    impls.insert(r.result.impl);
  }
  CHECK(impls.size() == 1);
  // The command line's choice for the same request.
  const models::Catalog catalog;
  RunRequest cli;
  cli.base.n_seq = kDefaultSeq;
  cli.layouts = models::parse_layouts({"contiguous", "striped", "zigzag", "cyclic:2"});
  cli.layouts_given = true;
  cli.cps = {models::Strategy::parse(kDefaultStrategy)};
  const auto runs = expand_runs(cli, catalog);
  REQUIRE(runs.size() == 4);
  CHECK(runs.front().impl == *impls.begin());
  // The rows in the command's order, numbered from 0.
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].result.point.spec.layout.text() == runs[i].layout.text());
    CHECK(rows[i].result.point.index == static_cast<std::int64_t>(i));
  }
}

TEST_CASE("predict's defaults are the command line's", "[predict]") {
  const auto rows = predict(json::object());
  REQUIRE(rows.size() == 3);  // contiguous, striped, zigzag on the ring
  for (const auto& r : rows) {
    CHECK(r.result.point.spec.n_seq == kDefaultSeq);
    CHECK(r.result.hardware == kDefaultHardware);
    CHECK(r.result.model == kDefaultModel);
    CHECK(r.result.point.spec.sp == kDefaultSp);
    CHECK(r.tms > 1);
  }
  CHECK(rows[0].speedup_vs_first == 1.0);
  CHECK(rows[1].speedup_vs_first == Approx(rows[0].result.step_s / rows[1].result.step_s).epsilon(1e-12));
}

TEST_CASE("rows are the sweep evaluator's for the same scenario", "[predict]") {
  const auto rows = predict({{"layout", {"zigzag"}}, {"mesh", "1x4"}, {"n_seq", 32768}, {"zero", 1}});
  REQUIRE(rows.size() == 1);
  SweepGrid g;
  g.mesh = {{1, 4}};
  g.n_seq = {32768};
  g.layout = {models::LayoutSpec::parse("zigzag")};
  g.zero = {models::Sharding::Zero1};
  const auto swept = evaluate_all(g, models::Catalog(), {});
  REQUIRE(swept.size() == 1);
  std::string a, b;
  append_csv_row(rows[0].result, a);
  append_csv_row(swept[0], b);
  CHECK(a == b);
}

TEST_CASE("one scenario that cannot run throws, a comparison skips the row with its reason", "[predict]") {
  try {
    (void)predict({{"layout", {"zigzag"}}, {"n_seq", 65537}});
    FAIL("no error");
  } catch (const models::InputError& e) {
    CHECK(e.field() == "n_seq");
    CHECK_FALSE(e.message().empty());
  }
  // Ulysses over 16 devices needs 16 KV heads; llama3-8b has 8. The ring row runs.
  const auto rows = predict({{"hardware", "h100-sxm"}, {"model", "llama3-8b"}, {"mesh", "1x16"},
                             {"cp", {"ring", "ulysses"}}, {"layout", {"zigzag"}}});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].result.ok);
  CHECK_FALSE(rows[1].result.ok);
  CHECK_FALSE(rows[1].result.note.empty());
  CHECK(rows[1].why == rows[1].result.note);
}

TEST_CASE("a comparison of strategies runs on one kernel where one kernel runs them all", "[predict]") {
  // Oracle: for each list, whether any kernel has an implementation for every strategy (asked of
  // the catalog directly); if so every row must share a kernel, the first strategy's default's when
  // that one runs them all.
  const models::Catalog catalog;
  const auto kernels_of = [&](const std::vector<models::ScenarioSpec>& runs, const models::Hardware& hw) {
    std::set<std::string> ks;
    for (const auto& r : runs) ks.insert(kernel_on(catalog.implementation(r.impl), hw));
    return ks;
  };
  struct Case {
    const char* hardware;
    const char* cps;
    const char* kernel;  // the kernel every row must call
  };
  for (const Case c : {Case{"h100-sxm", "ulysses,ring,allgather,usp:2x4", "cudnn-fused"},
                       Case{"h100-sxm", "ring,ulysses,allgather,usp:2x4", "flash-attn-2"},
                       Case{"h100-sxm", "ulysses,ring,double-ring:4", "flash-attn-2"},
                       Case{"a100-80gb", "ulysses,ring,allgather", "flash-attn-2"}}) {
    INFO(c.hardware << " " << c.cps);
    RunRequest request;
    request.base.hardware = c.hardware;
    request.base.model = "llama3-8b";
    request.base.mp = 1;
    request.base.sp = 8;
    request.base.n_seq = 65536;
    request.layouts = models::parse_layouts({"zigzag"});
    request.layouts_given = true;
    request.base.layout = request.layouts.front();
    for (const auto& cp : models::split(c.cps, ',')) request.cps.push_back(models::Strategy::parse(cp));
    const auto hw = catalog.hardware(c.hardware);
    const auto runs = expand_runs(request, catalog);
    REQUIRE(runs.size() == request.cps.size());
    CHECK(kernels_of(runs, hw) == std::set<std::string>{c.kernel});
    // Alone, each strategy keeps its own default (what the shared choice overrides).
    std::set<std::string> alone;
    for (const auto& cp : request.cps) {
      RunRequest one = request;
      one.cps = {cp};
      alone.insert(kernel_on(catalog.implementation(expand_runs(one, catalog).front().impl), hw));
    }
    if (std::string(c.hardware) == "h100-sxm") CHECK(alone.size() == 2);  // the defaults differ
  }
}
