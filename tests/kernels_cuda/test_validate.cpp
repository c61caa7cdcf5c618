// `ringsim validate`'s core on a tiny ring (GPU only; gpu_skip.cpp exits 77 without one): every
// round measured, the ring's view assembled from the per-device times, the prediction beside it.
#include <algorithm>

#include <catch2/catch.hpp>

#include "calibration/cupti/collector.hpp"
#include "cli/validate_core.hpp"
#include "models/io/error.hpp"
#include "models/catalog/resolve.hpp"

namespace models = ringsim::models;
using ringsim::cli::run_validation;
using ringsim::cli::ValidateOptions;

TEST_CASE("validate times every (round, device) of a small ring", "[gpu][validate]") {
  ringsim::calibration::CuptiCollector collector;
  const models::Catalog catalog;
  for (const char* layout : {"contiguous", "striped", "zigzag"}) {
    models::ScenarioSpec spec;
    spec.model = "attn:4:2:64";
    spec.sp = 4;
    spec.n_seq = 1024;
    spec.layout = ringsim::models::LayoutSpec::parse(layout);
    spec.tile = models::TileShape{64, 64};
    const auto s = models::resolve(spec, catalog);
    ValidateOptions o;
    o.repeats = 3;
    const auto v = run_validation(s, o, collector);
    INFO(layout);
    REQUIRE(v.rounds.size() == 4);
    CHECK(v.q_heads == 4);
    CHECK(v.kv_heads == 2);
    double step = 0;
    for (const auto& r : v.rounds) {
      REQUIRE(r.device_s.size() == 4);
      CHECK(r.measured_max_s == *std::max_element(r.device_s.begin(), r.device_s.end()));
      // Causal rings always have work in every round on some device.
      CHECK(r.measured_max_s > 0);
      CHECK(r.predicted_max_s > 0);
      step += r.measured_max_s;
    }
    CHECK(v.measured_step_s == Approx(step));
  }
}

TEST_CASE("validate refuses what the kernel cannot run before touching the GPU", "[gpu][validate]") {
  ringsim::calibration::CuptiCollector collector;
  const models::Catalog catalog;
  models::ScenarioSpec spec;
  spec.model = "attn:4:4:96";
  spec.sp = 2;
  spec.n_seq = 512;
  CHECK_THROWS_AS(run_validation(models::resolve(spec, catalog), {}, collector), models::InputError);
}
