#pragma once
// A small, dependency-free SVG line/point chart: predicted lines and published points per
// series, log2 x axis. Deterministic text (fixed formatting), so the committed picture only
// changes when the numbers do.
#include <string>
#include <vector>

namespace ringsim::calibration {

struct PlotSeries {
  std::string label;
  std::vector<double> x;
  std::vector<double> predicted;  // drawn as a line
  std::vector<double> measured;   // drawn as points (NaN: none)
};

[[nodiscard]] std::string svg_chart(const std::string& title, const std::string& x_label, const std::string& y_label,
                                    const std::vector<PlotSeries>& series);

}  // namespace ringsim::calibration
