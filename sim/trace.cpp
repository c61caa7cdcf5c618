#include "sim/trace.hpp"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace ringsim::sim {

std::string chrome_trace_json(const StepResult& r) {
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t lane = 0; lane < r.lanes.size(); ++lane)
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", 0}, {"tid", lane}, {"args", {{"name", r.lanes[lane]}}}});
  for (const auto& s : r.trace) {
    nlohmann::json e = {{"ph", "X"}, {"name", s.name}, {"pid", 0}, {"tid", s.lane}, {"ts", s.start_s * 1e6}, {"dur", s.duration_s * 1e6}};
    // Perfetto shows an event's args on click: the round of an attention span.
    if (s.round >= 0) e["args"] = {{"round", s.round}};
    events.push_back(std::move(e));
  }
  nlohmann::json doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ns";
  doc["metadata"] = {{"topology", r.topology}, {"step_s", r.step_s}, {"truncated", r.trace_truncated}};
  return doc.dump() + "\n";
}

std::string matrices_csv(const StepResult& r) {
  std::string out = "device,round,compute_s,wait_s,kv_transfer_s\n";
  char buf[160];
  for (std::int64_t d = 0; d < r.devices; ++d)
    for (std::int64_t i = 0; i < r.rounds; ++i) {
      const auto k = static_cast<std::size_t>(d * r.rounds + i);
      std::snprintf(buf, sizeof buf, "%lld,%lld,%.9g,%.9g,%.9g\n", static_cast<long long>(d),
                    static_cast<long long>(i), r.compute_s[k], r.wait_s[k], r.transfer_s[k]);
      out += buf;
    }
  return out;
}

}  // namespace ringsim::sim
