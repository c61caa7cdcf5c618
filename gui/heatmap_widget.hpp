#pragma once
// Devices x rounds of one layout, coloured by the work each device does in each round. The
// heatmaps placed side by side in one view (the same parent widget) share one colour scale,
// chosen from all their data, so their colours compare.
#include <cstdint>
#include <limits>
#include <vector>

#include <QImage>
#include <QString>
#include <QWidget>

#include "gui/run.hpp"

namespace ringsim::gui {

// 0..1 -> dark blue through teal and yellow to red; the same ramp in every view and legend.
[[nodiscard]] QColor heat_color(double v);
// A distinct colour per device (cycles after 16).
[[nodiscard]] QColor device_color(std::int64_t device);

// The values of a heatmap: the smallest non-zero one and the largest (values are >= 0).
struct ValueRange {
  double min_nonzero = std::numeric_limits<double>::infinity();
  double max = 0;
  void add(const ValueRange& other);
};
[[nodiscard]] ValueRange value_range(const std::vector<float>& values);

// Maps a cell's value onto heat_color's ramp. Linear from 0 (a skipped block stays the darkest
// colour) to the largest value; logarithmic between the smallest non-zero and the largest value
// when they are more than kLogRatio apart, where a linear scale would leave all but the largest
// cells nearly black (packed documents: most blocks hold a sliver of a document's triangle).
struct ColorScale {
  static constexpr double kLogRatio = 100;
  // Log scale: where the smallest non-zero value sits on the ramp, so it stays apart from 0.
  static constexpr double kLogFloor = 0.1;
  bool log = false;
  double lo = 0;  // linear: 0; log: the smallest non-zero value
  double hi = 1;
  [[nodiscard]] double position(double v) const;  // 0..1 on the ramp
  [[nodiscard]] QColor color(double v) const { return heat_color(position(v)); }
  bool operator==(const ColorScale&) const = default;
};
[[nodiscard]] ColorScale choose_color_scale(const ValueRange& range);

// What the tooltip of cell (round, device) says: the values the colour encodes for every
// metric, and the block or kernel work behind them. Needs run.scenario.
[[nodiscard]] QString heatmap_tooltip(const LayoutRun& run, std::int64_t round, std::int64_t device);

class HeatmapWidget : public QWidget {
  Q_OBJECT
 public:
  explicit HeatmapWidget(QWidget* parent = nullptr);
  // `run` must outlive the widget's use of it (the main window owns both).
  void set_data(const LayoutRun* run, Metric metric);
  void set_metric(Metric metric);
  // The scale shared with the sibling heatmaps that have data (this one's alone without them), or,
  // fixed, linear over 0..1 of a full block whatever the data (two runs then compare by colour).
  [[nodiscard]] ColorScale color_scale() const;
  void set_fixed_scale(bool fixed);
  [[nodiscard]] bool fixed_scale() const noexcept { return fixed_scale_; }
  // Per round: the busiest device's value and the devices' mean (the strip under the grid: what
  // every device waits for in that round is the busiest's excess over its own).
  struct RoundLoad {
    double busiest = 0, mean = 0;
  };
  [[nodiscard]] std::vector<RoundLoad> round_loads() const;
  // The round numbers on the axis under the strip, as last painted (tests).
  [[nodiscard]] const std::vector<std::int64_t>& round_ticks() const noexcept { return round_ticks_; }
  // Where a cell is drawn, for tests and tooltips; an invalid point when there is no data.
  [[nodiscard]] QPoint cell_center(std::int64_t round, std::int64_t device) const;
  [[nodiscard]] QRect grid_rect() const;
  [[nodiscard]] QSize sizeHint() const override { return {460, 460}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  void data_changed();
  void rebuild_image(const ColorScale& scale);
  void draw_legend(QPainter& p, const QRect& g, const ColorScale& scale);
  // The busiest-vs-mean strip and the round axis under the grid; returns the y below them.
  int draw_rounds(QPainter& p, const QRect& g);
  const LayoutRun* run_ = nullptr;
  Metric metric_ = Metric::Area;
  // Of the current run and metric; read by the siblings, which must not dereference run_ (the
  // main window sets the panels one after the other, while the others' runs may be gone).
  ValueRange range_;
  std::vector<double> cells_;  // per pixel: the mean of its cells (one cell per pixel up to 1024)
  int side_ = 0;
  QImage image_;
  ColorScale image_scale_;  // the scale image_ was coloured with
  bool fixed_scale_ = false;
  std::vector<std::int64_t> round_ticks_;
};

}  // namespace ringsim::gui
