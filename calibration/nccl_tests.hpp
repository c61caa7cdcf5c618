#pragma once
// Links from nccl-tests output (NVIDIA/nccl-tests: sendrecv_perf, all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, alltoall_perf): what users already have from their cluster. The parser reads
// the program's stdout as printed (header lines, "# Using devices" rank lines, the results table,
// "# Avg bus bandwidth"), also when pasted indented or interleaved with NCCL INFO lines; the fit
// turns each size's time into one ring step of a hop and fits it with fit_hop (link_probes.hpp).
//
// Why the bus bandwidth is a per-link figure: nccl-tests defines busbw = algbw x a factor per
// collective chosen so that it "reflects the speed of the hardware bottleneck" independently of
// the number of ranks n (repository NVIDIA/nccl-tests, doc/PERFORMANCE.md @ 03a204a1f38a:
// AllReduce 2(n-1)/n, ReduceScatter and AllGather (n-1)/n, AlltoAll (n-1)/n; SendRecv 1, from
// src/sendrecv.cu @ 29f4114f027f SendRecvGetBw). In a ring each rank's link carries size x factor
// bytes, in `steps` sequential steps of size x factor / steps bytes (all_reduce: 2(n-1) steps of
// size/n; all_gather, reduce_scatter: n-1 steps of size/n; sendrecv and alltoall: one step, every
// peer's part sent at once). Time / steps is then one ring step: latency + bytes / bandwidth, the
// models::PointToPointHop a ring attention step pays.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/link_probes.hpp"

namespace ringsim::calibration {

enum class NcclCollective { all_reduce, all_gather, reduce_scatter, alltoall, sendrecv };

// "all_reduce" etc.: the test binary's name without "_perf".
[[nodiscard]] std::string_view collective_name(NcclCollective c) noexcept;
// From "all_reduce" or "all_reduce_perf"; nullopt for anything else.
[[nodiscard]] std::optional<NcclCollective> collective_from_name(std::string_view name) noexcept;

// One row of the results table; time and bandwidths are the out-of-place columns (the in-place
// busbw is kept for the "# Avg bus bandwidth" line, which averages both).
struct NcclTestsRow {
  NcclCollective collective = NcclCollective::sendrecv;
  double size_bytes = 0;
  double time_us = 0;
  double algbw = 0, busbw = 0;  // GB/s (1e9 bytes/s), as printed
  double in_place_busbw = -1;   // -1 where not printed as a number
  int ranks = 0;
  std::int64_t line = 0;
};

struct NcclTestsFile {
  std::string file;
  NcclCollective collective = NcclCollective::sendrecv;
  std::string collective_from;  // where the test was named: "line N" or "--collective"
  int ranks = 0;                // "#  Rank" lines, else from busbw / algbw (see ranks_from)
  std::string ranks_from;       // "Rank lines" or "busbw/algbw ratio" or "" (sendrecv: not needed)
  int hosts = 0;                // distinct hosts of the Rank lines (0: none printed)
  std::string gpu;              // the device name of the first Rank line
  std::optional<double> avg_busbw;  // "# Avg bus bandwidth" line
  std::vector<NcclTestsRow> rows;
};

// Larger is not nccl-tests output (a sweep with NCCL INFO logging is a few MB).
inline constexpr std::int64_t kMaxNcclTestsFileBytes = std::int64_t{64} << 20;
// The largest size accepted (1 PiB): beyond any GPU's memory, so a typo, not a measurement.
inline constexpr double kMaxNcclTestsSizeBytes = 1125899906842624.0;

// `collective_option` ("" or a name as collective_from_name takes it) names the test when the file
// does not, and must agree when it does. Every problem is an InputError naming the file, line and
// field (the table's column names; "table", "collective", "ranks", "avg_busbw").
[[nodiscard]] NcclTestsFile read_nccl_tests(const std::string& path, const std::string& collective_option = "");
[[nodiscard]] NcclTestsFile parse_nccl_tests(std::string_view text, const std::string& file,
                                             const std::string& collective_option = "");

// The bus-bandwidth factor and the ring's sequential steps of a collective over n ranks (above).
struct NcclRing {
  double factor = 1;
  int steps = 1;
};
[[nodiscard]] NcclRing nccl_ring(NcclCollective c, int ranks) noexcept;

// The rows of sizes >= kRingMessageBytes as one ring step each (bytes = size x factor / steps,
// seconds = time / steps), for fit_hop(rows, file, 0). `hardware` and `pattern` label them.
[[nodiscard]] std::vector<ProbeRow> nccl_hop_rows(const NcclTestsFile& f, const std::string& hardware,
                                                  const std::string& pattern);

}  // namespace ringsim::calibration
