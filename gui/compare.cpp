#include "gui/compare.hpp"

#include "gui/error_text.hpp"
#include "models/io/error.hpp"

namespace ringsim::gui {

std::vector<CompareRow> compare_strategies(const models::ScenarioSpec& base, const std::vector<models::Strategy>& strategies,
                                           const models::Catalog& catalog, const std::atomic<bool>& cancel) {
  std::vector<CompareRow> rows;
  for (const auto& st : strategies) {
    if (cancel) break;
    CompareRow row;
    row.strategy = st.text();
    row.layout = base.layout.text();
    try {
      auto spec = base;
      spec.cp = st;
      const auto hw = catalog.hardware(spec.hardware);
      // The form's implementation where it runs this strategy; otherwise what a user would deploy.
      if (spec.impl.empty() || !catalog.implementation(spec.impl).offers_strategy(st))
        spec.impl = catalog.choose_implementation(spec, hw, {spec.layout}, true);
      row.impl = spec.impl;
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
