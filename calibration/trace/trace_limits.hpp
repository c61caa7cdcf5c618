#pragma once
// The bounds every trace reader and writer holds to, in one place (docs/robustness.md and
// docs/traces.md list them). Each is far past what a profiler writes and small enough that a
// small hostile file cannot take more than about 2 GiB of memory or wrap a number: a refusal
// names the file, the line or table, the field and the bound (models::InputError, exit code 2).
#include <cstdint>

namespace ringsim::calibration {

// A trace of a large job is tens to hundreds of MB; 16 GiB is past any profiler's output.
inline constexpr std::int64_t kMaxTraceFileBytes = std::int64_t{16} << 30;
// Inflated JSON text: 64 GiB would take minutes to read and bounds the run.
inline constexpr std::int64_t kMaxTraceTextBytes = std::int64_t{64} << 30;
// One JSON token with the whitespace before it. The JSON parser (nlohmann) holds a token and the
// whitespace before it whole in memory, so a gzip of 10 MB that inflates to 10 GB of spaces or
// of one string would take 10 GB (twice: the token and its copy for error messages). The longest
// strings profilers write (kernel signatures, Python stacks) are a few kB.
inline constexpr std::int64_t kMaxTraceTokenBytes = std::int64_t{16} << 20;
// Records kept from one trace: GPU operations, and separately CPU launches, communication
// records and step ranges. About 100 bytes each (names are shared, trace.hpp), so at most about
// 1 GB of operations; a 1 GB Kineto trace holds about a million.
inline constexpr std::int64_t kMaxTraceRecords = std::int64_t{1} << 23;
// Timestamps, in microseconds from any epoch: 9e15 us (285 years) is below 2^53, so every integer
// timestamp is exact in a double, and a difference of two of them cannot overflow int64.
inline constexpr double kMaxTraceTimeUs = 9e15;
// One operation's duration: 1e13 us is 115 days.
inline constexpr double kMaxTraceDurationUs = 1e13;

}  // namespace ringsim::calibration
