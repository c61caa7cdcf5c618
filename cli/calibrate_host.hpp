#pragma once
// `ringsim calibrate --from-host-steps FILE [--impl IMPL] [--hardware HW [--profile P] -o OUT]`:
// the host's seconds per ring step and per attention call, per pass (calibration/host_steps.hpp),
// fitted on wall times of a ring library's step loop where the GPU's work is negligible; printed
// with standard errors and leave-one-run-out and leave-one-layout-out errors. With -o, the terms
// are written into the (HW, IMPL) profile (or --profile): the host of that machine when the file
// measured it, otherwise a stand-in the provenance notes name.
#include <cxxopts.hpp>

#include "models/catalog/catalog.hpp"

namespace ringsim::cli {

int calibrate_from_host_steps(const cxxopts::ParseResult& a, const models::Catalog& catalog);

}  // namespace ringsim::cli
