#include "gui/compare.hpp"

#include "gui/error_text.hpp"
#include "models/io/error.hpp"
#include "planning/predict_runs.hpp"

namespace ringsim::gui {

namespace {

// Per strategy, the implementation its row runs, on one attention kernel where one runs them all:
// with the form's implementation named, that kernel (the form's implementation where it offers
// the strategy, else the most preferred library calling the same kernel); without, the kernel
// `ringsim predict --cp A,B --layout L` compares on (planning::expand_runs). Empty where neither
// applies: that strategy's own default.
std::vector<std::string> row_implementations(const models::ScenarioSpec& base, const std::vector<models::Strategy>& strategies,
                                             const models::Catalog& catalog) {
  std::vector<std::string> out(strategies.size());
  planning::RunRequest request;
  request.base = base;
  request.base.impl.clear();
  request.layouts = {base.layout};
  request.layouts_given = true;
  request.cps = strategies;
  try {
    if (!base.impl.empty()) {
      const auto form = catalog.implementation(base.impl);
      const auto on = planning::implementations_on_kernel(request, catalog, planning::kernel_on(form, catalog.hardware(base.hardware)));
      for (std::size_t i = 0; i < strategies.size(); ++i) out[i] = form.offers_strategy(strategies[i]) ? form.name : on[i];
      return out;
    }
    std::vector<planning::RefusedRun> refused;
    for (const auto& run : planning::expand_runs(request, catalog, &refused))
      for (std::size_t i = 0; i < strategies.size(); ++i)
        if (out[i].empty() && run.cp.text() == strategies[i].text()) out[i] = run.impl;
  } catch (const models::InputError&) {
    // Each row reports its own reason below.
  }
  return out;
}

}  // namespace

std::vector<CompareRow> compare_strategies(const models::ScenarioSpec& base, const std::vector<models::Strategy>& strategies,
                                           const models::Catalog& catalog, const std::atomic<bool>& cancel) {
  std::vector<CompareRow> rows;
  const auto impls = row_implementations(base, strategies, catalog);
  for (std::size_t i = 0; i < strategies.size(); ++i) {
    const auto& st = strategies[i];
    if (cancel) break;
    CompareRow row;
    row.strategy = st.text();
    row.layout = base.layout.text();
    try {
      auto spec = base;
      spec.cp = st;
      const auto hw = catalog.hardware(spec.hardware);
      spec.impl = !impls[i].empty() ? impls[i] : catalog.choose_implementation(spec, hw, {spec.layout}, true);
      row.impl = spec.impl;
      row.kernel = planning::kernel_on(catalog.implementation(spec.impl), hw);
      auto s = models::resolve(spec, catalog);
      row.prediction = models::predict(s);
      row.parts = models::pass_breakdown(row.prediction);
      row.step = models::time_intervals_around(s, row.prediction).step;
      row.why = models::why(row.prediction, row.parts);
    } catch (const models::InputError& e) {
      row.refused = field_message(e);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ringsim::gui
