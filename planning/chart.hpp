#pragma once
// Charts drawn with cairo, without a display: line charts (a log2 or linear x axis, a linear y
// axis, round tick values, axis titles with units, a legend, reference lines) and heatmaps
// (labelled cells, a colour bar). Each is written as SVG and/or PNG, through a temporary file
// renamed into place, so a failed run leaves no half-written picture.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ringsim::planning {

struct Series {
  std::string label;
  std::vector<double> x, y;  // same length; drawn in x order
  // Per point: false where the configuration does not fit in device memory (drawn as an open
  // marker, with a legend entry saying so); empty: every point fits.
  std::vector<bool> fits;
};

struct ReferenceLine {
  std::string label;
  double y = 0;
};

enum class AxisFormat {
  Plain,   // 0.5, 2, 1,500
  Binary,  // 1k = 1024, 1M = 2^20: sequence lengths
  Metric,  // 1.5 k, 20 M: throughputs
  // A share s in (0, 1] on a log2 axis, labelled as the complement 1 - s in per cent: the
  // new-token share T/(P+T) of a prefill read as its cache-hit rate (1/8 -> "87.5%").
  HitRate,
};

// A vertical dashed line at x in the colour of series `series` (an index into the chart's series):
// a value computed apart from the data, e.g. a closed-form crossover.
struct VerticalMark {
  std::size_t series = 0;
  double x = 0;
};

struct LineChart {
  std::string title;
  std::string x_label, y_label;  // with units, e.g. "n_seq (tokens)"
  bool log2_x = true;
  bool reverse_x = false;  // larger x to the left
  AxisFormat x_format = AxisFormat::Binary;
  AxisFormat y_format = AxisFormat::Plain;
  std::optional<double> y_min;   // e.g. 0; else from the data
  std::vector<Series> series;
  std::vector<ReferenceLine> references;  // horizontal dashed lines
  std::vector<VerticalMark> marks;        // vertical dashed lines, one legend entry for all:
  std::string marks_label;                // what they are
};

struct Heatmap {
  std::string title;
  std::string x_label, y_label, value_label;
  std::vector<std::string> x_ticks, y_ticks;  // column and row labels (rows drawn bottom-up)
  std::vector<double> values;                 // row-major, y_ticks.size() x x_ticks.size(); NaN: no data
  double v_min = 0, v_max = 1;
  bool percent = true;                        // cell text and colour bar as percentages
};

// Nice round ticks covering [lo, hi]: steps of 1, 2 or 5 times a power of ten.
[[nodiscard]] std::vector<double> round_ticks(double lo, double hi, int target = 6);
[[nodiscard]] std::string tick_label(double v, AxisFormat f, double step);

// Writes the chart to svg_path and/or png_path (empty: not written). Throws std::runtime_error
// when a file cannot be written; InputError when there is nothing to draw.
void render(const LineChart& chart, const std::string& svg_path, const std::string& png_path);
void render(const Heatmap& map, const std::string& svg_path, const std::string& png_path);

}  // namespace ringsim::planning
