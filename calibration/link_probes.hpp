#pragma once
// Point-to-point hops fitted from NCCL probes (data/components/links/: one message size per row,
// the bandwidth one directed pair reached while the probe's pattern of pairs sent at once). Per
// hop type, time = latency + bytes / bandwidth, by least squares on relative time error over the
// sizes a ring sends (at least kRingMessageBytes), with standard errors and a leave-one-size-out
// error. The result is a models::PointToPoint (configs/links/HARDWARE.json).
#include <cstdint>
#include <string>
#include <vector>

#include "models/hardware/point_to_point.hpp"

namespace ringsim::calibration {

// The smallest message the fit keeps: a ring step's K/V block is larger (e.g. 1 MB is 2k tokens
// of one 128-wide bf16 K/V head pair), and below it NCCL's protocols change (LL, LL128) with
// their own floors, which a ring step never sees.
inline constexpr double kRingMessageBytes = 1 << 20;

struct ProbeRow {
  std::string hardware;  // as the probe file names the GPU
  std::string pattern;   // which pairs sent at once
  bool inter_node = false;
  bool ring = false;     // every GPU of the node sending to its ring neighbour at once
  double bytes = 0;
  double seconds = 0;    // one message: bytes / the printed per-pair bandwidth
  std::int64_t line = 0;
};

struct HopFit {
  models::PointToPointHop hop;
  std::vector<double> bytes, measured_s, fitted_s, held_out_s;  // the rows fitted, in file order
};

// time = latency + bytes / bandwidth over `rows` (one hop type, sizes >= min_bytes).
// InputError (field "size_bytes") with fewer than 3 sizes or a non-positive fitted bandwidth.
// min_bytes: a caller that chose its rows by another size (nccl_tests.hpp: by the collective's
// size, each row then scaled to one ring step) passes 0.
[[nodiscard]] HopFit fit_hop(const std::vector<ProbeRow>& rows, const std::string& file,
                             double min_bytes = kRingMessageBytes);

// The hops of one GPU: intra_node from its ring pattern when probed (what a ring does: every GPU
// sends and receives at once), else its one-pair pattern; inter_node from its cross-node pattern.
struct HardwareFit {
  models::PointToPoint links;
  HopFit intra, inter;
};
[[nodiscard]] HardwareFit fit_hardware(const std::vector<ProbeRow>& rows, const std::string& probe_prefix,
                                       const std::string& catalog_name, const std::string& file);

}  // namespace ringsim::calibration
