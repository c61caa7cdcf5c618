#pragma once
// Exports of a simulated step: the Chrome Trace Event format (opens in Perfetto and
// chrome://tracing; docs/simulator.md) and the per-(device, round) matrices as CSV.
#include <string>

#include "sim/step.hpp"

namespace ringsim::sim {

// One JSON document: {"traceEvents": [...], "displayTimeUnit": "ns", "metadata": {...}}, with a
// thread-name record per lane and a complete ("X") event per span, times in microseconds.
[[nodiscard]] std::string chrome_trace_json(const StepResult& r);

// device,round,compute_s,wait_s,kv_transfer_s (summed over layers and both passes).
[[nodiscard]] std::string matrices_csv(const StepResult& r);

}  // namespace ringsim::sim
