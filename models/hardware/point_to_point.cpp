#include "models/hardware/point_to_point.hpp"

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"

namespace ringsim::models {
namespace {

std::optional<PointToPointHop> hop_from(const JsonFields& f, const std::string& key) {
  if (!f.find(key)) return std::nullopt;
  PointToPointHop h;
  // Bounds: a hop between 1 MB/s and 10 TB/s, a floor below one second.
  h.bandwidth_bytes_per_s = f.number(key + ".bandwidth_bytes_per_s");
  if (!(h.bandwidth_bytes_per_s >= 1e6 && h.bandwidth_bytes_per_s <= 1e13))
    throw InputError(f.file(), 0, key + ".bandwidth_bytes_per_s", "expected a value in [1e6, 1e13] bytes/s");
  h.latency_s = f.number(key + ".latency_s");
  if (!(h.latency_s >= 0 && h.latency_s <= 1)) throw InputError(f.file(), 0, key + ".latency_s", "expected [0, 1] s");
  h.bandwidth_se = f.optional_number(key + ".bandwidth_se").value_or(0);
  h.latency_se = f.optional_number(key + ".latency_se").value_or(0);
  h.held_out_mape = f.optional_number(key + ".held_out_mape").value_or(0);
  h.rows = f.integer_or(key + ".rows", 0, std::int64_t{1} << 30, 0);
  h.pattern = f.string_or(key + ".pattern", "");
  return h;
}

nlohmann::json hop_json(const PointToPointHop& h) {
  return {{"bandwidth_bytes_per_s", h.bandwidth_bytes_per_s}, {"latency_s", h.latency_s},
          {"bandwidth_se", h.bandwidth_se},                   {"latency_se", h.latency_se},
          {"held_out_mape", h.held_out_mape},                 {"rows", h.rows},
          {"pattern", h.pattern}};
}

}  // namespace

PointToPoint PointToPoint::from_json(const nlohmann::json& j, const std::string& file) {
  JsonFields f(j, file);
  PointToPoint p;
  p.hardware = f.string("hardware");
  p.probe_name = f.string_or("probe_name", "");
  p.fitted_from = f.string("fitted_from");
  p.date = f.string_or("date", "");
  p.notes = f.string_or("notes", "");
  p.intra_node = hop_from(f, "intra_node");
  p.inter_node = hop_from(f, "inter_node");
  if (!p.intra_node && !p.inter_node) throw InputError(file, 0, "intra_node", "expected intra_node or inter_node hops");
  f.reject_unread("point-to-point file");
  return p;
}

PointToPoint PointToPoint::load_file(const std::string& path) { return from_json(read_json_file(path), path); }

nlohmann::json PointToPoint::to_json() const {
  nlohmann::json j = {{"hardware", hardware}, {"probe_name", probe_name}, {"fitted_from", fitted_from},
                      {"date", date},         {"notes", notes}};
  if (intra_node) j["intra_node"] = hop_json(*intra_node);
  if (inter_node) j["inter_node"] = hop_json(*inter_node);
  return j;
}

}  // namespace ringsim::models
