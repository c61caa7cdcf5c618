#pragma once
// What a trace of a ring run tells the cost model: each attention kernel call's shape and time
// (the kernels, in launch order, paired with the calls the scenario's ring makes: ring_calls.hpp),
// for the kernel-curve fit of the GPU's efficiencies (kernel_curves.hpp); and the point-to-point
// transfers' sizes and times, for the hop's latency and bandwidth.
#include <cstdint>
#include <string>
#include <vector>

#include "calibration/kernel_curves.hpp"
#include "calibration/trace/kernel_classes.hpp"
#include "calibration/trace/trace_ranks.hpp"
#include "calibration/trace/trace.hpp"
#include "models/hardware/point_to_point.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::calibration {

// One KernelRow per attention call of every step of every trace (forward and backward), its time
// the summed duration of the call's kernels (FlashAttention's backward is three kernels, a split-KV
// forward two: consecutive kernels launched by one CPU operator, the same External id, are one
// call). A trace's rank is its ring position (trace_ranks.hpp: InputError for a rank outside the
// ring or given twice). InputError naming the trace, rank and step when its calls do not match
// the scenario's (the count per step is layers x the ring's calls of that rank): a wrong --mesh,
// --layout, --impl or layer count is said, not fitted. The calls' shapes are the scenario's: a
// kernel name does not record them, so a wrong --seq, --batch or head count changes no count and is
// fitted as given (docs/calibrate-your-cluster.md).
[[nodiscard]] std::vector<KernelRow> attention_rows(const std::vector<Trace>& traces, const KernelClasses& classes,
                                                    const models::ResolvedScenario& s);

// The traces' files for a message: up to three named, then how many more.
[[nodiscard]] std::string files_text(const std::vector<Trace>& traces);
// Each trace's file and recorded rank (trace_ranks.hpp: ring_positions).
[[nodiscard]] std::vector<TraceRank> trace_ranks(const std::vector<Trace>& traces);

// What a fit of `free` over the traces' (pass, shape) rows (median_by_shape) needs and the traces
// lack, said before fitting, with the files named: backward kernels for attention_bwd_efficiency
// (a forward-only run has none), forward ones for attention_efficiency, and more rows than
// parameters in two shape groups or more (a ring of one device runs one shape per pass).
void check_fit_coverage(const std::vector<Trace>& traces, const std::vector<KernelRow>& shapes,
                        const std::vector<std::string>& free, const models::ResolvedScenario& s);

// One row per (pass, shape): the median time of its calls. Every call of a shape has the same
// modelled time, so the fit needs one figure per shape, and the median keeps a call that waited
// (a preempted stream, a clock change) from pulling it; thousands of calls fit in milliseconds.
[[nodiscard]] std::vector<KernelRow> median_by_shape(const std::vector<KernelRow>& rows);

// The hop from the point-to-point kernels whose sizes the profiler recorded. A SendRecv kernel
// starts when it is launched and waits inside for its peer, so its duration is the transfer plus
// the wait: per message size, the 10th percentile is taken as the transfer (the calls whose peer
// was already there) and median - p10 is reported as the synchronisation excess.
struct TraceLinkSize {
  double bytes = 0;
  std::int64_t messages = 0;
  double p10_s = 0, median_s = 0;
};
struct TraceLinkFit {
  models::PointToPointHop hop;          // latency 0 when only one size was sent (bandwidth alone)
  std::vector<TraceLinkSize> sizes;     // by size
  double sync_excess_s = 0;             // mean over sizes of median - p10
  bool latency_identified = false;      // two or more sizes
};
// InputError (field "traces") when no point-to-point kernel carries a recorded size.
[[nodiscard]] TraceLinkFit fit_trace_link(const std::vector<Trace>& traces, const KernelClasses& classes);

}  // namespace ringsim::calibration
