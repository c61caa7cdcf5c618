#pragma once
// The 90 % prediction intervals of `ringsim predict`'s rows: the profile's fitted uncertainty
// (models/analytic/interval.hpp) carried through the analytic model, for each row's step and
// for each row's speedup over the first.
#include <vector>

#include "cli/predict_rows.hpp"
#include "models/analytic/interval.hpp"

namespace ringsim::cli {

// Intervals come from the profile's fitted uncertainty carried through the analytic model; a
// simulated step keeps the analytic interval's relative width. `analytic`: the row's analytic prediction.
[[nodiscard]] models::TimeIntervals time_intervals(LayoutResult& r, const models::Prediction& analytic);

// The speedup of every layout over the first (first.step / this.step) and its interval.
void with_speedups(std::vector<LayoutResult>& results);

}  // namespace ringsim::cli
