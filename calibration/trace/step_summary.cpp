#include "calibration/trace/step_summary.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace ringsim::calibration {

std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!(i.end > i.start)) continue;
    if (!out.empty() && i.start <= out.back().end) out.back().end = std::max(out.back().end, i.end);
    else out.push_back(i);
  }
  return out;
}

double length(const std::vector<Interval>& disjoint) {
  double s = 0;
  for (const Interval& i : disjoint) s += i.end - i.start;
  return s;
}

double overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double s = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].start, b[j].start), hi = std::min(a[i].end, b[j].end);
    if (hi > lo) s += hi - lo;
    // Advance whichever ends first: it cannot meet anything later in the other list.
    if (a[i].end < b[j].end) ++i;
    else ++j;
  }
  return s;
}

namespace {

// The step whose range holds t (ranges sorted by start; the latest start at or before t).
std::optional<std::size_t> step_at(const std::vector<StepRange>& steps, double t) {
  const auto it = std::upper_bound(steps.begin(), steps.end(), t, [](double v, const StepRange& s) { return v < s.start_us; });
  if (it == steps.begin()) return std::nullopt;
  const auto k = static_cast<std::size_t>(it - steps.begin()) - 1;
  if (t > steps[k].end_us) return std::nullopt;
  return k;
}

struct Bucket {
  std::vector<Interval> all, comm, compute;
  StepSummary s;
  double first = std::numeric_limits<double>::infinity(), last = -std::numeric_limits<double>::infinity();
};

}  // namespace

std::vector<std::int64_t> op_steps(const Trace& trace) {
  std::vector<std::int64_t> out(trace.ops.size(), -1);
  if (trace.cpu_steps.empty() && trace.gpu_steps.empty()) return out;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const GpuOp& op = trace.ops[i];
    // The launch's CPU time in a CPU step range; without a recorded launch, the op's own GPU
    // time in a GPU step range (the profiler wrote one for kernels it saw without a launch).
    std::optional<std::size_t> k;
    const auto launch = trace.launch_us.find(op.correlation);
    if (launch != trace.launch_us.end() && !trace.cpu_steps.empty()) {
      if ((k = step_at(trace.cpu_steps, launch->second))) out[i] = trace.cpu_steps[*k].number;
    } else if (!trace.gpu_steps.empty()) {
      if ((k = step_at(trace.gpu_steps, op.start_us))) out[i] = trace.gpu_steps[*k].number;
    }
    if (!k) out[i] = kOutsideSteps;
  }
  return out;
}

TraceSummary summarize(const Trace& trace, const KernelClasses& classes) {
  TraceSummary out;
  out.file = trace.file;
  out.rank = trace.rank;
  out.world_size = trace.world_size;
  out.device_name = trace.device_name;
  out.date = trace.date;
  out.ops = static_cast<std::int64_t>(trace.ops.size());
  std::map<std::pair<std::int64_t, std::int64_t>, Bucket> buckets;  // (step, device)
  const auto steps = op_steps(trace);
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const GpuOp& op = trace.ops[i];
    const std::int64_t step = steps[i];
    if (step == kOutsideSteps) {
      ++out.ops_outside_steps;
      out.outside_steps_us += op.end_us - op.start_us;
      continue;
    }
    Bucket& b = buckets[{step, op.device}];
    const OpClass c = classes.classify(op);
    const Interval iv{op.start_us, op.end_us};
    b.all.push_back(iv);
    if (is_communication(c)) b.comm.push_back(iv);
    if (is_compute(c)) b.compute.push_back(iv);
    b.s.class_us[index(c)] += op.end_us - op.start_us;
    ++b.s.class_ops[index(c)];
    if (is_communication(c)) {
      if (op.message_bytes >= 0) (c == OpClass::P2p ? b.s.p2p_bytes : b.s.collective_bytes) += op.message_bytes;
      else ++b.s.unsized_communication_ops;
    }
    if (c == OpClass::Other) {
      auto& u = out.unclassified[op.name.str()];
      ++u.first;
      u.second += op.end_us - op.start_us;
    }
    b.first = std::min(b.first, op.start_us);
    b.last = std::max(b.last, op.end_us);
  }
  for (auto& [key, b] : buckets) {
    StepSummary s = b.s;
    s.step = key.first;
    s.device = key.second;
    const auto all = merged(std::move(b.all)), comm = merged(std::move(b.comm)), compute = merged(std::move(b.compute));
    s.busy_us = length(all);
    s.communication_us = length(comm);
    s.exposed_communication_us = s.communication_us - overlap(comm, compute);
    // The GPU copy of the step's range when the profiler wrote it; it can start before the
    // first op (the step's first launch takes time to reach the GPU), which is idle time too.
    double lo = b.first, hi = b.last;
    for (const StepRange& g : trace.gpu_steps)
      if (g.number == s.step) lo = std::min(lo, g.start_us), hi = std::max(hi, g.end_us);
    s.wall_us = hi - lo;
    s.idle_us = std::max(0.0, s.wall_us - s.busy_us);
    out.steps.push_back(s);
  }
  return out;
}

}  // namespace ringsim::calibration
