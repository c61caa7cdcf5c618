#pragma once
// What one GUI run computes, as plain data (no Qt): for each compared layout, the resolved
// scenario, its (device x round) work matrices, the analytic prediction and a speedup sweep
// over n_seq. Produced on a worker thread, then handed whole to the GUI thread, which alone
// touches it afterwards (Workload memoises lazily and is not thread-safe).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/analytic.hpp"
#include "models/scenario.hpp"

namespace ringsim::gui {

enum class Metric { Area, Pairs, Tiles };

struct LayoutRun {
  std::string layout;
  std::unique_ptr<models::ResolvedScenario> scenario;
  std::int64_t n = 0;  // devices == rounds
  // Row-major [device * n + round], as fractions of one full block of the metric, so every
  // layout shares one colour scale.
  std::vector<float> area, pairs, tiles;
  models::Prediction prediction;
  std::vector<double> sweep_step_s;  // per RunResult::sweep_n_seq; NaN where impossible

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
                                                   const std::vector<std::string>& layouts,
                                                   const models::Catalog& catalog, const std::atomic<bool>& cancel,
                                                   const std::function<void(double)>& progress);

// Validates a scenario for every layout without computing any block (resolve is lazy).
void validate(const models::ScenarioSpec& base, const std::vector<std::string>& layouts,
              const models::Catalog& catalog);

// A timeline a widget can draw: lanes of spans. Filled from the analytic lock-step rounds for
// now; the discrete-event simulator's trace maps onto the same struct.
enum class SpanKind { Compute, Wait, Transfer };
struct TimelineSpan {
  int lane = 0;
  double start_s = 0;
  double end_s = 0;
  SpanKind kind = SpanKind::Compute;
};
struct Timeline {
  std::vector<std::string> lanes;
  std::vector<TimelineSpan> spans;
  double end_s = 0;
};

// One layer's forward ring: per device, compute then wait for the round's slowest device or
// the transfer; the link lane holds each round's K/V transfer. At most max_devices lanes.
[[nodiscard]] Timeline timeline_from_prediction(const LayoutRun& run, std::int64_t max_devices = 64);

// Parses "MPxSP" (e.g. "1x8") and "QxK" tile text; throw InputError naming `field`.
[[nodiscard]] std::pair<std::int64_t, std::int64_t> parse_pair(const std::string& text, const std::string& field);

}  // namespace ringsim::gui
