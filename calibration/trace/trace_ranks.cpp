#include "calibration/trace/trace_ranks.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "models/io/error.hpp"

namespace ringsim::calibration {

std::vector<std::int64_t> ring_positions(const std::vector<TraceRank>& traces, std::int64_t ring_size) {
  using models::InputError;
  const auto how = [](const TraceRank& t) {
    return t.rank >= 0 ? std::string("its recorded rank") : std::string("its place in the list: no rank recorded");
  };
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    out.push_back(traces[i].rank >= 0 ? traces[i].rank : static_cast<std::int64_t>(i));
    if (out.back() >= ring_size)
      throw InputError(traces[i].file, 0, "rank",
                       fmt::format("rank {} ({}) is outside the scenario's ring of {} devices (a trace's rank is its ring "
                                   "position: context parallelism over every rank; check --mesh)",
                                   out.back(), how(traces[i]), ring_size));
  }
  const std::set<std::int64_t> held(out.begin(), out.end());
  std::map<std::int64_t, std::size_t> first;  // position -> the first trace holding it
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const auto [it, fresh] = first.emplace(out[i], i);
    if (fresh) continue;
    std::string missing;
    for (std::int64_t r = 0; r < ring_size && static_cast<std::int64_t>(traces.size()) >= ring_size; ++r)
      if (!held.count(r)) {
        missing = fmt::format(", and no trace holds rank {}", r);
        break;
      }
    throw InputError(traces[i].file, 0, "rank",
                     fmt::format("rank {} ({}) is also the rank of {}: one trace per rank{} (a file given twice?)", out[i],
                                 how(traces[i]), traces[it->second].file, missing));
  }
  return out;
}

}  // namespace ringsim::calibration
