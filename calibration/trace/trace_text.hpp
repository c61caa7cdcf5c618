#pragma once
// A trace file as a stream of JSON text, plain or gzip-compressed (PyTorch's profiler writes
// .json.gz when asked; zlib tells the two apart by gzip's magic bytes, not the name). The text
// is never held whole: a trace of a large job is gigabytes of JSON, and the reader keeps only the
// GPU operations it extracts. Everything is bounded while reading (trace_limits.hpp): the file on
// disk, the inflated text, and each JSON token (json_token_guard.hpp), so a small hostile archive
// can neither run forever nor fill memory.
#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/trace/trace_file.hpp"
#include "calibration/trace/trace_limits.hpp"

namespace ringsim::calibration {

// Called after each block read: bytes of the file consumed so far, and the file's size.
using TraceProgress = std::function<void(std::int64_t read, std::int64_t total)>;

// std::istream over the trace's text. Errors (unreadable file, not a regular file, too large,
// damaged or truncated gzip, a token over kMaxTraceTokenBytes) are models::InputError naming the
// file (field "trace"), thrown from the buffer's read that meets them: read through the buffer
// (rdbuf()->sbumpc, sgetn, as nlohmann's parser does), not std::istream's own functions, which
// would turn the error into badbit.
class TraceStream {
 public:
  explicit TraceStream(const std::string& path, std::int64_t max_text_bytes = kMaxTraceTextBytes,
                       TraceProgress progress = {});
  // Text already in memory (tests, small inputs), under the same checks; `text` must outlive
  // the stream, `file` names it in errors.
  TraceStream(std::string_view text, const std::string& file);
  ~TraceStream();
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;

  [[nodiscard]] std::istream& stream() noexcept { return stream_; }
  // Bytes of text the stream has handed out (the parser reads one at a time, so: its position).
  [[nodiscard]] std::uint64_t position() const noexcept;
  // The 1-based line of the text's byte `offset` (for a parser's error), when it lies in the
  // block read last or before; 0 when it cannot be told. Increasing offsets cost only the bytes
  // between them, so a reader may ask for the line of every record.
  [[nodiscard]] std::int64_t line_of(std::uint64_t offset) const;

 private:
  class Buffer;
  std::unique_ptr<Buffer> buffer_;
  std::istream stream_;
};

// The whole text (small files and tests): the same checks and limits.
[[nodiscard]] std::string read_trace_text(const std::string& path, std::int64_t max_text_bytes = kMaxTraceTextBytes);

}  // namespace ringsim::calibration
