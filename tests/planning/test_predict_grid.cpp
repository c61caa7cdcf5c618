// predict's comparison as the core function both front-ends call (planning/predict_runs,
// planning/predict_grid): one implementation per strategy for a mixed layout list, the command
// line's defaults, rows equal to the sweep evaluator's for the same scenarios, and one scenario
// that cannot run is an error while a comparison shows it as a skipped row.
#include <catch2/catch.hpp>

#include <set>

#include <nlohmann/json.hpp>

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
