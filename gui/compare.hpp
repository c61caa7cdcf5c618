#pragma once
// The Compare view's computation, as plain data (no Qt): one scenario under several strategies
// (or implementations), each predicted with its 90 % interval and its step cut into parts, or,
// where it cannot run there, the reason. The same rows `ringsim predict --cp A,B,...` prints.
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "models/analytic/analytic.hpp"
#include "models/analytic/breakdown.hpp"
#include "models/analytic/interval.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::gui {

struct CompareRow {
  std::string strategy, impl, kernel, layout;  // kernel: the attention kernel impl calls here
  std::optional<std::string> refused;  // why it cannot run here (then nothing else is set)
  models::Prediction prediction;
  models::StepBreakdown parts;  // the step in parts (one pass: the Compare view trains nothing)
  models::Interval step;  // unavailable without a fitted uncertainty in the profile
  std::string why;
};

// Each of `strategies` on `base`, on one attention kernel where one runs them all: the kernel of
// the form's implementation when `base` names one (that implementation where it offers the
// strategy, else the most preferred library calling the same kernel), else the kernel `ringsim
// predict --cp A,B` would compare on; a strategy no library runs on it gets the most preferred
// production library that runs it. Each row at the fastest layout its library offers of base's
// layout, zigzag, striped and contiguous (Ulysses: the first it offers), named in the row.
// Returns what was done when `cancel` is seen between strategies.
[[nodiscard]] std::vector<CompareRow> compare_strategies(const models::ScenarioSpec& base,
                                                         const std::vector<models::Strategy>& strategies,
                                                         const models::Catalog& catalog, const std::atomic<bool>& cancel);

}  // namespace ringsim::gui
