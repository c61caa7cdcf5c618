// calibrate --from-trace and check --trace on a synthetic ring run written from the model with
// planted efficiencies and a planted link (calibration/trace/synthetic.hpp): the fit recovers
// them, the exposed communication is reported exactly, and traces that do not match the scenario
// are refused with the reason. "Exactly" is to the trace's timestamp resolution: a Kineto
// timestamp near 1e12 us holds about 0.1 ns, so sums over a step agree within 10 ns.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "calibration/kernel_curves.hpp"
#include "calibration/trace/from_trace.hpp"
#include "calibration/trace/kineto.hpp"
#include "calibration/trace/ring_calls.hpp"
#include "calibration/trace/step_summary.hpp"
#include "calibration/trace/trace_check.hpp"
#include "models/analytic/analytic.hpp"
#include "models/catalog/catalog.hpp"
#include "models/io/error.hpp"
#include "tests/support/scenario.hpp"
#include "tests/support/trace_support.hpp"
#include "calibration/trace/synthetic.hpp"

using namespace ringsim;

namespace {

std::vector<calibration::Trace> parse_all(const calibration::SyntheticRun& run) {
  std::vector<calibration::Trace> out;
  for (std::size_t r = 0; r < run.traces.size(); ++r)
    out.push_back(calibration::parse_kineto_trace(run.traces[r], "rank" + std::to_string(r) + ".json"));
  return out;
}

}  // namespace

TEST_CASE("ring kernel calls follow the library's step shapes", "[trace][from-trace]") {
  const auto s = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 4, 32768, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  const auto calls = calibration::ring_kernel_calls(s);
  REQUIRE(calls.size() == 4);
  // Round 0 on every rank: one causal call over both local chunks (c x c); later rounds c x c/2 from
  // an earlier rank's K/V, c/2 x c from a later one's (zigzag_ring_flash_attn_forward).
  const std::int64_t c = 8192;
  for (std::size_t d = 0; d < 4; ++d) {
    REQUIRE(calls[d].size() == 4);
    CHECK(calls[d][0].call.causal);
    CHECK(calls[d][0].call.q_len == c);
    for (std::size_t r = 1; r < 4; ++r) {
      const bool earlier = static_cast<std::int64_t>(d) - static_cast<std::int64_t>(r) >= 0;
      CHECK(calls[d][r].call.q_len == (earlier ? c : c / 2));
      CHECK(calls[d][r].call.k_len == (earlier ? c / 2 : c));
      CHECK_FALSE(calls[d][r].call.causal);
      CHECK(calls[d][r].time.fwd_s > 0);
    }
  }
  // A blockwise ring (JAX) has no per-step kernel calls to match a trace to.
  const auto jax = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 4, 32768, "contiguous", "causal", std::nullopt, "jax-blockwise");
  CHECK_THROWS_AS(calibration::ring_kernel_calls(jax), models::InputError);
}

TEST_CASE("calibrate --from-trace recovers planted efficiencies and link, check --trace reports the planted exposure",
          "[trace][from-trace]") {
  for (const char* layout : {"zigzag", "contiguous"}) {
    INFO(layout);
    auto s = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 4, 32768, layout, "causal", std::nullopt, "ring-flash-attn");
    const auto base = s.profile;
    // Planted: efficiencies well away from the catalog's, a slow link so that some rounds wait.
    s.profile.attention_efficiency = base.attention_efficiency * 0.83;
    s.profile.attention_bwd_efficiency = (base.attention_bwd_efficiency > 0 ? base.attention_bwd_efficiency : base.attention_efficiency) * 0.71;
    s.rebuild_cost();
    const calibration::PlantedLink link{35e-6, 9e9};
    const auto run = calibration::synthetic_ring_run(s, link);
    const auto traces = parse_all(run);

    const auto rows = calibration::attention_rows(traces, test::trace_classes(), s);
    std::size_t calls = 0;
    for (const auto& rank : calibration::ring_kernel_calls(s)) calls += rank.size();
    CHECK(rows.size() == 2 * 2 * calls);  // passes x steps x every rank's calls
    const auto fit = calibration::fit_kernel_curves(rows, *s.impl.kernel_model, s.hardware, base,
                                                    {"attention_efficiency", "attention_bwd_efficiency"});
    for (const auto& p : fit.parameters) {
      INFO(p.name);
      const double planted = p.name == "attention_efficiency" ? s.profile.attention_efficiency : s.profile.attention_bwd_efficiency;
      CHECK(p.value == Approx(planted).epsilon(0.02));
    }
    for (const auto& sc : fit.scores) CHECK(sc.held_out_mape < 0.01);

    const auto lf = calibration::fit_trace_link(traces, test::trace_classes());
    CHECK(lf.latency_identified);
    CHECK(lf.hop.bandwidth_bytes_per_s == Approx(link.bandwidth_bytes_per_s).epsilon(0.02));
    CHECK(lf.hop.latency_s == Approx(link.latency_s).epsilon(0.02));
    CHECK(lf.sync_excess_s == Approx(0).margin(1e-9));

    std::vector<calibration::TraceSummary> summaries;
    for (const auto& t : traces) summaries.push_back(calibration::summarize(t, test::trace_classes()));
    for (std::size_t r = 0; r < summaries.size(); ++r) {
      REQUIRE(summaries[r].steps.size() == 2);
      for (const auto& st : summaries[r].steps)
        CHECK(st.exposed_communication_us * 1e-6 == Approx(run.exposed_per_step[r]).margin(1e-8));
    }
    const auto check = calibration::check_trace(summaries, calibration::PredictedStep::of(models::predict(s)));
    const auto crit = static_cast<std::size_t>(check.critical_rank);
    CHECK(crit == static_cast<std::size_t>(std::max_element(run.attention_per_step.begin(), run.attention_per_step.end()) -
                                           run.attention_per_step.begin()));
    const auto& exposed = check.rows[4];
    CHECK(exposed.component == "exposed communication");
    CHECK(exposed.measured_s == Approx(run.exposed_per_step[crit]).margin(1e-8));
    CHECK_FALSE(check.diagnosis.empty());
  }
}

TEST_CASE("a trace that does not match the scenario is refused, naming rank and step", "[trace][from-trace]") {
  auto s = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 4, 32768, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  const auto traces = parse_all(calibration::synthetic_ring_run(s, {20e-6, 100e9}, 1));
  // The same traces read as an 8-device ring: four ranks' calls do not fit eight rounds.
  const auto wider = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 8, 65536, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  CHECK_THROWS_WITH(calibration::attention_rows(traces, test::trace_classes(), wider), Catch::Contains("rank 0 step 1 has 4 attention forward calls"));
  // A 2-device ring cannot hold rank 3.
  const auto narrow = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 2, 16384, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  CHECK_THROWS_WITH(calibration::attention_rows(traces, test::trace_classes(), narrow), Catch::Contains("outside the scenario's ring"));
}
