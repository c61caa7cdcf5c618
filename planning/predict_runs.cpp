#include "planning/predict_runs.hpp"

#include "models/analytic/analytic.hpp"
#include "models/implementations/strategy.hpp"

namespace ringsim::planning {

using models::InputError;

void choose_implementation(RunRequest& a, const models::Catalog& catalog) {
  auto& s = a.base;
  const auto hw = s.hardware_file.empty() ? catalog.hardware(s.hardware) : models::Hardware::load_file(s.hardware_file);
  if (a.layouts_given) {
    s.impl = catalog.choose_implementation(s, hw, a.layouts);
  } else {
    // The default list shrinks to the layouts the implementation runs with this mask and
    // strategy (a ring library's varlen functions take only some layouts for packed documents).
    s.impl = catalog.choose_implementation(s, hw, {});
    const auto im = catalog.implementation(s.impl);
    const auto mask = models::effective_mask(s);
    std::vector<models::LayoutSpec> offered;
    for (const auto& l : a.layouts)
      if (im.offers(hw.kind, l, mask, s.cp)) offered.push_back(l);
    // None: the implementation's own reason for the first default (hardware, mask, strategy)
    // when it has one, else that no default layout runs.
    if (offered.empty()) {
      im.check_offers(hw.kind, a.layouts.front(), mask, s.cp);
      throw InputError({}, 0, "layout", "implementation " + im.name + " offers none of the default layouts; name the layouts to compare");
    }
    a.layouts = std::move(offered);
  }
  s.layout = a.layouts.front();
}

std::vector<models::ScenarioSpec> expand_runs(const RunRequest& request, const models::Catalog& catalog,
                                              std::vector<RefusedRun>* refused) {
  std::vector<models::ScenarioSpec> runs;
  for (const auto& cp : request.cps) {
    RunRequest one = request;
    one.base.cp = cp;
    try {
      choose_implementation(one, catalog);
    } catch (const InputError& e) {
      if (!refused) throw;
      auto spec = one.base;
      spec.layout = one.layouts.front();
      refused->push_back({spec, e});
      continue;
    }
    std::size_t count = one.layouts.size();
    if (cp.kind == models::StrategyKind::Ulysses && !request.layouts_given) count = 1;
    for (std::size_t i = 0; i < count; ++i) {
      auto spec = one.base;
      spec.layout = one.layouts[i];
      runs.push_back(std::move(spec));
    }
  }
  return runs;
}

namespace {

// The analytic step of the scenario under another profile.
double analytic_step(models::ResolvedScenario& s, const models::Profile& p) {
  return models::under_profile(s, p, [](const models::ResolvedScenario& r) { return models::predict(r).step_s; });
}

}  // namespace

models::Interval speedup_interval(models::ResolvedScenario& first, models::ResolvedScenario& row, double value) {
  if (&first == &row) return {1.0, 1.0, !first.profile.uncertainty.empty()};
  if (row.profile.name != first.profile.name) return {};
  const double analytic = models::predict(first).step_s / models::predict(row).step_s;
  auto iv = models::prediction_interval(row.profile, "ratio", analytic, [&](const models::Profile& p) {
    return analytic_step(first, p) / analytic_step(row, p);
  });
  // The simulator's or the trained step moves the ratio; its relative width stays.
  if (iv.available) {
    iv.lo *= value / analytic;
    iv.hi *= value / analytic;
  }
  return iv;
}

}  // namespace ringsim::planning
