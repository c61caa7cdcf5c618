// The CUPTI collector and device info on a real GPU: records come back with GPU timestamps, the
// right launch configuration and the tag that was open at launch. Needs a GPU (gpu_skip.cpp).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "calibration/cupti/collector.hpp"
#include "calibration/cupti/device_info.hpp"
#include "kernels/cuda/flash_fwd.hpp"
#include "kernels/schedule.hpp"
#include "tests/kernels_cuda/gpu_helpers.hpp"

namespace kc = ringsim::kernels::cuda;
using ringsim::calibration::CuptiCollector;
using ringsim::calibration::CuptiError;
using ringsim::calibration::KernelRecord;
using ringsim::calibration::LaunchTag;
using namespace ringsim::test;

TEST_CASE("CUPTI records map flash-attention launches back to their tags", "[calibration][cupti][cuda]") {
  const int rows = 256, heads = 2, D = 64;
  ringsim::kernels::ScheduleSpec spec;
  spec.q_pos = ringsim::kernels::strided_positions(0, 1, rows);
  spec.k_pos = ringsim::kernels::strided_positions(0, 1, rows);
  const kc::ScheduleBuffer sb(ringsim::kernels::build_schedule(spec));
  DeviceArray<std::uint16_t> qkv(static_cast<std::size_t>(rows) * heads * D);
  cuda_check(cudaMemset(qkv.get(), 0, static_cast<std::size_t>(rows) * heads * D * 2), "cudaMemset");
  DeviceArray<float> out(static_cast<std::size_t>(rows) * heads * D), lse(static_cast<std::size_t>(rows) * heads);
  kc::FlashArgs a;
  a.head_dim = D;
  a.q_heads = a.kv_heads = heads;
  a.q = a.k = a.v = qkv.get();
  a.out = out.get();
  a.lse = lse.get();
  a.schedule = sb.view();
  kc::launch_flash_fwd(a, nullptr);  // warm-up outside the collector: module load, attributes
  cuda_check(cudaDeviceSynchronize(), "warm-up");

  CuptiCollector collector;
  CHECK(collector.running());
  CHECK_THROWS_AS(CuptiCollector(), CuptiError);  // one per process
  for (int round = 0; round < 3; ++round) {
    const auto scope = collector.tag(LaunchTag{round, 5, 64, 64, "causal"});
    kc::launch_flash_fwd(a, nullptr);
  }
  kc::launch_flash_fwd(a, nullptr);  // untagged
  cuda_check(cudaDeviceSynchronize(), "tagged launches");
  const std::vector<KernelRecord> all = collector.take_records();
  std::vector<KernelRecord> flash;
  std::copy_if(all.begin(), all.end(), std::back_inserter(flash),
               [](const KernelRecord& r) { return r.name.find("flash_fwd_kernel") != std::string::npos; });
  REQUIRE(flash.size() == 4);
  for (int i = 0; i < 4; ++i) {
    const KernelRecord& r = flash[static_cast<std::size_t>(i)];
    INFO("record " << i << ": " << r.name);
    CHECK(r.end_ns > r.start_ns);
    CHECK(r.duration_s() > 0);
    CHECK(r.grid[0] == 4);  // 256 rows / 64-row CTAs
    CHECK(r.grid[1] == heads);
    CHECK(r.block[0] == 128);
    CHECK(r.registers_per_thread > 0);
    if (i < 3) {
      REQUIRE(r.tag.has_value());
      CHECK(r.tag->round == i);
      CHECK(r.tag->device == 5);
      CHECK(r.tag->tile_q == 64);
      CHECK(r.tag->label == "causal");
    } else {
      CHECK_FALSE(r.tag.has_value());
    }
  }
  CHECK(collector.dropped_records() == 0);
  collector.stop();
  CHECK_FALSE(collector.running());
}

TEST_CASE("device info for the timings CSV", "[calibration][cupti][cuda]") {
  const auto info = ringsim::calibration::query_device_info(0);
  CHECK_FALSE(info.name.empty());
  CHECK(info.sm_count > 0);
  CHECK(info.cc_major >= 8);
  CHECK(info.sm_clock_khz > 0);
  CHECK(info.driver_version > 0);
  CHECK(info.runtime_version > 0);
  CHECK(info.memory_bytes > 0);
  const auto fields = ringsim::calibration::csv_fields(info);
  REQUIRE(fields.size() == 13);
  CHECK(fields[1].first == "device_name");
  CHECK(fields[1].second == info.name);
  CHECK_THROWS(ringsim::calibration::query_device_info(1 << 20));
}
