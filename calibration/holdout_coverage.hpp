#pragma once
// How well held-out intervals hold where a user's group (GPU, mesh, table, head configuration,
// derived pair) was never measured: each group's held-out log errors judged by a log-normal band
// whose spread is the root mean square of the other groups' errors only. One rule for every fit
// that reports such a coverage (ring times, derived times, speedups by mesh).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ringsim::calibration {

struct GroupedCoverage {
  std::int64_t covered = 0, points = 0;
  double share = 0;  // covered / points; NaN with fewer than two groups holding points
};

// `log_errors`: log(held-out prediction / measurement) per group.
[[nodiscard]] GroupedCoverage other_groups_coverage(const std::map<std::string, std::vector<double>>& log_errors,
                                                    double level = 0.9);

}  // namespace ringsim::calibration
