#include "calibration/trace/trace_text.hpp"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>

#include "models/io/error.hpp"

namespace ringsim::calibration {

using models::InputError;

class TraceStream::Buffer final : public std::streambuf {
 public:
  Buffer(const std::string& path, std::int64_t max_text_bytes, TraceProgress progress)
      : path_(path), max_text_(max_text_bytes), progress_(std::move(progress)) {
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
  ~Buffer() override {
    if (gz_) gzclose(gz_);
  }

  [[nodiscard]] std::int64_t line_of(std::uint64_t offset) const {
    if (offset < block_start_) return 0;
    const auto upto = std::min<std::uint64_t>(offset - block_start_, static_cast<std::uint64_t>(egptr() - eback()));
    return 1 + newlines_before_ + std::count(eback(), eback() + upto, '\n');
  }
  void rethrow_if_failed() const {
    if (error_) std::rethrow_exception(error_);
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (error_) return traits_type::eof();
    // The lines of the block being left, for line_of.
    newlines_before_ += std::count(eback(), egptr(), '\n');
    block_start_ += static_cast<std::uint64_t>(egptr() - eback());
    try {
      const int n = gzread(gz_, block_.data(), static_cast<unsigned>(block_.size()));
      if (n < 0) fail(std::string("damaged gzip data: ") + message());
      if (n == 0) {
        int code = Z_OK;
        gzerror(gz_, &code);
        // zlib ends a cut-off gzip stream with Z_BUF_ERROR ("unexpected end of file").
        if (code == Z_BUF_ERROR) fail("truncated gzip data (the stream ends before its last block)");
        if (code != Z_OK) fail(std::string("damaged gzip data: ") + message());
        setg(block_.data(), block_.data(), block_.data());
        return traits_type::eof();
      }
      text_bytes_ += n;
      if (text_bytes_ > max_text_)
        fail("decompresses to more than the " + std::to_string(max_text_) + " bytes accepted");
      if (progress_) progress_(static_cast<std::int64_t>(gzoffset(gz_)), file_bytes_);
      setg(block_.data(), block_.data(), block_.data() + n);
      return traits_type::to_int_type(block_[0]);
    } catch (...) {
      // The JSON parser would take an exception from its stream as a parse error: kept here and
      // rethrown by the reader instead.
      error_ = std::current_exception();
      setg(block_.data(), block_.data(), block_.data());
      return traits_type::eof();
    }
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
  gzFile gz_ = nullptr;
  std::int64_t file_bytes_ = 0, text_bytes_ = 0;
  std::vector<char> block_;
  std::uint64_t block_start_ = 0;
  std::int64_t newlines_before_ = 0;
  std::exception_ptr error_;
};

TraceStream::TraceStream(const std::string& path, std::int64_t max_text_bytes, TraceProgress progress)
    : buffer_(std::make_unique<Buffer>(path, max_text_bytes, std::move(progress))), stream_(buffer_.get()) {}

TraceStream::~TraceStream() = default;

std::int64_t TraceStream::line_of(std::uint64_t offset) const { return buffer_->line_of(offset); }
void TraceStream::rethrow_if_failed() const { buffer_->rethrow_if_failed(); }

std::string read_trace_text(const std::string& path, std::int64_t max_text_bytes) {
  TraceStream in(path, max_text_bytes);
  std::string out;
  char chunk[1 << 16];
  while (in.stream().read(chunk, sizeof chunk) || in.stream().gcount() > 0)
    out.append(chunk, static_cast<std::size_t>(in.stream().gcount()));
  in.rethrow_if_failed();
  return out;
}

}  // namespace ringsim::calibration
