// The SCFA fit: recovers known parameters from synthetic times, rejects malformed tables.
#include <cmath>

#include <catch2/catch.hpp>

#include "calibration/scfa.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"

using namespace ringsim;
using calibration::ScfaRow;

namespace {

ScfaRow row(const std::string& method, const std::string& param, std::int64_t n) {
  ScfaRow r;
  r.method = method;
  r.param = param;
  r.mask = models::MaskSpec::parse(calibration::scfa_mask(method, param));
  r.n_seq = n;
  return r;
}

// A small setting so a test is fast: 8 heads of 64, batch 2, 64 x 64 tiles.
calibration::ScfaSetting small_setting() {
  calibration::ScfaSetting setting;
  setting.model = "attn:8:8:64";
  setting.batch = 2;
  setting.tile = {64, 64};
  return setting;
}

}  // namespace

TEST_CASE("scfa masks map the published methods", "[scfa]") {
  CHECK(calibration::scfa_mask("flash", "none") == "causal");
  CHECK(calibration::scfa_mask("hash", "nb=8") == "hash:8");
  CHECK(calibration::scfa_mask("qk", "drop=0.5") == "qkdrop:0.5");
  CHECK_THROWS_AS(calibration::scfa_mask("reformer", "x"), models::InputError);
  CHECK_THROWS_AS(calibration::scfa_mask("hash", "8"), models::InputError);
}

TEST_CASE("scfa fit recovers known parameters from synthetic times", "[scfa][fit]") {
  // The same shape of data as the published file (dense rows at three lengths, sparse rows at one).
  const models::Catalog catalog;
  const auto predictor = calibration::analytic_scfa_predictor(catalog, small_setting());
  std::vector<ScfaRow> rows = {row("flash", "none", 1024), row("flash", "none", 2048), row("flash", "none", 4096),
                               row("hash", "nb=8", 2048), row("qk", "drop=0.5", 2048)};
  const auto hw = catalog.hardware("a100-40gb");
  models::Profile truth = models::Profile::spec_default(hw);
  truth.attention_efficiency = 0.35;
  truth.sparse_kernel_efficiency = 0.7;
  truth.masked_tile_penalty = 0.5;
  for (auto& r : rows) r.ms = predictor(r, truth) * 1e3;

  const models::Profile base = models::Profile::spec_default(hw);  // 0.5, 1.0, 0: far from the truth
  const auto c = calibration::calibrate_scfa(rows, base, calibration::scfa_default_free(), predictor);
  CHECK(c.profile.attention_efficiency == Approx(0.35).epsilon(1e-4));
  CHECK(c.profile.sparse_kernel_efficiency == Approx(0.7).epsilon(1e-4));
  CHECK(c.profile.masked_tile_penalty == Approx(0.5).epsilon(1e-3));
  for (double e : c.relative_error) CHECK(std::abs(e) < 1e-6);
}

TEST_CASE("scfa leave-one-row-out predicts each row from a fit to the others", "[scfa][fit]") {
  const models::Catalog catalog;
  const auto predictor = calibration::analytic_scfa_predictor(catalog, small_setting());
  // Rows the model makes itself, with the planted parameters: every row the others can carry
  // (the dense ones, and any sparse one while a dense row fixes the efficiency) comes back.
  std::vector<ScfaRow> rows = {row("flash", "none", 1024), row("flash", "none", 2048), row("flash", "none", 4096),
                               row("hash", "nb=8", 2048)};
  const auto hw = catalog.hardware("a100-40gb");
  models::Profile truth = models::Profile::spec_default(hw);
  truth.attention_efficiency = 0.35;
  truth.sparse_kernel_efficiency = 0.7;
  for (auto& r : rows) r.ms = predictor(r, truth) * 1e3;
  const models::Profile base = models::Profile::spec_default(hw);
  const std::vector<std::string> free = {"attention_efficiency", "sparse_kernel_efficiency"};
  const auto h = calibration::scfa_leave_one_row_out(rows, base, free, predictor);
  REQUIRE(h.predicted_ms.size() == rows.size());
  for (std::size_t i = 0; i < 3; ++i) CHECK(h.predicted_ms[i] == Approx(rows[i].ms).epsilon(1e-4));
  // Without the only sparse row nothing fixes the sparse efficiency: the base's 1.0 predicts it,
  // and misses by the planted 0.7.
  CHECK(h.predicted_ms[3] == Approx(rows[3].ms).epsilon(0.5));
  CHECK(std::abs(h.predicted_ms[3] / rows[3].ms - 1) > 0.01);
  CHECK(h.points == 4);
  double sq = 0, abs_sum = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double e = std::log(h.predicted_ms[i] / rows[i].ms);
    sq += e * e;
    abs_sum += std::abs(h.predicted_ms[i] / rows[i].ms - 1);
  }
  CHECK(h.log_sd == Approx(std::sqrt(sq / 4)));
  CHECK(h.mape == Approx(abs_sum / 4));
  // Two rows for two parameters: holding one out leaves too few, so no row is scored.
  const auto two = calibration::scfa_leave_one_row_out({rows[0], rows[3]}, base, free, predictor);
  CHECK(two.points == 0);
  CHECK(std::isnan(two.log_sd));
  CHECK(std::isnan(two.predicted_ms[0]));
}

TEST_CASE("scfa rows: missing columns and bad values are InputErrors", "[scfa][errors]") {
  const std::vector<std::string> full = {"method", "param", "n_seq", "ms"};
  const std::vector<std::vector<std::string>> cells = {{"flash", "none", "8192", "67"}, {"hash", "nb=8", "16384", "142"}};
  const auto rows = calibration::scfa_rows("f.csv", full, cells, {2, 3});
  REQUIRE(rows.size() == 2);
  CHECK(rows[1].mask.text() == "hash:8");
  CHECK(rows[1].ms == 142);
  for (const char* missing : {"method", "param", "n_seq", "ms"}) {
    std::vector<std::string> h;
    for (const auto& x : full)
      if (x != missing) h.push_back(x);
    INFO(missing);
    try {
      (void)calibration::scfa_rows("f.csv", h, {}, {});
      FAIL("no error");
    } catch (const models::InputError& e) {
      CHECK(e.field() == missing);
      CHECK(e.file() == "f.csv");
    }
  }
  CHECK_THROWS_AS(calibration::scfa_rows("f.csv", full, {{"flash", "none", "8192", "-1"}}, {2}), models::InputError);
  CHECK_THROWS_AS(calibration::scfa_rows("f.csv", full, {{"qk", "drop=x", "8192", "5"}}, {2}), models::InputError);
  CHECK_THROWS_AS(calibration::scfa_rows("f.csv", full, {{"flash", "none", "81.5", "5"}}, {2}), models::InputError);
  CHECK_THROWS_AS(calibration::scfa_rows("f.csv", full, {}, {}), models::InputError);
}
