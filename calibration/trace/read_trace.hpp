#pragma once
// One entry point for every trace format `trace summarize` reads: the format is told by the
// file's first bytes, never its name (a report renamed .json, a trace without extension).
// SQLite databases (Nsight Systems' `nsys export --type sqlite`) begin with "SQLite format 3\0";
// everything else is read as a PyTorch profiler (Kineto) trace, plain or gzip-compressed.
#include <string>

#include "calibration/trace/nsys.hpp"
#include "calibration/trace/trace.hpp"
#include "calibration/trace/trace_text.hpp"

namespace ringsim::calibration {

enum class TraceFormat { KinetoJson, NsysSqlite };

// The format of the file at `path` by its first 16 bytes; KinetoJson when it cannot be read
// (the reader then names the problem).
[[nodiscard]] TraceFormat trace_format(const std::string& path);

// `progress` hears the bytes read of a JSON trace (an SQLite export is queried, not streamed);
// `step_regex` picks the NVTX ranges that are steps in an Nsight Systems export (a Kineto trace
// keeps its own ProfilerStep#N events). Errors as read_kineto_trace and read_nsys_sqlite.
[[nodiscard]] Trace read_trace(const std::string& path, const TraceProgress& progress = {},
                               const std::string& step_regex = kDefaultStepRegex);

}  // namespace ringsim::calibration
