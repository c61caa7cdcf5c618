#include "cli/predict_rows.hpp"

#include <fmt/format.h>

#include "cli/long_run.hpp"
#include "models/analytic/gradient_sync.hpp"
#include "cli/predict_intervals.hpp"
#include "cli/progress.hpp"
#include "sim/step.hpp"

namespace ringsim::cli {

const char* engine_name(Engine e) { return e == Engine::Des ? "des" : "analytic"; }

NotRunnable not_runnable_row(const RefusedRun& refused) {
  const auto& e = refused.error;
  return {refused.spec.cp.text(), refused.spec.layout.text(),
          (e.field().empty() ? std::string() : "field '" + e.field() + "': ") + e.message()};
}

void predict_row(LayoutResult& r, Engine engine, const std::string& topology) {
  r.prediction = models::predict(r.scenario);
  const auto analytic_prediction = r.prediction;
  if (engine == Engine::Des) {
    sim::StepOptions options;
    options.topology = topology;
    announce_simulation("ringsim predict --engine des", r.scenario, options, kDefaultMaxEvents,
                        "ringsim simulate --max-events runs larger steps");
    ProgressBar progress("passes", "ringsim predict: simulating " + r.layout);
    options.progress = [&](std::int64_t done, std::int64_t total) { progress.update(done, total); };
    const auto sim = sim::simulate_step(r.scenario, options);
    r.prediction.step_s = sim.step_s;
    r.prediction.tokens_per_s = sim.tokens_per_s;
    r.prediction.mfu = sim.mfu;
  }
  const auto iv = time_intervals(r, analytic_prediction);
  r.step = iv.step;
  r.attention_fwd = iv.attention_fwd;
  r.attention_bwd = iv.attention_bwd;
}

std::string Training::text(const models::Profile& p) const {
  std::string pp;
  if (pipeline.pipelined())
    pp = fmt::format("pp {} ({}{}), ", pipeline.stages, pipeline.spec(),
                     pipeline.micro_batches > 1 ? fmt::format(", {} micro-batches", pipeline.micro_batches) : std::string());
  else if (pipeline.micro_batches > 1)
    pp = fmt::format("{} micro-batches, ", pipeline.micro_batches);
  return pp + fmt::format("dp {}, {}, {} recomputation", dp,
                     zero == models::Sharding::None ? std::string("model states replicated (ZeRO-0)")
                                                    : fmt::format("ZeRO-{} over dp x sp", static_cast<int>(zero)),
                     models::to_string(policy(p))) + ", " + memory.text();
}

void prepare_training(LayoutResult& r, const Training& t) {
  models::apply_recompute(r.scenario.profile, t.policy(r.scenario.profile));
  models::apply_precision(r.scenario.profile, t.memory.precision);
  r.scenario.rebuild_cost();  // the cost model keeps the profile's numbers, not a reference
}

void apply_training(LayoutResult& r, const Training& t) {
  auto& p = r.prediction;
  const auto train = models::training_step(r.scenario, p, t);
  r.train = train;
  r.memory = train.memory;
  p.memory_bytes = train.memory.total_bytes;
  p.fits_memory = train.memory.fits;
  p.tokens_per_s = train.tokens_per_s;
  p.mfu = train.mfu;
  p.step_s = train.step_s;
  if (r.step.available) r.step = {r.step.lo * train.scale, r.step.hi * train.scale, true};
}

LayoutResult run_one(models::ScenarioSpec spec, const models::LayoutSpec& layout, const models::Catalog& catalog,
                     Engine engine) {
  spec.layout = layout;
  LayoutResult r{layout.text(), models::resolve(spec, catalog)};
  predict_row(r, engine);
  return r;
}

}  // namespace ringsim::cli
