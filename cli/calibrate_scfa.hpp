#pragma once
// `ringsim calibrate --from-scfa FILE`: a profile fitted to published SCFA and FlashAttention-1
// times (calibration/scfa.hpp), on a log of forward+backward time; prints each row's error and
// writes the profile (-o) and a per-row report (--report).
#include <cxxopts.hpp>

#include "models/catalog/resolve.hpp"

namespace ringsim::cli {

int calibrate_from_scfa(const cxxopts::ParseResult& a, const models::Catalog& catalog);

}  // namespace ringsim::cli
