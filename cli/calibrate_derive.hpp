#pragma once
// `ringsim calibrate --derive-from IMPL/HARDWARE --hardware TARGET -o FILE`: an uncalibrated
// profile for hardware without measurements, from another hardware's fitted one.
#include <cxxopts.hpp>

#include "models/catalog/resolve.hpp"

namespace ringsim::cli {

int calibrate_derive(const cxxopts::ParseResult& a, const models::Catalog& catalog);

}  // namespace ringsim::cli
