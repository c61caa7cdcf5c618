#pragma once
// A trace file as a stream of JSON text, plain or gzip-compressed (PyTorch's profiler writes
// .json.gz when asked; zlib tells the two apart by gzip's magic bytes, not the name). The text
// is never held whole: a trace of a large job is gigabytes of JSON, and the reader keeps only the
// GPU operations it extracts. Both sizes are bounded while reading: the file on disk, and the
// inflated text, so a small hostile archive cannot run forever.
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <streambuf>
#include <string>
#include <vector>

#include "calibration/trace/trace_file.hpp"

namespace ringsim::calibration {

// 64 GiB of text is past any profiler's output (it would take minutes to read) and bounds the run
// (the file itself: kMaxTraceFileBytes, trace_file.hpp).
inline constexpr std::int64_t kMaxTraceTextBytes = std::int64_t{64} << 30;

// Called after each block read: bytes of the file consumed so far, and the file's size.
using TraceProgress = std::function<void(std::int64_t read, std::int64_t total)>;

// std::istream over the trace's text. Errors (unreadable file, not a regular file, too large,
// damaged or truncated gzip) are models::InputError naming the file (field "trace"), thrown
// from the read that meets them.
class TraceStream {
 public:
  explicit TraceStream(const std::string& path, std::int64_t max_text_bytes = kMaxTraceTextBytes,
                       TraceProgress progress = {});
  ~TraceStream();
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;

  [[nodiscard]] std::istream& stream() noexcept { return stream_; }
  // The 1-based line of the text's byte `offset` (for a parser's error), when it lies in the
  // block read last or before; 0 when it cannot be told.
  [[nodiscard]] std::int64_t line_of(std::uint64_t offset) const;
  // Rethrows an error met inside the stream (the parser sees only a stream that ended).
  void rethrow_if_failed() const;

 private:
  class Buffer;
  std::unique_ptr<Buffer> buffer_;
  std::istream stream_;
};

// The whole text (small files and tests): the same checks and limits.
[[nodiscard]] std::string read_trace_text(const std::string& path, std::int64_t max_text_bytes = kMaxTraceTextBytes);

}  // namespace ringsim::calibration
