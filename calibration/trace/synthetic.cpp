#include "calibration/trace/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "calibration/trace/ring_calls.hpp"
#include "calibration/trace/trace_limits.hpp"
#include "models/io/error.hpp"
#include "models/program/program.hpp"

namespace ringsim::calibration {

namespace {

// Every time the trace will hold, bounded before anything is written, so that whatever the
// planted figures (a link of 1e-300 B/s, an efficiency of 1e-300) the trace is one its own reader
// accepts (trace_limits.hpp): each duration finite and at most kMaxTraceDurationUs, the last
// timestamp at most kMaxTraceTimeUs. The step's length is computed as the writer's loop computes
// it (rounds in lock-step: each as long as its longest transfer or busiest rank).
void check_planted_times(const std::vector<std::vector<RingCall>>& calls, const PlantedLink& link, double kv, double dkv,
                         std::int64_t n, std::int64_t layers, int steps, double other_compute_s, double base_us) {
  double kernel = 0, step = 20e-6 + other_compute_s;
  std::vector<double> busiest_fwd(static_cast<std::size_t>(n), 0.0), busiest_bwd(static_cast<std::size_t>(n), 0.0);
  for (const auto& rank : calls) {
    std::vector<double> fwd(static_cast<std::size_t>(n), 0.0), bwd(static_cast<std::size_t>(n), 0.0);
    for (const auto& c : rank) {
      if (!(std::isfinite(c.time.fwd_s) && std::isfinite(c.time.bwd_s) && c.time.fwd_s >= 0 && c.time.bwd_s >= 0))
        throw models::InputError({}, 0, "efficiency",
                                 fmt::format("the planted kernel efficiencies give a kernel time of {} s, not a finite time",
                                             std::isfinite(c.time.fwd_s) ? c.time.bwd_s : c.time.fwd_s));
      kernel = std::max({kernel, c.time.fwd_s, c.time.bwd_s});
      fwd[static_cast<std::size_t>(c.round)] += c.time.fwd_s;
      bwd[static_cast<std::size_t>(c.round)] += c.time.bwd_s;
    }
    for (std::size_t q = 0; q < fwd.size(); ++q) {
      busiest_fwd[q] = std::max(busiest_fwd[q], fwd[q]);
      busiest_bwd[q] = std::max(busiest_bwd[q], bwd[q]);
    }
  }
  const double kv_s = link.seconds(kv), dkv_s = link.seconds(dkv);
  for (std::int64_t q = 0; q < n; ++q) {
    const double send = q + 1 < n ? kv_s : 0.0;
    step += static_cast<double>(layers) * (std::max(send, busiest_fwd[static_cast<std::size_t>(q)]) +
                                           std::max(std::max(send, dkv_s), busiest_bwd[static_cast<std::size_t>(q)]));
  }
  const double end_us = base_us + static_cast<double>(steps) * (step + 100e-6) * 1e6;
  const auto too_long = [](double seconds) { return !(seconds * 1e6 <= kMaxTraceDurationUs); };
  const std::string bound = fmt::format("a trace holds durations of at most {:g} s and times of at most {:g} s", kMaxTraceDurationUs * 1e-6,
                                        (kMaxTraceTimeUs - base_us) * 1e-6);
  if (too_long(std::max(kv_s, dkv_s)))
    throw models::InputError({}, 0, "link",
                             fmt::format("the planted link ({:g} s latency, {:g} B/s) sends one K/V block in {:g} s: {}",
                                         link.latency_s, link.bandwidth_bytes_per_s, std::max(kv_s, dkv_s), bound));
  if (too_long(kernel))
    throw models::InputError({}, 0, "efficiency",
                             fmt::format("the planted kernel efficiencies give a kernel call of {:g} s: {}", kernel, bound));
  // The longest part of the step names the figure to change.
  const char* culprit = other_compute_s >= step / 2 ? "other_compute_s" : std::max(kv_s, dkv_s) > kernel ? "link" : "efficiency";
  if (too_long(step) || !(end_us <= kMaxTraceTimeUs))
    throw models::InputError({}, 0, culprit,
                             fmt::format("the planted figures give a step of {:g} s ({} steps): {}", step, steps, bound));
}

}  // namespace

SyntheticRun synthetic_ring_run(const models::ResolvedScenario& s, const PlantedLink& link, int steps, double other_compute_s) {
  if (!(link.bandwidth_bytes_per_s > 0) || !(link.latency_s >= 0) || !std::isfinite(link.bandwidth_bytes_per_s) ||
      !std::isfinite(link.latency_s))
    throw models::InputError({}, 0, "link", "expected a positive bandwidth and a non-negative latency");
  if (steps < 1 || steps > 1000) throw models::InputError({}, 0, "steps", "expected 1 to 1000 steps");
  if (!(other_compute_s >= 0) || !std::isfinite(other_compute_s))
    throw models::InputError({}, 0, "other_compute_s", "expected a non-negative time");
  const std::int64_t n = s.spec.sp, layers = std::max<std::int64_t>(1, s.model.layers);
  // Every rank writes steps x 2 passes x layers x n rounds of calls and transfers (a few each):
  // bounded before anything is built, so a 1024-device ring of a 80-layer model is refused, not
  // written for an hour.
  const double event_count = 2.0 * steps * static_cast<double>(layers) * static_cast<double>(n) * 6.0 * static_cast<double>(n);
  if (event_count > 5e7)
    throw models::InputError({}, 0, "mesh",
                             fmt::format("about {:.3g} trace events (steps x passes x layers x rounds x ranks): at most 5e7; "
                                         "use fewer steps, devices or layers", event_count));
  const auto calls = ring_kernel_calls(s);
  const double kv = static_cast<double>(s.workload->kv_block_bytes());
  const double dkv = static_cast<double>(models::dkv_block_bytes(s, s.workload->kv_block_bytes()));
  constexpr double kBaseUs = 1e12;  // an epoch-like first timestamp
  check_planted_times(calls, link, kv, dkv, n, layers, steps, other_compute_s, kBaseUs);
  SyntheticRun run;
  run.exposed_per_step.assign(static_cast<std::size_t>(n), 0.0);
  run.attention_per_step.assign(static_cast<std::size_t>(n), 0.0);
  std::vector<std::vector<std::string>> events(static_cast<std::size_t>(n));
  std::vector<std::int64_t> correlation(static_cast<std::size_t>(n), 1);
  const auto us = [&](double sec) { return fmt::format("{:.6f}", kBaseUs + sec * 1e6); };
  const auto emit = [&](std::int64_t r, const std::string& name, int stream, double start, double dur, std::int64_t ext,
                        const std::string& extra) {
    auto& ev = events[static_cast<std::size_t>(r)];
    const std::int64_t corr = correlation[static_cast<std::size_t>(r)]++;
    ev.push_back(fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 1, "args": {{"correlation": {}}}}})",
                             us(start - 2e-6), corr));
    ev.push_back(fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": {}, "ts": {}, "dur": {:.6f}, "args": {{"device": 0, "stream": {}, "correlation": {}, "External id": {}{}}}}})",
                             name, stream, us(start), dur * 1e6, stream, corr, ext, extra));
  };
  const auto send = [&](double bytes) {
    return fmt::format(R"(, "Collective name": "send", "In msg nelems": {:.0f}, "Out msg nelems": {:.0f}, "dtype": "Byte", "Group size": {})",
                       bytes, bytes, n);
  };
  double t = 0;
  std::int64_t ext = 1;
  for (int step = 0; step < steps; ++step) {
    const double step_start = t;
    t += 10e-6;
    for (const bool fwd : {true, false})
      for (std::int64_t layer = 0; layer < layers; ++layer) {
        for (std::int64_t round = 0; round < n; ++round) {
          // This round's transfers: K/V to the next rank (not after the last round); backward also
          // dK/dV every round (the last one carries them home).
          std::vector<std::pair<double, int>> transfers;
          if (round + 1 < n) transfers.push_back({kv, 20});
          if (!fwd) transfers.push_back({dkv, 21});
          double longest = 0;
          for (const auto& tr : transfers) longest = std::max(longest, link.seconds(tr.first));
          std::vector<double> compute(static_cast<std::size_t>(n), 0.0);
          for (std::int64_t r = 0; r < n; ++r) {
            double at = t;
            for (const auto& c : calls[static_cast<std::size_t>(r)]) {
              if (c.round != round) continue;
              const double d = fwd ? c.time.fwd_s : c.time.bwd_s;
              emit(r, fwd ? "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>"
                          : "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128>>",
                   7, at, d, ext++, "");
              at += d;
            }
            compute[static_cast<std::size_t>(r)] = at - t;
            for (const auto& tr : transfers) emit(r, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", tr.second, t,
                                                   link.seconds(tr.first), ext++, send(tr.first));
            if (step == 0) {
              run.exposed_per_step[static_cast<std::size_t>(r)] += std::max(0.0, longest - (at - t));
              run.attention_per_step[static_cast<std::size_t>(r)] += at - t;
            }
          }
          t += std::max(longest, *std::max_element(compute.begin(), compute.end()));
        }
        // The layer's work outside attention, on every rank alike.
        if (other_compute_s > 0) {
          const double d = other_compute_s / static_cast<double>(layers) * (fwd ? 1.0 / 3.0 : 2.0 / 3.0);
          for (std::int64_t r = 0; r < n; ++r) emit(r, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 7, t, d, ext++, "");
          t += d;
        }
      }
    t += 10e-6;
    for (std::int64_t r = 0; r < n; ++r)
      events[static_cast<std::size_t>(r)].push_back(
          fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": 1, "tid": 1, "ts": {}, "dur": {:.6f}}})",
                      step + 1, us(step_start), (t - step_start) * 1e6));
    t += 100e-6;
  }
  for (std::int64_t r = 0; r < n; ++r) {
    std::string doc = fmt::format(R"({{"schemaVersion": 1, "distributedInfo": {{"backend": "nccl", "rank": {}, "world_size": {}}}, "traceEvents": [)", r, n);
    const auto& ev = events[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < ev.size(); ++i) doc += (i ? ",\n" : "\n") + ev[i];
    run.traces.push_back(doc + "\n]}\n");
  }
  return run;
}

}  // namespace ringsim::calibration
