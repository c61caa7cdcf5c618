#pragma once
// GPU-side kernel timings with the CUPTI Activity API: start/end timestamps that CUPTI takes on
// the GPU, free of launch overhead and host jitter, which is what the tile cost model is fitted
// to. Launches are tagged with CUPTI external correlation ids, so every kernel record maps back
// to the (round, device, tile config) that produced it.
//
// CUPTI delivers buffers through plain C callbacks without a user pointer, so at most one
// collector may be alive in a process; a second one throws.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ringsim::calibration {

// A failed CUPTI call, with CUPTI's own message (no GPU, no driver, profiler already in use...).
class CuptiError : public std::runtime_error {
 public:
  explicit CuptiError(const std::string& what) : std::runtime_error(what) {}
};

// What a launch was for. `label` is free text (layout, mask, kernel variant...).
struct LaunchTag {
  std::int32_t round = -1;
  std::int32_t device = -1;
  std::int32_t tile_q = 0;
  std::int32_t tile_k = 0;
  std::string label;
};

struct KernelRecord {
  std::string name;          // demangled when possible
  std::string mangled_name;  // as CUPTI reports it
  std::uint64_t start_ns = 0;  // GPU timestamps on CUPTI's clock (cuptiGetTimestamp)
  std::uint64_t end_ns = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t device_id = 0;
  std::uint32_t context_id = 0;
  std::uint32_t stream_id = 0;
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::int32_t static_shared_bytes = 0;
  std::int32_t dynamic_shared_bytes = 0;
  std::int32_t registers_per_thread = 0;
  std::optional<std::uint64_t> tag_id;  // the innermost TagScope open when it was launched
  std::optional<LaunchTag> tag;

  [[nodiscard]] double duration_s() const noexcept { return static_cast<double>(end_ns - start_ns) * 1e-9; }
};

class CuptiCollector {
 public:
  // Registers the buffer callbacks and starts collecting. `buffer_bytes` is the size of each
  // buffer handed to CUPTI (records are ~200 bytes).
  explicit CuptiCollector(std::size_t buffer_bytes = std::size_t{8} << 20);
  ~CuptiCollector();  // stops and flushes; never throws
  CuptiCollector(const CuptiCollector&) = delete;
  CuptiCollector& operator=(const CuptiCollector&) = delete;

  void start();  // enables concurrent-kernel and external-correlation records (idempotent)
  void stop();   // flushes, then disables them (idempotent)
  void flush();  // forces CUPTI to hand over every completed record
  [[nodiscard]] bool running() const noexcept;

  // While alive, every kernel launched from this thread carries the tag. Scopes nest (CUPTI
  // keeps a per-thread stack); destroy them in reverse order of creation, on the same thread.
  class TagScope {
   public:
    TagScope(TagScope&& other) noexcept;
    TagScope& operator=(TagScope&&) = delete;
    TagScope(const TagScope&) = delete;
    TagScope& operator=(const TagScope&) = delete;
    ~TagScope();
    [[nodiscard]] std::uint64_t id() const noexcept { return id_; }

   private:
    friend class CuptiCollector;
    explicit TagScope(std::uint64_t id) : id_(id) {}
    std::uint64_t id_;
    bool active_ = true;
  };
  [[nodiscard]] TagScope tag(LaunchTag tag);

  // Flushes and returns the kernel records gathered so far, joined with their tags, in order of
  // start time; the collector forgets them.
  [[nodiscard]] std::vector<KernelRecord> take_records();
  // Records CUPTI reported as dropped (buffers too small or too few).
  [[nodiscard]] std::uint64_t dropped_records() const noexcept;

  struct State;  // shared with the C callbacks

 private:
  std::shared_ptr<State> state_;
};

}  // namespace ringsim::calibration
