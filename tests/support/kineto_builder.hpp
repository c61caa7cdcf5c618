#pragma once
// A small PyTorch-profiler (Kineto) trace for tests that need given kernel names on given streams:
// one ProfilerStep#1 on the CPU from -10 us to step_us, each kernel launched by a cudaLaunchKernel
// 5 us before it starts (correlation = its index + 1), distributedInfo with the rank. Names are written as given
// (no quotes or backslashes in them).
#include <string>
#include <vector>

#include <fmt/format.h>

namespace ringsim::test {

struct KernelEvent {
  std::string name;
  int stream = 7;
  double start_us = 0, dur_us = 0;
};

inline std::string kineto_trace(const std::vector<KernelEvent>& ops, double step_us, int rank = 0, int world_size = 1) {
  const auto ts = [](double t) { return fmt::format("{:.3f}", 1700000000000000.0 + t); };
  std::string s = fmt::format(R"({{"schemaVersion": 1, "distributedInfo": {{"backend": "nccl", "rank": {}, "world_size": {}}}, "traceEvents": [)",
                              rank, world_size);
  s += fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": {}, "dur": {}}})",
                   ts(-10), step_us + 10);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& o = ops[i];
    s += fmt::format(R"(,{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 2, "args": {{"correlation": {}}}}})",
                     ts(o.start_us - 5), i + 1);
    s += fmt::format(R"(,{{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": {}, "ts": {}, "dur": {}, "args": {{"device": 0, "stream": {}, "correlation": {}}}}})",
                     o.name, o.stream, ts(o.start_us), o.dur_us, o.stream, i + 1);
  }
  return s + "]}\n";
}

}  // namespace ringsim::test
