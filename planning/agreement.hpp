#pragma once
// Ranking agreement between predictions and measurements: Kendall's tau-b over every pair of
// items, or over the pairs inside each group (the layouts of one configuration: does the plan
// order them as the measurements do?).
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::planning {

struct RankAgreement {
  std::int64_t items = 0;
  std::int64_t pairs = 0;          // pairs compared (within groups when grouped)
  std::int64_t concordant = 0;
  std::int64_t discordant = 0;
  std::int64_t ties_measured = 0;  // pairs tied in the measurement only
  std::int64_t ties_predicted = 0; // pairs tied in the prediction only
  double tau_b = 0;                // (C - D) / sqrt((C + D + Tm) (C + D + Tp)); 0 when undefined
};

// x: measured, y: predicted, group: one label per item (empty: all items form one group). O(n^2)
// per group; published tables are small.
[[nodiscard]] RankAgreement kendall_tau_b(const std::vector<double>& measured, const std::vector<double>& predicted,
                                          const std::vector<std::string>& group = {});

}  // namespace ringsim::planning
