#pragma once
// Devices x rounds of one layout, coloured by the work each device does in each round. Two of
// these side by side share one scale because values are fractions of one full block.
#include <QImage>
#include <QString>
#include <QWidget>

#include "gui/run.hpp"

namespace ringsim::gui {

// 0..1 -> dark blue through teal and yellow to red; the same ramp in every view and legend.
[[nodiscard]] QColor heat_color(double v);
// A distinct colour per device (cycles after 16).
[[nodiscard]] QColor device_color(std::int64_t device);

class HeatmapWidget : public QWidget {
  Q_OBJECT
 public:
  explicit HeatmapWidget(QWidget* parent = nullptr);
  // `run` must outlive the widget's use of it (the main window owns both).
  void set_data(const LayoutRun* run, Metric metric);
  void set_metric(Metric metric);
  // Where a cell is drawn, for tests and tooltips; an invalid point when there is no data.
  [[nodiscard]] QPoint cell_center(std::int64_t round, std::int64_t device) const;
  [[nodiscard]] QRect grid_rect() const;
  [[nodiscard]] QSize sizeHint() const override { return {460, 460}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  void rebuild_image();
  const LayoutRun* run_ = nullptr;
  Metric metric_ = Metric::Area;
  QImage image_;  // one pixel per cell, or per group of cells when n is large (mean)
};

}  // namespace ringsim::gui
