#pragma once
// One rank's profiled run, whatever wrote it (a PyTorch/Kineto trace; an Nsight Systems export
// gives the same facts): the GPU's operations with their stream and time, the CPU-side launch
// of each (to place a kernel in the step whose Python code launched it), the step ranges, and
// what the profiler recorded about the job (rank, world size, device).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "calibration/trace/shared_text.hpp"

namespace ringsim::calibration {

// A kernel, copy or fill on one GPU stream. Times are microseconds from the trace's first
// timestamp (rebased so that differences keep sub-microsecond precision).
struct GpuOp {
  enum class Kind { Kernel, Memcpy, Memset };
  Kind kind = Kind::Kernel;
  SharedText name;  // one copy per distinct name in a trace (shared_text.hpp)
  std::int64_t device = 0, stream = 0;
  double start_us = 0, end_us = 0;
  std::int64_t correlation = -1;  // the CPU launch's id (-1: none recorded)
  std::int64_t external_id = -1;  // the CPU operator that launched it (-1: none)
  // Communication the profiler attributed to the op (the kernel's own args, or the
  // record_param_comms operator that launched it): empty when none was recorded.
  SharedText collective;
  double message_bytes = -1;  // -1: size unknown
  std::int64_t group_size = 0;
};

// A ProfilerStep#N range: on the CPU thread that ran it, or its GPU-side copy (newer PyTorch
// writes both; the GPU copy spans the step's kernels).
struct StepRange {
  std::int64_t number = 0;
  double start_us = 0, end_us = 0;
};

struct Trace {
  std::string file;
  std::int64_t rank = -1, world_size = 0;  // -1 / 0: not recorded
  std::string device_name;                 // the first device's name, "" when not recorded
  std::string date;                        // YYYY-MM-DD (UTC) of the first event, "" when not told
  std::vector<GpuOp> ops;                  // in file order
  std::vector<StepRange> cpu_steps, gpu_steps;  // by start time
  std::unordered_map<std::int64_t, double> launch_us;  // correlation -> CPU launch time
};

}  // namespace ringsim::calibration
