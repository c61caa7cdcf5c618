#pragma once
// `ringsim calibrate --from-kernels FILE --as GPU=HARDWARE,...`: the flash kernel family's
// efficiencies and per-CTA cost fitted per GPU on single-kernel timings
// (calibration/kernel_curves.hpp), printed with standard errors and leave-one-shape-group-out
// errors; --report writes every row's measured, fitted and held-out time.
#include <cxxopts.hpp>

#include "models/catalog/catalog.hpp"

namespace ringsim::cli {

int calibrate_from_kernels(const cxxopts::ParseResult& a, const models::Catalog& catalog);

}  // namespace ringsim::cli
