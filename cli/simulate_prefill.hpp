#pragma once
// `ringsim simulate --phase prefill`: both prefill ring variants (pass-KV, pass-Q) as discrete
// events (sim/prefill_sim.hpp), each beside the analytic prediction of the same prefill.
#include <string>

#include <cxxopts.hpp>

#include "models/catalog/catalog.hpp"
#include "sim/prefill_sim.hpp"

namespace ringsim::cli {

// `options` carries --sync, --topology and --placement; the scenario flags and --cached-tokens
// are read from `r` as `predict --phase prefill` reads them.
[[nodiscard]] std::string simulate_prefill_text(const cxxopts::ParseResult& r, const models::Catalog& catalog,
                                                const sim::PrefillSimOptions& options, const std::string& format);

}  // namespace ringsim::cli
