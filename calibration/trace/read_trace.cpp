#include "calibration/trace/read_trace.hpp"

#include "calibration/trace/kineto.hpp"
#include "calibration/trace/trace_file.hpp"
#include "models/io/error.hpp"

namespace ringsim::calibration {

TraceFormat trace_format(const std::string& path) {
  // A file that cannot be opened is left to the JSON reader, which names the problem.
  try {
    const TraceFile file(path);
    return is_sqlite_head(file.head()) ? TraceFormat::NsysSqlite : TraceFormat::KinetoJson;
  } catch (const models::InputError&) {
    return TraceFormat::KinetoJson;
  }
}

Trace read_trace(const std::string& path, const TraceProgress& progress, const std::string& step_regex) {
  // The option is checked whatever the files are, so a bad regex is never silently unused.
  check_step_regex(step_regex);
  if (trace_format(path) == TraceFormat::NsysSqlite) return read_nsys_sqlite(path, step_regex);
  return read_kineto_trace(path, progress);
}

}  // namespace ringsim::calibration
