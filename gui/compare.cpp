#include "gui/compare.hpp"

#include "gui/error_text.hpp"
#include "models/io/error.hpp"
#include "planning/predict_runs.hpp"

#include <optional>

namespace ringsim::gui {

namespace {

// The layouts each strategy is tried with: the form's layout A first, then the balanced ones and
// contiguous blocks; a row shows the fastest its library runs (Ulysses': the first, its work does
// not depend on the layout).
std::vector<models::LayoutSpec> candidate_layouts(const models::LayoutSpec& first) {
  std::vector<models::LayoutSpec> out{first};
  for (const char* name : {"zigzag", "striped", "contiguous"})
    if (const auto l = models::LayoutSpec::parse(name); l.text() != first.text()) out.push_back(l);
  return out;
}

planning::RunRequest compare_request(const models::ScenarioSpec& base, const std::vector<models::Strategy>& strategies) {
  planning::RunRequest request;
  request.base = base;
  request.base.impl.clear();
  request.layouts = candidate_layouts(base.layout);
  request.layouts_given = false;  // any of them: each library keeps those it offers
  request.cps = strategies;
  return request;
}

// Per strategy, the implementation its row runs, on one attention kernel where one runs them all:
// with the form's implementation named, that kernel (the form's implementation where it offers
// the strategy, else the most preferred library calling the same kernel); without, the kernel
// `ringsim predict --cp A,B` compares on (planning::expand_runs). Empty where neither applies:
// that strategy's own default.
std::vector<std::string> row_implementations(const models::ScenarioSpec& base, const std::vector<models::Strategy>& strategies,
                                             const models::Catalog& catalog) {
  std::vector<std::string> out(strategies.size());
  const auto request = compare_request(base, strategies);
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
  const auto layouts = candidate_layouts(base.layout);
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
      spec.impl = !impls[i].empty() ? impls[i] : catalog.choose_implementation(spec, hw, {}, true);
      const auto im = catalog.implementation(spec.impl);
      row.impl = spec.impl;
      row.kernel = planning::kernel_on(im, hw);
      std::optional<models::ResolvedScenario> best;
      std::optional<models::InputError> first_error;  // a layout that does not fit the scenario
      for (const auto& l : layouts) {
        spec.layout = l;
        if (!im.offers(hw.kind, l, models::effective_mask(spec), st)) continue;
        try {
          auto s = models::resolve(spec, catalog);
          auto p = models::predict(s);
          if (!best || p.step_s < row.prediction.step_s) {
            best = std::move(s);
            row.prediction = p;
            row.layout = l.text();
          }
        } catch (const models::InputError& e) {
          // Another layout may still run (a length zigzag's chunks do not divide, say).
          if (!first_error) first_error = e;
          continue;
        }
        if (st.kind == models::StrategyKind::Ulysses) break;
      }
      if (!best) {
        if (first_error) throw *first_error;
        // None runs: the library's own reason for the form's layout.
        spec.layout = base.layout;
        im.check_offers(hw.kind, spec.layout, models::effective_mask(spec), st);
        throw models::InputError({}, 0, "layout", im.name + " runs none of the layouts compared");
      }
      row.parts = models::pass_breakdown(row.prediction);
      row.step = models::time_intervals_around(*best, row.prediction).step;
      row.why = models::why(row.prediction, row.parts);
    } catch (const models::InputError& e) {
      row.refused = field_message(e);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace ringsim::gui
