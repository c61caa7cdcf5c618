#pragma once
// Per-device compute and copy-engine lanes over time (or, for the analytic fallback, compute
// lanes and one link lane); idle time is drawn as hatched red so waiting is visible. Wheel zooms around the cursor, drag pans, double-click resets.
#include <QWidget>

#include "gui/run.hpp"

namespace ringsim::gui {

class TimelineWidget : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineWidget(QWidget* parent = nullptr);
  void set_timeline(Timeline timeline, QString title);
  [[nodiscard]] const Timeline& timeline() const noexcept { return timeline_; }
  [[nodiscard]] double view_start_s() const noexcept { return view_start_s_; }
  [[nodiscard]] double view_span_s() const noexcept { return view_span_s_; }
  [[nodiscard]] QSize sizeHint() const override { return {900, 500}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  [[nodiscard]] QRect plot_rect() const;
  Timeline timeline_;
  QString title_;
  double view_start_s_ = 0;
  double view_span_s_ = 1;
  bool dragging_ = false;
  int drag_x_ = 0;
  double drag_start_s_ = 0;
};

}  // namespace ringsim::gui
