#include "calibration/trace/trace_text.hpp"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "calibration/trace/json_token_guard.hpp"
#include "models/io/error.hpp"

namespace ringsim::calibration {

using models::InputError;

class TraceStream::Buffer final : public std::streambuf {
 public:
  Buffer(const std::string& path, std::int64_t max_text_bytes, TraceProgress progress)
      : path_(path), max_text_(max_text_bytes), progress_(std::move(progress)), guard_(path) {
    TraceFile file(path);
    file_bytes_ = file.size();
    // gzdopen reads a plain file as it is and inflates a gzip one (every member of it).
    const int fd = file.release();
    gz_ = gzdopen(fd, "rb");
    if (!gz_) {
      ::close(fd);
      fail("cannot start reading the trace file");
    }
    gzbuffer(gz_, 1 << 18);
    block_.resize(std::size_t{1} << 20);
  }
  Buffer(std::string_view text, const std::string& file) : path_(file), max_text_(kMaxTraceTextBytes), guard_(file), memory_(text) {}
  ~Buffer() override {
    if (gz_) gzclose(gz_);
  }

  [[nodiscard]] std::uint64_t position() const noexcept { return block_start_ + static_cast<std::uint64_t>(gptr() - eback()); }

  [[nodiscard]] std::int64_t line_of(std::uint64_t offset) const {
    if (offset < block_start_) return 0;
    const auto in_block = static_cast<std::uint64_t>(egptr() - eback());
    const auto upto = std::min<std::uint64_t>(offset - block_start_, in_block);
    // From the cursor when it lies in this block at or before the offset, else from the block's start.
    if (cursor_ < block_start_ || cursor_ - block_start_ > upto) {
      cursor_ = block_start_;
      cursor_line_ = 1 + newlines_before_;
    }
    cursor_line_ += std::count(eback() + (cursor_ - block_start_), eback() + upto, '\n');
    cursor_ = block_start_ + upto;
    return cursor_line_;
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    // The lines of the block being left, for line_of.
    newlines_before_ += std::count(eback(), egptr(), '\n');
    block_start_ += static_cast<std::uint64_t>(egptr() - eback());
    // Errors are thrown from here, through the parser, which reads with sbumpc and catches
    // nothing: it never builds its message of the token read so far (for 16 MiB of line breaks,
    // 128 MB of "<U+000A>"), and the reader sees the real reason, not "unexpected end of input".
    char* data = nullptr;
    std::size_t n = 0;
    if (gz_) {
      const int got = gzread(gz_, block_.data(), static_cast<unsigned>(block_.size()));
      if (got < 0) fail(std::string("damaged gzip data: ") + message());
      if (got == 0) {
        int code = Z_OK;
        gzerror(gz_, &code);
        // zlib ends a cut-off gzip stream with Z_BUF_ERROR ("unexpected end of file").
        if (code == Z_BUF_ERROR) fail("truncated gzip data (the stream ends before its last block)");
        if (code != Z_OK) fail(std::string("damaged gzip data: ") + message());
      }
      data = block_.data();
      n = static_cast<std::size_t>(got);
      text_bytes_ += got;
      if (text_bytes_ > max_text_) fail("decompresses to more than the " + std::to_string(max_text_) + " bytes accepted");
    } else if (!memory_done_) {
      // The text in memory is one block; the get area never writes through the pointer.
      data = const_cast<char*>(memory_.data());
      n = memory_.size();
      memory_done_ = true;
    }
    if (n == 0) {
      setg(block_.data(), block_.data(), block_.data());
      return traits_type::eof();
    }
    guard_.scan({data, n});
    if (progress_ && gz_) progress_(static_cast<std::int64_t>(gzoffset(gz_)), file_bytes_);
    setg(data, data, data + n);
    return traits_type::to_int_type(*data);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw InputError(path_, 0, "trace", what); }
  std::string message() const {
    int code = 0;
    const char* m = gzerror(gz_, &code);
    return m && *m ? m : "inflate failed";
  }

  std::string path_;
  std::int64_t max_text_;
  TraceProgress progress_;
  JsonTokenGuard guard_;
  gzFile gz_ = nullptr;
  std::string_view memory_;
  bool memory_done_ = false;
  std::int64_t file_bytes_ = 0, text_bytes_ = 0;
  std::vector<char> block_;
  std::uint64_t block_start_ = 0;
  std::int64_t newlines_before_ = 0;
  mutable std::uint64_t cursor_ = 0;  // line_of's last answer: (offset, line)
  mutable std::int64_t cursor_line_ = 1;
};

TraceStream::TraceStream(const std::string& path, std::int64_t max_text_bytes, TraceProgress progress)
    : buffer_(std::make_unique<Buffer>(path, max_text_bytes, std::move(progress))), stream_(buffer_.get()) {}

TraceStream::TraceStream(std::string_view text, const std::string& file)
    : buffer_(std::make_unique<Buffer>(text, file)), stream_(buffer_.get()) {}

TraceStream::~TraceStream() = default;

std::uint64_t TraceStream::position() const noexcept { return buffer_->position(); }
std::int64_t TraceStream::line_of(std::uint64_t offset) const { return buffer_->line_of(offset); }

std::string read_trace_text(const std::string& path, std::int64_t max_text_bytes) {
  TraceStream in(path, max_text_bytes);
  std::string out;
  char chunk[1 << 16];
  // From the buffer itself: std::istream::read would swallow its errors into badbit.
  for (std::streamsize n; (n = in.stream().rdbuf()->sgetn(chunk, sizeof chunk)) > 0;) out.append(chunk, static_cast<std::size_t>(n));
  return out;
}

}  // namespace ringsim::calibration
