#pragma once
// Which ring position each trace of a run is: its recorded rank (distributedInfo, or RANK in an
// nsys report's environment), else its place in the list of files. One position per device:
// calibrate --from-trace pairs a trace's kernels with that device's calls, and check --trace takes
// its critical rank among them, so a trace given twice (and another missing) or a rank outside the
// ring would be fitted or compared as something it is not.
#include <cstdint>
#include <string>
#include <vector>

namespace ringsim::calibration {

struct TraceRank {
  std::string file;
  std::int64_t rank = -1;  // -1: not recorded
};

// The ring position of each trace, in order. InputError naming the file(s) for a rank outside
// 0 .. ring_size - 1, for two traces of one position (both files, and the position no trace holds
// when there are as many traces as devices). Fewer traces than devices are accepted: tracing some
// ranks only is common.
[[nodiscard]] std::vector<std::int64_t> ring_positions(const std::vector<TraceRank>& traces, std::int64_t ring_size);

}  // namespace ringsim::calibration
