#pragma once
// PyTorch profiler (Kineto) traces: Chrome trace-event JSON, one file per rank, plain or
// gzip-compressed. Both schemas seen in the wild are read: integer microsecond `ts` (older
// Kineto) and fractional `ts` with `baseTimeNanoseconds` (newer); `distributedInfo` gives the
// rank; `deviceProperties` the GPU. Events the summary does not use (CPU operators other than
// steps and communication records, flow arrows, counters) are dropped while parsing, and the
// text is streamed through a SAX handler that builds only the fields read, so a large trace
// costs memory for its GPU operations only and time in proportion to its text.
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibration/trace/trace.hpp"
#include "calibration/trace/trace_limits.hpp"
#include "calibration/trace/trace_text.hpp"

namespace ringsim::calibration {

// Throws models::InputError naming the file, and the line and field where the JSON or an event
// is malformed (no traceEvents array, a GPU event without a ts or dur within trace_limits.hpp's
// bounds, an id past int64), when the trace holds no GPU operation at all (recorded without CUDA
// activity), and past any bound of trace_limits.hpp (a token, the records kept).
// The file is streamed (never held whole); `progress` hears how much of it was read.
[[nodiscard]] Trace read_kineto_trace(const std::string& path, const TraceProgress& progress = {});

// What parsing cost, for the tests: SAX events handled (each constant work) and the most JSON
// values held at once.
struct KinetoParseWork {
  std::int64_t sax_events = 0;
  std::size_t peak_values = 0;
};
// The same for text already in memory (`file` names it in errors); `max_records` lowers the
// bound of records kept (the tests' way to reach it without a gigabyte of text).
[[nodiscard]] Trace parse_kineto_trace(const std::string& text, const std::string& file, KinetoParseWork* work = nullptr,
                                       std::int64_t max_records = kMaxTraceRecords);

}  // namespace ringsim::calibration
