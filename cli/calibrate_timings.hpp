#pragma once
// `ringsim calibrate --from-timings FILE --hardware HW`: the tile-time model of a profile fitted
// to measured kernel launches (docs/timings-format.md, calibration/timings.hpp), each term with
// its held-out error without it; writes the profile (-o).
#include <cxxopts.hpp>

#include "models/catalog/resolve.hpp"

namespace ringsim::cli {

int calibrate_from_timings(const cxxopts::ParseResult& a, const models::Catalog& catalog);

}  // namespace ringsim::cli
