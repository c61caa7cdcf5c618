// Reading a large PyTorch profiler trace (`ringsim trace summarize`): time and peak memory on a
// synthetic Kineto trace of a chosen size, plain and gzip-compressed. The text is streamed, so
// memory follows the GPU operations kept, not the file. Size: RINGSIM_TRACE_BENCH_MB (default
// 256; docs/performance.md reports 1024). The trace is written once into $TMPDIR and removed.
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "calibration/trace/kineto.hpp"
#include "calibration/trace/step_summary.hpp"
#include "models/catalog/catalog.hpp"

namespace {

using namespace ringsim;

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // kB on Linux
}

std::int64_t target_bytes() {
  const char* mb = std::getenv("RINGSIM_TRACE_BENCH_MB");
  return (mb ? std::atoll(mb) : 256) << 20;
}

// A trace shaped like a training step's: per kernel a CPU operator (dropped by the reader), its
// launch and the kernel (attention, GEMM, element-wise, NCCL in turn), a ProfilerStep every 20000
// kernels. Returns the number of events written.
struct Written {
  std::string path;
  std::int64_t events = 0, bytes = 0;
};

Written write_trace(bool gz) {
  const char* dir = std::getenv("TMPDIR");
  Written w;
  w.path = fmt::format("{}/ringsim-trace-bench-{}.json{}", dir && *dir ? dir : "/tmp", ::getpid(), gz ? ".gz" : "");
  gzFile g = gz ? gzopen(w.path.c_str(), "wb1") : nullptr;
  std::FILE* f = gz ? nullptr : std::fopen(w.path.c_str(), "wb");
  const auto put = [&](const std::string& s) {
    if (gz) gzwrite(g, s.data(), static_cast<unsigned>(s.size()));
    else std::fwrite(s.data(), 1, s.size(), f);
    w.bytes += static_cast<std::int64_t>(s.size());
  };
  put(R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8}, "traceEvents": [)");
  const char* names[] = {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>",
                         "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off",
                         "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>",
                         "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"};
  const std::int64_t target = target_bytes();
  std::int64_t k = 0;
  double t = 1.7e15;
  std::string buf;
  while (w.bytes < target) {
    buf.clear();
    if (k % 20000 == 0)
      buf += fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": 1, "tid": 1, "ts": {:.3f}, "dur": 1e9}},)", k / 20000, t);
    buf += fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": {:.3f}, "dur": 9.5, "args": {{"External id": {}, "Record function id": 0, "Ev Idx": {}}}}},)", t, k, k);
    buf += fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {:.3f}, "dur": 4.1, "args": {{"External id": {}, "cbid": 211, "correlation": {}}}}},)", t + 1, k, k);
    buf += fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": 7, "ts": {:.3f}, "dur": 17.25, "args": {{"External id": {}, "queued": 0, "device": 0, "context": 1, "stream": {}, "correlation": {}, "registers per thread": 128, "shared memory": 49152, "blocks per SM": 1.2, "warps per SM": 9.6, "grid": [528, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 12}}}},)",
                       names[k % 4], t + 5, k, k % 4 == 3 ? 20 : 7, k);
    put(buf);
    w.events += 3 + (k % 20000 == 0);
    ++k;
    t += 20;
  }
  put(R"({"ph": "i", "cat": "cpu_instant_event", "name": "end", "pid": 1, "tid": 1, "ts": 1})" "\n]}\n");
  if (gz) gzclose(g);
  else std::fclose(f);
  return w;
}

void read_and_summarize(benchmark::State& state, bool gz) {
  const auto w = write_trace(gz);
  const auto classes = calibration::KernelClasses::load(calibration::KernelClasses::default_path(models::Catalog::default_root()));
  const double rss_before = peak_rss_mb();
  std::int64_t ops = 0;
  for (auto _ : state) {
    const auto t = calibration::read_kineto_trace(w.path);
    ops = static_cast<std::int64_t>(t.ops.size());
    const auto s = calibration::summarize(t, classes);
    benchmark::DoNotOptimize(s.steps.size());
  }
  std::filesystem::remove(w.path);
  state.SetBytesProcessed(state.iterations() * w.bytes);
  state.counters["text_MB"] = static_cast<double>(w.bytes) / (1 << 20);
  state.counters["events"] = static_cast<double>(w.events);
  state.counters["gpu_ops"] = static_cast<double>(ops);
  state.counters["peak_rss_MB"] = peak_rss_mb();
  state.counters["rss_before_MB"] = rss_before;
}

void BM_TracePlain(benchmark::State& state) { read_and_summarize(state, false); }
void BM_TraceGzip(benchmark::State& state) { read_and_summarize(state, true); }

}  // namespace

BENCHMARK(BM_TracePlain)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK(BM_TraceGzip)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_MAIN();
