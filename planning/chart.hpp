#pragma once
// Charts drawn with cairo, without a display: line charts (a log2 or linear x axis, a linear y
// axis, round tick values, axis titles with units, a legend, reference lines) and heatmaps
// (labelled cells, a colour bar). Each is written as SVG and/or PNG, through a temporary file
// renamed into place, so a failed run leaves no half-written picture.
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
};

struct LineChart {
  std::string title;
  std::string x_label, y_label;  // with units, e.g. "n_seq (tokens)"
  bool log2_x = true;
  AxisFormat x_format = AxisFormat::Binary;
  AxisFormat y_format = AxisFormat::Plain;
  std::optional<double> y_min;   // e.g. 0; else from the data
  std::vector<Series> series;
  std::vector<ReferenceLine> references;  // horizontal dashed lines
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
