#pragma once
// `ringsim calibrate --from-speedups FILE --hardware HW`: the --free parameters of a profile
// fitted so that predicted striped-over-ring speedups reproduce published ones
// (calibration/tables.hpp), with leave-one-mesh-out and leave-one-n_seq-out errors; writes the
// profile (-o), a per-row report (--report) and a chart of speedup against n_seq (--plot).
#include <cxxopts.hpp>

#include "models/catalog/resolve.hpp"

namespace ringsim::cli {

int calibrate_from_speedups(const cxxopts::ParseResult& a, const models::Catalog& catalog);

}  // namespace ringsim::cli
