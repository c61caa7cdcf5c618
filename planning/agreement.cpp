#include "planning/agreement.hpp"

#include <cmath>
#include <stdexcept>

namespace ringsim::planning {

RankAgreement kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y, const std::vector<std::string>& g) {
  if (x.size() != y.size() || (!g.empty() && g.size() != x.size()))
    throw std::invalid_argument("kendall_tau_b: measured, predicted and groups differ in length");
  RankAgreement a;
  a.items = static_cast<std::int64_t>(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j) {
      if (!g.empty() && g[i] != g[j]) continue;
      ++a.pairs;
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      if (dx == 0 && dy == 0) continue;  // tied in both: counts in neither denominator term
      if (dx == 0) ++a.ties_measured;
      else if (dy == 0) ++a.ties_predicted;
      else if ((dx > 0) == (dy > 0)) ++a.concordant;
      else ++a.discordant;
    }
  const double c = static_cast<double>(a.concordant), d = static_cast<double>(a.discordant);
  const double den = std::sqrt((c + d + static_cast<double>(a.ties_measured)) * (c + d + static_cast<double>(a.ties_predicted)));
  a.tau_b = den > 0 ? (c - d) / den : 0;
  return a;
}

}  // namespace ringsim::planning
