#pragma once
// What one GUI run computes, as plain data (no Qt): for each compared layout, the resolved
// scenario, its (device x round) work matrices, the analytic prediction, a speedup sweep over
// n_seq and a timeline from the discrete-event simulator. Produced on a worker thread, then handed whole to the GUI thread, which alone
// touches it afterwards (Workload memoises lazily and is not thread-safe).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/analytic/analytic.hpp"
#include "models/catalog/resolve.hpp"

namespace ringsim::gui {

enum class Metric { Area, Pairs, Tiles };

// A timeline a widget can draw: lanes of spans. Normally the discrete-event simulator's trace
// (compute and copy-engine lanes per device); the analytic lock-step rounds where the ring is
// too large to simulate while the user waits.
enum class SpanKind {
  Compute,       // attention (one ring round)
  Other,         // the non-attention ops of the layer, the LM head
  Wait,          // a compute stream with nothing to do
  Transfer,      // K/V on its way to the successor
  GradTransfer,  // dK/dV accumulator on its way (backward)
};
struct TimelineSpan {
  int lane = 0;
  double start_s = 0;
  double end_s = 0;
  SpanKind kind = SpanKind::Compute;
  std::int64_t round = -1;  // an attention span's ring round; -1 otherwise
  std::string name;         // the simulator's span name ("attn fwd r3", "K/V", ...); empty for a wait
};
struct Timeline {
  std::vector<std::string> lanes;
  std::vector<TimelineSpan> spans;
  double end_s = 0;
  bool simulated = false;  // from sim::simulate_step, not the analytic rounds
  std::string note;        // what is shown, or why it is the analytic fallback
  // The ring's size where a lane's device d holds, in round r, the K/V block of device
  // models::Workload::kv_block_of(d, r, ring_devices): one plain ring (not Ulysses, a hybrid or
  // a double ring) without tensor parallelism; 0 where lanes and ring positions differ.
  std::int64_t ring_devices = 0;
};

// Above this many devices (mp x sp) the timeline falls back to the analytic rounds: the
// one-layer trace grows as devices^2 (~0.3 M spans at 256, millions beyond) and the
// simulation cannot be interrupted by Cancel.
inline constexpr std::int64_t kMaxSimulatedDevices = 256;

struct LayoutRun {
  std::string layout;
  std::unique_ptr<models::ResolvedScenario> scenario;
  std::int64_t n = 0;  // devices == rounds
  // Row-major [device * n + round], as fractions of one full block of the metric, so every
  // layout shares one colour scale.
  std::vector<float> area, pairs, tiles;
  models::Prediction prediction;
  std::vector<double> sweep_step_s;  // per RunResult::sweep_n_seq; NaN where impossible
  Timeline timeline;                 // simulated, or analytic above kMaxSimulatedDevices

  [[nodiscard]] const std::vector<float>& values(Metric m) const noexcept {
    return m == Metric::Area ? area : m == Metric::Pairs ? pairs : tiles;
  }
};

struct RunResult {
  std::vector<LayoutRun> layouts;
  std::vector<std::int64_t> sweep_n_seq;
};

// Calls progress(fraction) now and then; returns nullopt as soon as `cancel` is seen (checked
// between rounds). Throws models::InputError for an impossible scenario.
[[nodiscard]] std::optional<RunResult> compute_run(const models::ScenarioSpec& base,
                                                   const std::vector<models::LayoutSpec>& layouts,
                                                   const models::Catalog& catalog, const std::atomic<bool>& cancel,
                                                   const std::function<void(double)>& progress);

// Validates a scenario for every layout without computing any block (resolve is lazy).
void validate(const models::ScenarioSpec& base, const std::vector<models::LayoutSpec>& layouts,
              const models::Catalog& catalog);

// One layer's forward ring: per device, compute then wait for the round's slowest device or
// the transfer; the link lane holds each round's K/V transfer. At most max_devices lanes.
[[nodiscard]] Timeline timeline_from_prediction(const LayoutRun& run, std::int64_t max_devices = 64);

// One layer of the step as the discrete-event simulator runs it (default StepOptions:
// asynchronous rounds, two K/V buffers): its non-attention ops, the forward ring, the LM head,
// the backward ring with travelling dK/dV. A compute and a copy-engine lane per device for
// the first max_devices devices; gaps on a compute lane become Wait spans. The scenario is
// simulated with its model cut to one layer (restored before returning), because the whole
// step repeats the same layer and its trace would be layers times larger.
[[nodiscard]] Timeline timeline_from_simulation(models::ResolvedScenario& scenario, std::int64_t max_devices = 64);

// The Chrome trace (sim::chrome_trace_json) of the same one-layer simulation the timeline shows,
// every device and span (no lane limit): what "Open in Perfetto" writes.
[[nodiscard]] std::string chrome_trace_of(models::ResolvedScenario& scenario);

// Parses "MPxSP" (e.g. "1x8") and "QxK" tile text; throw InputError naming `field`.
[[nodiscard]] std::pair<std::int64_t, std::int64_t> parse_pair(const std::string& text, const std::string& field);

}  // namespace ringsim::gui
