#pragma once
// `ringsim calibrate --from-nccl-tests FILE[,FILE...] --hop intra-node|inter-node --hardware NAME`:
// one point-to-point hop fitted from nccl-tests output (calibration/nccl_tests.hpp), per file and
// over all files together, printed with its errors; --links-dir writes or updates
// DIR/HARDWARE.json (configs/links format, models::PointToPoint), keeping the other hop type.
#include <cxxopts.hpp>

namespace ringsim::cli {

int calibrate_from_nccl_tests(const cxxopts::ParseResult& a);

}  // namespace ringsim::cli
