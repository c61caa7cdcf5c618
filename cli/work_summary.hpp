#pragma once
// Per-device attention work of any strategy, for the terminal views (show, workload): a ring's
// blocks summed over rounds, a non-ring strategy's kernel calls, and packed documents at a glance.
#include <cstdint>
#include <string>
#include <vector>

#include "models/workload/documents.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::cli {

// "busiest device 3: 1.2 M pairs, mean 0.9 M: 1.33x the mean".
[[nodiscard]] std::string imbalance_line(const std::vector<std::int64_t>& pairs, const std::string& unit);

// "412 documents, lengths 16..40960 (median 1.2 k, mean 2.5 k); the longest holds 3.1% of the tokens".
[[nodiscard]] std::string documents_line(const models::Documents& docs);

}  // namespace ringsim::cli
