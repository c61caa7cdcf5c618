#include "cli/work_summary.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "cli/scenario_options.hpp"
#include "models/workload/documents.hpp"
#include "models/program/program.hpp"

namespace ringsim::cli {

std::string imbalance_line(const std::vector<std::int64_t>& pairs, const std::string& unit) {
  if (pairs.empty()) return {};
  const auto it = std::max_element(pairs.begin(), pairs.end());
  const double mean =
      static_cast<double>(std::accumulate(pairs.begin(), pairs.end(), std::int64_t{0})) / static_cast<double>(pairs.size());
  return fmt::format("busiest {} {}: {} pairs, mean {}: {:.2f}x the mean", unit, it - pairs.begin(),
                     human_count(static_cast<double>(*it)), human_count(mean),
                     mean > 0 ? static_cast<double>(*it) / mean : 1.0);
}

std::string documents_line(const models::Documents& docs) {
  auto sorted = docs.lengths;
  std::sort(sorted.begin(), sorted.end());
  const double total = static_cast<double>(docs.total());
  return fmt::format("{} documents, lengths {}..{} (median {}, mean {}); the longest holds {:.1f}% of the tokens",
                     sorted.size(), sorted.front(), sorted.back(), human_count(static_cast<double>(sorted[sorted.size() / 2])),
                     human_count(total / static_cast<double>(sorted.size())),
                     100.0 * static_cast<double>(sorted.back()) / total);
}

}  // namespace ringsim::cli
