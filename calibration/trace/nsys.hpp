#pragma once
// Nsight Systems reports exported as SQLite (`nsys export --type sqlite`), read into the same
// Trace as a PyTorch profiler trace: kernels, copies and fills from the CUPTI activity tables,
// each kernel's launch time from the CUDA runtime table (by correlation id), the step ranges from
// NVTX ranges (`ProfilerStep#N`: a record_function range under PyTorch's emit_nvtx, or pushed by
// the loop itself; other names by a regular expression), the GPU's name from TARGET_INFO_GPU. The database is opened read-only and immutable: nothing is ever written.
#include <string>

#include "calibration/trace/trace.hpp"

namespace ringsim::calibration {

// The NVTX range text that marks a step; the first capture group is the step's number.
inline constexpr const char* kDefaultStepRegex = R"(ProfilerStep#(\d+))";

// Throws models::InputError (field "step-regex") unless `regex` is a valid ECMAScript regular
// expression of at most 1000 characters with at least one capture group.
void check_step_regex(const std::string& regex);

// Throws models::InputError naming the file and, where a value is wrong, the table and column
// ("CUPTI_ACTIVITY_KIND_KERNEL.start"): not a regular file, larger than kMaxTraceFileBytes, not
// an SQLite database, no CUPTI_ACTIVITY_KIND_KERNEL table (recorded without `-t cuda`), a NULL,
// negative or non-integer time, an end before its start, a kernel name missing from StringIds.
// Optional tables (memcpy, memset, runtime, NVTX, GPU info) may be absent.
[[nodiscard]] Trace read_nsys_sqlite(const std::string& path, const std::string& step_regex = kDefaultStepRegex);

}  // namespace ringsim::calibration
