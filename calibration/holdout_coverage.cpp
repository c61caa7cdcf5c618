#include "calibration/holdout_coverage.hpp"

#include <cmath>
#include <limits>

#include "models/analytic/interval.hpp"

namespace ringsim::calibration {

GroupedCoverage other_groups_coverage(const std::map<std::string, std::vector<double>>& log_errors, double level) {
  GroupedCoverage c;
  c.share = std::numeric_limits<double>::quiet_NaN();
  std::size_t groups = 0;
  for (const auto& [g, v] : log_errors) groups += !v.empty();
  if (groups < 2) return c;
  const double z = models::two_sided_normal_quantile(level);
  for (const auto& [g, own] : log_errors) {
    double sq = 0;
    std::int64_t m = 0;
    for (const auto& [other, v] : log_errors)
      if (other != g)
        for (const double x : v) {
          sq += x * x;
          ++m;
        }
    const double half = z * std::sqrt(sq / static_cast<double>(m));
    for (const double x : own) {
      c.covered += std::abs(x) <= half;
      ++c.points;
    }
  }
  c.share = static_cast<double>(c.covered) / static_cast<double>(c.points);
  return c;
}

}  // namespace ringsim::calibration
