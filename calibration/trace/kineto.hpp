#pragma once
// PyTorch profiler (Kineto) traces: Chrome trace-event JSON, one file per rank, plain or
// gzip-compressed. Both schemas seen in the wild are read: integer microsecond `ts` (older
// Kineto) and fractional `ts` with `baseTimeNanoseconds` (newer); `distributedInfo` gives the
// rank; `deviceProperties` the GPU. Events the summary does not use (CPU operators other than
// steps and communication records, flow arrows, counters) are dropped while parsing, and the
// text is streamed, so a large trace costs memory for its GPU operations only.
#include <string>

#include "calibration/trace/trace.hpp"
#include "calibration/trace/trace_text.hpp"

namespace ringsim::calibration {

// Throws models::InputError naming the file, and the line and field where the JSON or an event
// is malformed (no traceEvents array, a GPU event without a finite ts or non-negative dur), and
// when the trace holds no GPU operation at all (recorded without CUDA activity).
// The file is streamed (never held whole); `progress` hears how much of it was read.
[[nodiscard]] Trace read_kineto_trace(const std::string& path, const TraceProgress& progress = {});
// The same for text already in memory (`file` names it in errors).
[[nodiscard]] Trace parse_kineto_trace(const std::string& text, const std::string& file);

}  // namespace ringsim::calibration
