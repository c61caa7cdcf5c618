#pragma once
// Charts of sweep results (the CSV `ringsim sweep` writes):
//  - speedup:    step time of a baseline layout / another layout, vs n_seq, a line per device
//                count (and per any other axis that varies);
//  - throughput: tokens/s vs devices, a line per layout (the best mesh at each device count);
//  - exposed:    heatmap of exposed communication (ring transfers and gradient sync not hidden by
//                compute) as a share of the step, n_seq x devices, the least exposed
//                configuration of each cell;
//  - memory:     memory per device vs n_seq, a line per recomputation / ZeRO stage / mesh, with
//                the device's capacity;
//  - crossover:  prefill rows (sweep --phase prefill): pass-Q's time to first token over pass-KV's
//                against the cache-hit rate P/(P+T), a line per model (GQA ratio) and any other
//                axis that varies, with the equal-time line and, given --mark, closed-form
//                crossovers as vertical lines in their series' colour.
// Rows whose status is not "ok" are left out; --where col=value pairs select rows.
#include <string>
#include <utility>
#include <vector>

#include "planning/chart.hpp"
#include "planning/table.hpp"

namespace ringsim::planning {

enum class PlotKind { Speedup, Throughput, Exposed, Memory, Crossover };

// The chart kinds, as data: the name `--kind` takes, what it draws (the command's help) and
// whether it is a heatmap (else a line chart). A new kind is a row here and its case in
// line_chart or heatmap.
struct PlotKindInfo {
  const char* name;
  PlotKind kind;
  const char* help;
  bool heatmap;
};
[[nodiscard]] const std::vector<PlotKindInfo>& plot_kinds();
// A kind's name from plot_kinds(); InputError (field "kind") naming them otherwise.
[[nodiscard]] PlotKind parse_plot_kind(const std::string& text);
// "speedup (...) | throughput (...) | ...": the kinds and what each draws.
[[nodiscard]] std::string plot_kinds_help();

struct PlotRequest {
  PlotKind kind = PlotKind::Speedup;
  std::vector<std::pair<std::string, std::string>> where;  // column = value, all must hold
  std::string baseline = "contiguous";                     // speedup: the layout divided by
  std::string layout = "striped";                          // speedup: the layout it is compared with
  std::string title;                                       // empty: one made from the kind
  // crossover: (series label, cache-hit rate) pairs drawn as vertical lines in that series'
  // colour, e.g. a closed form's crossover; the label must be a series of the chart.
  std::vector<std::pair<std::string, double>> marks;
  std::string marks_label = "closed-form crossover";
};

// "col=value"; InputError (field "where") otherwise.
[[nodiscard]] std::pair<std::string, std::string> parse_where(const std::string& text);
// "SERIES=RATE" with RATE in [0, 1) (the last '=' splits: series labels may hold one);
// InputError (field "mark") otherwise.
[[nodiscard]] std::pair<std::string, double> parse_mark(const std::string& text);

// InputError naming the file and column when the table lacks what the chart needs, or a value
// is malformed, or nothing is left to draw.
[[nodiscard]] LineChart line_chart(const Table& t, const PlotRequest& r);
[[nodiscard]] Heatmap heatmap(const Table& t, const PlotRequest& r);
void plot(const Table& t, const PlotRequest& r, const std::string& svg_path, const std::string& png_path);

}  // namespace ringsim::planning
