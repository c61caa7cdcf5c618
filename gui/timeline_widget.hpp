#pragma once
// Per-device compute and copy-engine lanes over time (or, for the analytic fallback, compute
// lanes and one link lane); idle time is drawn as hatched red so waiting is visible. Wheel zooms around the cursor, drag pans, double-click resets.
#include <vector>

#include <QPointF>
#include <QString>
#include <QWidget>

#include "gui/run.hpp"

namespace ringsim::gui {

// The lanes whose names are drawn, so that no two labels come closer than `min_gap_px` (a
// font height) while every lane is still drawn: every k-th lane, k the smallest of `group` x
// 1, 2, 5, 10, 20, ... with k * lane_h >= min_gap_px (group 2 keeps the labels on the
// simulated timeline's compute lanes), and the last lane (the analytic view's link), which
// replaces the labelled lane before it when the two would overlap.
[[nodiscard]] std::vector<int> labelled_lanes(int lanes, double lane_h, double min_gap_px, int group = 1);

class TimelineWidget : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineWidget(QWidget* parent = nullptr);
  // `shared_end_s`: the longest of the timelines the user switches between (the other layout's):
  // every layout is drawn on 0 .. that, so a faster layout visibly ends earlier (0: its own end).
  void set_timeline(Timeline timeline, QString title, double shared_end_s = 0);
  // The axis' full span: the shared end, or the timeline's own.
  [[nodiscard]] double full_span_s() const noexcept;
  // The time axis' tick values as last painted (round values: 1, 2 or 5 x 10^k apart).
  [[nodiscard]] const std::vector<double>& ticks() const noexcept { return ticks_; }
  // What a click on the span under `pos` shows (lane, kind, start, end, duration); empty off a span.
  [[nodiscard]] QString span_details(QPointF pos) const;
  [[nodiscard]] const QString& selected_details() const noexcept { return selected_; }
  [[nodiscard]] const Timeline& timeline() const noexcept { return timeline_; }
  [[nodiscard]] double view_start_s() const noexcept { return view_start_s_; }
  [[nodiscard]] double view_span_s() const noexcept { return view_span_s_; }
  [[nodiscard]] QSize sizeHint() const override { return {900, 500}; }
  // Height of one lane in pixels at the current size, and the lanes labelled at it.
  [[nodiscard]] double lane_height() const;
  [[nodiscard]] std::vector<int> labelled_lanes() const;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 public:
  // Where the lanes are drawn (tests place clicks with it).
  [[nodiscard]] QRect plot_rect() const;

 private:
  Timeline timeline_;
  QString title_;
  double view_start_s_ = 0;
  double view_span_s_ = 1;
  double shared_end_s_ = 0;
  std::vector<double> ticks_;
  QString selected_;  // the clicked span's details, drawn under the plot
  QPointF press_pos_;
  bool dragging_ = false;
  int drag_x_ = 0;
  double drag_start_s_ = 0;
};

}  // namespace ringsim::gui
