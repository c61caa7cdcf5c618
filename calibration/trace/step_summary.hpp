#pragma once
// Where one rank's step went: per ProfilerStep and GPU, the time of each class of operation,
// the communication not hidden by compute on another stream, and the time the GPU sat idle.
// Kernels belong to the step whose CPU range contains their launch (the launch's correlation id
// links the two), as the profiler's own step view does; a kernel launched in step N that runs
// into step N+1 still counts in N.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "calibration/trace/kernel_classes.hpp"
#include "calibration/trace/trace.hpp"

namespace ringsim::calibration {

struct Interval {
  double start = 0, end = 0;
};
// Sorted, disjoint, non-empty intervals covering exactly the union of `v`.
[[nodiscard]] std::vector<Interval> merged(std::vector<Interval> v);
[[nodiscard]] double length(const std::vector<Interval>& disjoint);
// |a ∩ b| for two sorted disjoint lists.
[[nodiscard]] double overlap(const std::vector<Interval>& a, const std::vector<Interval>& b);

struct StepSummary {
  std::int64_t step = -1;    // ProfilerStep#N; -1 for a trace without steps (the whole trace)
  std::int64_t device = 0;
  double wall_us = 0;        // the GPU's step range (its ProfilerStep copy, else first op to last)
  double busy_us = 0;        // union of every op
  double idle_us = 0;        // wall - busy
  double communication_us = 0;  // union of p2p and collective ops
  double exposed_communication_us = 0;  // of that union, what no compute op overlaps
  std::array<double, kOpClasses> class_us{};  // summed durations (streams overlap: may exceed wall)
  std::array<std::int64_t, kOpClasses> class_ops{};
  double p2p_bytes = 0, collective_bytes = 0;  // of ops whose size the profiler recorded
  std::int64_t unsized_communication_ops = 0;
};

struct TraceSummary {
  std::string file;
  std::int64_t rank = -1, world_size = 0;
  std::string device_name, date;
  std::vector<StepSummary> steps;  // by step, then device
  // Ops of class Other by name: count and summed time, so nothing is dropped unseen.
  std::map<std::string, std::pair<std::int64_t, double>> unclassified;
  std::int64_t ops = 0, ops_outside_steps = 0;  // outside: launched outside every step range
  double outside_steps_us = 0;
};

// The step each op of `trace` belongs to (ProfilerStep#N's N; -1 for every op of a trace without
// steps), or kOutsideSteps for one launched outside every step range.
inline constexpr std::int64_t kOutsideSteps = -2;
[[nodiscard]] std::vector<std::int64_t> op_steps(const Trace& trace);

[[nodiscard]] TraceSummary summarize(const Trace& trace, const KernelClasses& classes);

}  // namespace ringsim::calibration
