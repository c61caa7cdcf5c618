// `ringsim measure` (CUDA builds): kernel timings for `ringsim calibrate --from-timings`, in the
// columns of docs/timings-format.md, one row per timed launch.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/calibrate_common.hpp"
#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/gpu_common.hpp"
#include "kernels/schedule.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using kernels::ScheduleSpec;
using kernels::TileKind;
using models::InputError;

namespace {

// One mask family at one block size: a name for the CSV and how to build the block's spec.
struct MaskCase {
  std::string kind;  // mask_kind column
  TileKind rule = TileKind::Causal;
  std::int32_t window_div = 0;   // Window: window = n / window_div
  std::int32_t doc_div = 0;      // IndexRanges with documents of n / doc_div tokens
  std::int32_t hash_buckets = 0; // IndexRanges with random buckets (no tile skipping, low fraction)
  bool k_before_q = false;       // the K/V block lies wholly before the Q block: every pair allowed
  std::int32_t stripe = 0;       // > 0: striped block pair of a ring of `stripe` devices
};

// The masks span allowed fractions from ~1/32 to 1 and both tile-skipping regimes (diagonal
// blocks skip tiles; striped and hash blocks visit every tile with masked pairs in each), which
// is what the masked_tile_penalty and tile_overhead_s terms need to be told apart.
std::vector<MaskCase> mask_cases() {
  return {
      {"full", TileKind::Full, 0, 0, 0, true, 0},
      {"causal", TileKind::Causal, 0, 0, 0, false, 0},
      {"causal_striped", TileKind::Causal, 0, 0, 0, false, 8},
      {"window_n/4", TileKind::Window, 4, 0, 0, false, 0},
      {"window_n/16", TileKind::Window, 16, 0, 0, false, 0},
      {"docs_n/4", TileKind::IndexRanges, 0, 4, 0, false, 0},
      {"hash_4", TileKind::IndexRanges, 0, 0, 4, false, 0},
      {"hash_16", TileKind::IndexRanges, 0, 0, 16, false, 0},
  };
}

ScheduleSpec make_spec(const MaskCase& m, std::int32_t n, std::int32_t tile_q, std::int32_t tile_k, std::uint64_t seed) {
  ScheduleSpec s;
  s.tile_q = tile_q;
  s.tile_k = tile_k;
  s.rule = m.rule;
  if (m.stripe > 0) {
    // Device 1's queries against device 0's keys: every tile straddles the diagonal.
    s.q_pos = kernels::strided_positions(1, m.stripe, n);
    s.k_pos = kernels::strided_positions(0, m.stripe, n);
  } else {
    s.q_pos = kernels::strided_positions(m.k_before_q ? n : 0, 1, n);
    s.k_pos = kernels::strided_positions(0, 1, n);
  }
  if (m.rule == TileKind::Window) s.window = std::max(1, n / m.window_div);
  if (m.doc_div > 0) {
    const std::int32_t len = std::max(1, n / m.doc_div);
    for (const auto p : s.q_pos) s.q_bucket.push_back(p / len);
    for (const auto p : s.k_pos) s.k_bucket.push_back(p / len);
  }
  if (m.hash_buckets > 0) {
    // Same token, same bucket: draw per position (q and k positions coincide here).
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int32_t> u(0, m.hash_buckets - 1);
    std::vector<std::int32_t> bucket(static_cast<std::size_t>(2 * n));
    for (auto& b : bucket) b = u(rng);
    for (const auto p : s.q_pos) s.q_bucket.push_back(bucket[static_cast<std::size_t>(p)]);
    for (const auto p : s.k_pos) s.k_bucket.push_back(bucket[static_cast<std::size_t>(p)]);
  }
  return s;
}

struct HeadConfig {
  std::int32_t q_heads, kv_heads;
};

struct Sweep {
  std::vector<std::int32_t> blocks;
  std::vector<std::pair<std::int32_t, std::int32_t>> tiles;
  std::vector<std::int32_t> head_dims;
  std::vector<HeadConfig> heads;
  std::vector<kernels::cuda::DType> dtypes;
};

Sweep sweep(bool quick) {
  using kernels::cuda::DType;
  if (quick) return {{1024, 4096}, {{64, 64}, {128, 128}}, {64, 128}, {{16, 16}}, {DType::BF16}};
  return {{1024, 2048, 4096, 8192, 16384},
          {{64, 64}, {64, 128}, {128, 64}, {128, 128}, {256, 128}},
          {64, 128},
          {{8, 8}, {32, 8}},
          {DType::BF16, DType::FP16}};
}

// Above this many visited pairs the element-by-element allowed count costs more CPU time than the
// launches it describes; the column is optional, so it is left empty there.
constexpr std::int64_t kMaxCountedPairs = std::int64_t{1} << 26;

}  // namespace

