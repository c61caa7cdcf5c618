#pragma once
// `ringsim predict --scenarios FILE`: one output row per input row, input columns untouched,
// then the predictions (ring and striped on one implementation, their speedup with its interval,
// and the step of the row's own layout or strategy) as csv, json or a readable table.
#include <string>

#include <cxxopts.hpp>

#include "cli/predict_rows.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::cli {

// Errors name the file and the row's line.
[[nodiscard]] std::string run_batch(const std::string& path, const std::string& format, const models::Catalog& catalog,
                                    const cxxopts::ParseResult& args, Engine engine);

}  // namespace ringsim::cli
