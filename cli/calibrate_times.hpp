#pragma once
// `ringsim calibrate --from-times FILE`: a joint fit of a flash-attention ring library's profiles
// to published attention times (data/cp_attention_times.csv, calibration/attention_times.hpp),
// with leave-one-group-out errors and 90 % intervals; writes one profile per implementation and
// GPU (--profiles-dir) and a per-row report (--report).
#include <cxxopts.hpp>

#include "models/catalog/resolve.hpp"

namespace ringsim::cli {

int calibrate_from_times(const cxxopts::ParseResult& a, const models::Catalog& catalog);

}  // namespace ringsim::cli