int run_measure(int argc, char** argv) {
  cxxopts::Options o("ringsim measure",
                     "Time the CUDA forward kernel over tile shapes, masks, head dims, heads and dtypes (CUPTI) and "
                     "write a timings CSV for `ringsim calibrate --from-timings`");
  o.add_options()("quick", "small sweep (minutes become seconds)")
                 ("repeats", "timed launches per configuration (one CSV row each)", cxxopts::value<std::string>()->default_value("5"))
                 ("warmup", "untimed launches before them", cxxopts::value<std::string>()->default_value("2"))
                 ("device", "CUDA device index", cxxopts::value<std::string>()->default_value("0"))
                 ("seed", "seed for inputs and hash buckets", cxxopts::value<std::string>()->default_value("1"))
                 ("o,output", "timings CSV (written atomically; default stdout)", cxxopts::value<std::string>()->default_value("-"))
                 ("h,help", "show help");
  const auto a = parse_or_throw(o, argc, argv);
  if (help_requested(o, a)) return 0;
  const int repeats = static_cast<int>(models::parse_int_in(a["repeats"].as<std::string>(), "repeats", 1, 1000000));
  const auto warmup = models::parse_int_in(a["warmup"].as<std::string>(), "warmup", 0, 1000000);
  const auto seed_v = models::parse_int(a["seed"].as<std::string>(), "seed");
  if (seed_v < 0) throw InputError({}, 0, "seed", "expected a non-negative integer");
  const auto seed = static_cast<std::uint64_t>(seed_v);
  const auto device = static_cast<std::int32_t>(models::parse_int_in(a["device"].as<std::string>(), "device", 0, 4096));
  const Sweep sw = sweep(a.count("quick") > 0);

  gpu::require_device(device);
  const auto info = calibration::query_device_info(device);
  const auto extra = calibration::csv_fields(info);
  calibration::CuptiCollector collector;

  std::vector<std::string> header = {"device", "driver", "cuda_version", "sm_clock_mhz", "date", "kernel", "dtype",
                                     "head_dim", "heads", "kv_heads", "batch", "tile_q", "tile_k", "rows", "cols",
                                     "tiles_visited", "visited_area", "masked_area", "allowed_pairs", "mask_kind",
                                     "allowed_fraction", "duration_s", "repeat"};
  for (const auto& [name, value] : extra) header.push_back(name);
  std::string csv = fmt::format(
      "# ringsim measure{}: schedule-driven FA2-class forward kernel, CUPTI activity durations, {} warm-up + {} timed "
      "launches per configuration\n# sm_clock_mhz is the driver's peak SM clock; lock clocks (nvidia-smi -lgc) for "
      "stable timings\n",
      a.count("quick") ? " --quick" : "", warmup, repeats);
  csv += csv_line(header);
  const std::string date = today();
  const std::string driver = gpu::cuda_version_text(info.driver_version);
  const std::string runtime = gpu::cuda_version_text(info.runtime_version);
  const std::string clock = std::to_string(info.sm_clock_khz / 1000);
  // Inputs are allocated and filled once per (block, dtype, head config), schedules once per
  // block: filling 16k-token blocks on the host costs more than timing them.
  struct Measured {
    const MaskCase* mask;
    std::int32_t tile_q, tile_k;
    kernels::TileSchedule schedule;
    kernels::cuda::ScheduleBuffer device_schedule;
    std::int64_t visited = 0, masked = 0, allowed = -1;  // allowed < 0: not counted
  };
  const auto masks = mask_cases();
  std::size_t configs = 0;
  for (const auto n : sw.blocks) {
    std::vector<Measured> blocks;
    for (const auto& [tq, tk] : sw.tiles) {
      if (tq > n || tk > n) continue;
      for (const auto& m : masks) {
        auto schedule = kernels::build_schedule(make_spec(m, n, tq, tk, seed));
        if (schedule.items.empty()) continue;
        Measured b{&m, tq, tk, {}, kernels::cuda::ScheduleBuffer(schedule), schedule.visited_pairs(), 0, -1};
        for (const auto& it : schedule.items) {
          if (it.kind != TileKind::Full)
            b.masked += std::int64_t{schedule.q_tile_rows(it.q_tile)} * schedule.k_tile_cols(it.k_tile);
        }
        if (b.visited <= kMaxCountedPairs) b.allowed = schedule.allowed_pairs();
        b.schedule = std::move(schedule);
        blocks.push_back(std::move(b));
      }
    }
    for (const auto dtype : sw.dtypes) {
      for (const auto d : sw.head_dims) {
        for (const auto& h : sw.heads) {
          const gpu::AttentionBuffers buffers(dtype, n, n, h.q_heads, h.kv_heads, d, seed + configs);
          for (const auto& b : blocks) {
            const calibration::LaunchTag tag{0, device, b.tile_q, b.tile_k, b.mask->kind};
            const auto times =
                gpu::time_launches(collector, buffers.args(b.device_schedule), tag, static_cast<int>(warmup), repeats);
            ++configs;
            const bool counted = b.allowed >= 0;
            for (std::size_t i = 0; i < times.size(); ++i) {
              std::vector<std::string> row = {
                  info.name, driver, runtime, clock, date, "attention_fwd",
                  dtype == kernels::cuda::DType::BF16 ? "bf16" : "fp16", std::to_string(d), std::to_string(h.q_heads),
                  std::to_string(h.kv_heads), "1", std::to_string(b.tile_q), std::to_string(b.tile_k),
                  std::to_string(n), std::to_string(n), std::to_string(b.schedule.items.size()),
                  std::to_string(b.visited), std::to_string(b.masked), counted ? std::to_string(b.allowed) : "",
                  b.mask->kind,
                  counted ? fmt::format("{:.6f}", static_cast<double>(b.allowed) / static_cast<double>(b.visited)) : "",
                  fmt::format("{:.6e}", times[i]), std::to_string(i)};
              for (const auto& [name, value] : extra) row.push_back(value);
              csv += csv_line(row);
            }
          }
        }
      }
    }
  }
  write_output(a["output"].as<std::string>(), csv);
  std::fprintf(stderr, "ringsim measure: %zu configurations x %d launches on %s\n", configs, repeats, info.name.c_str());
  return 0;
}

}  // namespace ringsim::cli
