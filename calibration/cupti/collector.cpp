#include "calibration/cupti/collector.hpp"

#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace ringsim::calibration {

struct CuptiCollector::State {
  std::size_t buffer_bytes = 0;
  std::mutex mutex;  // CUPTI completes buffers on its own thread
  std::vector<KernelRecord> kernels;
  std::unordered_map<std::uint32_t, std::uint64_t> tag_of_correlation;
  std::unordered_map<std::uint64_t, LaunchTag> tags;
  std::atomic<std::uint64_t> next_tag{1};
  std::atomic<std::uint64_t> dropped{0};
  bool running = false;
};

namespace {

// The live collector, for CUPTI's C callbacks, which carry no user pointer. This is the one piece
// of process-wide mutable state in ringsim, forced by the CUPTI API; it is guarded, and a second
// collector is refused rather than silently sharing it.
std::mutex g_active_mutex;
std::shared_ptr<CuptiCollector::State> g_active;

std::shared_ptr<CuptiCollector::State> active_state() {
  const std::lock_guard lock(g_active_mutex);
  return g_active;
}

void check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return;
  const char* message = nullptr;
  if (cuptiGetResultString(result, &message) != CUPTI_SUCCESS || message == nullptr) message = "unknown CUPTI error";
  throw CuptiError(std::string(what) + ": " + message);
}

constexpr std::size_t kDefaultBufferBytes = std::size_t{8} << 20;
// Runtime API records are enabled only because CUPTI attaches external correlation records to
// API records; they also give the host-side launch call.
constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME,
                                         CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};

std::string demangle(const char* name) {
  if (name == nullptr) return {};
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && out != nullptr ? std::string(out) : std::string(name);
  std::free(out);
  return result;
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  const auto state = active_state();
  const std::size_t bytes = state ? state->buffer_bytes : kDefaultBufferBytes;
  // CUPTI needs 8-byte aligned buffers; bytes is rounded to a multiple of 8 by the constructor.
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, bytes));
  *size = *buffer != nullptr ? bytes : 0;
  *max_records = 0;  // as many as fit
}

void parse_buffer(CuptiCollector::State& state, std::uint8_t* buffer, std::size_t valid) {
  std::vector<KernelRecord> kernels;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> correlations;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      KernelRecord r;
      r.mangled_name = k->name != nullptr ? k->name : "";
      r.name = demangle(k->name);
      r.start_ns = k->start;
      r.end_ns = k->end;
      r.correlation_id = k->correlationId;
      r.device_id = k->deviceId;
      r.context_id = k->contextId;
      r.stream_id = k->streamId;
      r.grid[0] = k->gridX;
      r.grid[1] = k->gridY;
      r.grid[2] = k->gridZ;
      r.block[0] = k->blockX;
      r.block[1] = k->blockY;
      r.block[2] = k->blockZ;
      r.static_shared_bytes = k->staticSharedMemory;
      r.dynamic_shared_bytes = k->dynamicSharedMemory;
      r.registers_per_thread = k->registersPerThread;
      kernels.push_back(std::move(r));
    } else if (record->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        correlations.emplace_back(e->correlationId, e->externalId);
    }
  }
  const std::lock_guard lock(state.mutex);
  for (auto& k : kernels) state.kernels.push_back(std::move(k));
  for (const auto& [correlation, tag] : correlations) state.tag_of_correlation[correlation] = tag;
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  // A C callback: nothing may escape it.
  try {
    if (const auto state = active_state(); state && buffer != nullptr) {
      parse_buffer(*state, buffer, valid);
      std::size_t dropped = 0;
      if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS)
        state->dropped += dropped;
    }
  } catch (...) {
  }
  std::free(buffer);
}

}  // namespace

CuptiCollector::CuptiCollector(std::size_t buffer_bytes) : state_(std::make_shared<State>()) {
  state_->buffer_bytes = std::max<std::size_t>((buffer_bytes + 7) / 8 * 8, 64 * 1024);
  {
    const std::lock_guard lock(g_active_mutex);
    if (g_active) throw CuptiError("CuptiCollector: another collector is already active in this process");
    g_active = state_;
  }
  try {
    check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
    start();
  } catch (...) {
    const std::lock_guard lock(g_active_mutex);
    g_active.reset();
    throw;
  }
}

CuptiCollector::~CuptiCollector() {
  try {
    stop();
  } catch (...) {
  }
  const std::lock_guard lock(g_active_mutex);
  if (g_active == state_) g_active.reset();
}

void CuptiCollector::start() {
  if (state_->running) return;
  for (std::size_t i = 0; i < std::size(kKinds); ++i) {
    if (const CUptiResult r = cuptiActivityEnable(kKinds[i]); r != CUPTI_SUCCESS) {
      for (std::size_t j = 0; j < i; ++j) cuptiActivityDisable(kKinds[j]);
      check(r, "cuptiActivityEnable");
    }
  }
  state_->running = true;
}

void CuptiCollector::stop() {
  if (!state_->running) return;
  // Flush first: records still in CUPTI's buffers belong to this collection.
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (const CUpti_ActivityKind kind : kKinds) cuptiActivityDisable(kind);
  state_->running = false;
  check(flushed, "cuptiActivityFlushAll");
}

void CuptiCollector::flush() { check(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll"); }

bool CuptiCollector::running() const noexcept { return state_->running; }

CuptiCollector::TagScope CuptiCollector::tag(LaunchTag tag) {
  const std::uint64_t id = state_->next_tag++;
  {
    const std::lock_guard lock(state_->mutex);
    state_->tags.emplace(id, std::move(tag));
  }
  check(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id),
        "cuptiActivityPushExternalCorrelationId");
  return TagScope(id);
}

CuptiCollector::TagScope::TagScope(TagScope&& other) noexcept : id_(other.id_), active_(std::exchange(other.active_, false)) {}

CuptiCollector::TagScope::~TagScope() {
  if (!active_) return;
  std::uint64_t last = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
}

std::vector<KernelRecord> CuptiCollector::take_records() {
  if (state_->running) flush();
  std::vector<KernelRecord> out;
  {
    const std::lock_guard lock(state_->mutex);
    out.swap(state_->kernels);
    for (KernelRecord& r : out) {
      const auto it = state_->tag_of_correlation.find(r.correlation_id);
      if (it == state_->tag_of_correlation.end()) continue;
      r.tag_id = it->second;
      if (const auto t = state_->tags.find(it->second); t != state_->tags.end()) r.tag = t->second;
    }
    // After a forced flush both halves of every join have arrived; forgetting the joined ones
    // keeps the map small over a long calibration run.
    for (const KernelRecord& r : out) state_->tag_of_correlation.erase(r.correlation_id);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const KernelRecord& a, const KernelRecord& b) { return a.start_ns < b.start_ns; });
  return out;
}

std::uint64_t CuptiCollector::dropped_records() const noexcept { return state_->dropped.load(); }

}  // namespace ringsim::calibration
