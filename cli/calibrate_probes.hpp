#pragma once
// `ringsim calibrate --from-probes FILE --as NAME=HARDWARE,...`: point-to-point hops fitted from
// NCCL probes (calibration/link_probes.hpp), printed with their errors and written as
// configs/links/HARDWARE.json (--links-dir).
#include <cxxopts.hpp>

namespace ringsim::cli {

int calibrate_from_probes(const cxxopts::ParseResult& a);

}  // namespace ringsim::cli
