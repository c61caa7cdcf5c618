#pragma once
// Measured point-to-point hops: what one NCCL send/recv of a ring library reaches on a hop type,
// fitted from probes (configs/links/HARDWARE.json, written by `ringsim calibrate --from-probes`).
// A hop of s bytes takes latency_s + s / bandwidth_bytes_per_s over the sizes a ring sends (the
// fit keeps messages of at least 1 MB: a K/V block of one ring step is larger than that for any
// model and context ringsim plans). The latency is the probe's per-message floor: NCCL's launch,
// the handshake with the peer and the host's loop around it, which the link's spec latency lacks.
//
// Two hop types: intra_node (GPU to GPU through NVLink/NVSwitch, one pair sending both ways at
// once, as each ring position sends and receives) and inter_node (per GPU, every GPU of the node
// sending across at once: the NICs are shared by the whole node's traffic, as in a ring or a
// double ring that crosses nodes). Each carries its standard errors and its leave-one-size-out
// error. Where a hardware has no probe file its hops are the link spec at the profile's
// link_efficiency (models/cost/cost.hpp), and the output says so.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace ringsim::models {

struct PointToPointHop {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
  double bandwidth_se = 0, latency_se = 0;  // standard errors of the fit
  double held_out_mape = 0;                 // leave-one-size-out, relative time error
  std::int64_t rows = 0;                    // probe sizes fitted
  std::string pattern;                      // what was probed ("intra-node, 1 GPU pair, ...")
};

struct PointToPoint {
  std::string hardware;     // the catalog name the fit belongs to
  std::string probe_name;   // the name the probe file gives the GPU (A800, H800, A100)
  std::string fitted_from;  // the probe file and its source
  std::string date;
  std::string notes;
  std::optional<PointToPointHop> intra_node, inter_node;

  [[nodiscard]] const std::optional<PointToPointHop>& hop(bool inter) const noexcept {
    return inter ? inter_node : intra_node;
  }
  [[nodiscard]] static PointToPoint from_json(const nlohmann::json& j, const std::string& file);
  [[nodiscard]] static PointToPoint load_file(const std::string& path);
  [[nodiscard]] nlohmann::json to_json() const;
};

}  // namespace ringsim::models
