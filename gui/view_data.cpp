#include "gui/view_data.hpp"

#include <cmath>

#include <fmt/format.h>

#include "models/analytic/breakdown.hpp"
#include "models/io/csv_text.hpp"
#include "models/io/error.hpp"
#include "models/workload/workload.hpp"

namespace ringsim::gui {

namespace {

// Shortest text that reads back to the same double ("" for NaN: no value).
std::string num(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string(); }

const char* kind_key(SpanKind k) {
  switch (k) {
    case SpanKind::Compute: return "attention";
    case SpanKind::Other: return "other";
    case SpanKind::Wait: return "wait";
    case SpanKind::Transfer: return "kv_transfer";
    case SpanKind::GradTransfer: return "dkv_transfer";
  }
  return "";
}

}  // namespace

std::string heatmap_csv(const RunResult& result) {
  std::string out = models::csv_line({"layout", "device", "round", "kv_block_of", "visited_area", "allowed_pairs", "tiles_computed"});
  for (const auto& run : result.layouts)
    for (std::int64_t d = 0; d < run.n; ++d)
      for (std::int64_t r = 0; r < run.n; ++r) {
        const auto k = static_cast<std::size_t>(d * run.n + r);
        out += models::csv_line({run.layout, std::to_string(d), std::to_string(r),
                                 std::to_string(models::Workload::kv_block_of(d, r, run.n)), num(run.area.at(k)),
                                 num(run.pairs.at(k)), num(run.tiles.at(k))});
      }
  return out;
}

std::string timeline_csv(const Timeline& timeline) {
  std::string out = models::csv_line({"lane", "kind", "name", "round", "start_s", "end_s"});
  for (const auto& s : timeline.spans)
    out += models::csv_line({timeline.lanes.at(static_cast<std::size_t>(s.lane)), kind_key(s.kind), s.name,
                             s.round >= 0 ? std::to_string(s.round) : std::string(), num(s.start_s), num(s.end_s)});
  return out;
}

std::string matrix_csv(const LayoutRun& run, std::int64_t max_rows) {
  const auto& s = *run.scenario;
  const auto& w = *s.workload;
  const std::int64_t n = run.n;
  std::string out = models::csv_line({"q_device", "q_tile", "kv_device", "k_tile", "round"});
  std::int64_t rows = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t r = 0; r < n; ++r) {
      const auto kd = models::Workload::kv_block_of(j, r, n);
      // A tile is listed once, whatever heads it is computed for.
      std::vector<std::pair<std::int64_t, std::int64_t>> seen;
      w.for_each_tile(r, j, [&](std::int64_t, const models::TileCount& t) {
        if (!t.visited) return;
        const std::pair<std::int64_t, std::int64_t> key{t.q_tile, t.k_tile};
        for (const auto& k : seen)
          if (k == key) return;
        seen.push_back(key);
        if (++rows > max_rows)
          throw models::InputError({}, 0, "matrix", fmt::format("more than {} computed tiles: too many to export", max_rows));
        out += fmt::format("{},{},{},{},{}\n", j, t.q_tile, kd, t.k_tile, r);
      });
    }
  return out;
}

std::string charts_csv(const RunResult& result) {
  std::string out = models::csv_line({"layout", "quantity", "key", "value_s"});
  for (const auto& run : result.layouts) {
    for (std::size_t i = 0; i < result.sweep_n_seq.size() && i < run.sweep_step_s.size(); ++i)
      out += models::csv_line({run.layout, "step", std::to_string(result.sweep_n_seq[i]), num(run.sweep_step_s[i])});
    const auto parts = models::pass_breakdown(run.prediction, run.prediction.step_s);
    for (std::size_t i = 0; i < models::kStepParts; ++i)
      out += models::csv_line({run.layout, "part", models::part_info(models::step_part(i)).key, num(parts.s[i])});
  }
  return out;
}

std::string compare_csv(const std::vector<CompareRow>& rows) {
  std::string out = models::csv_line({"strategy", "impl", "kernel", "layout", "step_s", "step_lo_s", "step_hi_s", "why", "refused"});
  for (const auto& r : rows) {
    if (r.refused) {
      out += models::csv_line({r.strategy, r.impl, r.kernel, r.layout, "", "", "", "", *r.refused});
      continue;
    }
    out += models::csv_line({r.strategy, r.impl, r.kernel, r.layout, num(r.prediction.step_s),
                             r.step.available ? num(r.step.lo) : std::string(), r.step.available ? num(r.step.hi) : std::string(),
                             r.why, ""});
  }
  return out;
}

}  // namespace ringsim::gui
