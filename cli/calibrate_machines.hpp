#pragma once
// `ringsim calibrate --from-machine-probes FILE [--machines DIR] [--machine NAME,...]`: each probed
// machine's free resource capacities fitted to its probe rows (calibration/machine_probes.hpp),
// printed with their standard errors and each pattern's in-sample and leave-one-row-out time
// error; --machines-out DIR writes the fitted descriptions (DIR/NAME.json, all or none),
// --report a CSV of every row's published, fitted and held-out value.
#include <cxxopts.hpp>

namespace ringsim::cli {

int calibrate_from_machine_probes(const cxxopts::ParseResult& a);

}  // namespace ringsim::cli
