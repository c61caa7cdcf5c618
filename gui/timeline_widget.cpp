#include "gui/timeline_widget.hpp"

#include <algorithm>
#include <cmath>

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include "gui/axis_ticks.hpp"
#include "models/workload/workload.hpp"

namespace ringsim::gui {

namespace {
constexpr int kLeft = 92, kTop = 26, kRight = 40, kBottom = 64;
const QColor kCompute(66, 110, 200);
const QColor kOther(150, 150, 160);
const QColor kWait(220, 80, 70);
const QColor kTransfer(60, 170, 90);
const QColor kGradTransfer(230, 150, 40);

const char* kind_name(SpanKind k) {
  switch (k) {
    case SpanKind::Compute: return "attention";
    case SpanKind::Other: return "other ops";
    case SpanKind::Transfer: return "K/V transfer";
    case SpanKind::GradTransfer: return "dK/dV transfer";
    case SpanKind::Wait: return "idle (waiting)";
  }
  return "";
}
}  // namespace

std::vector<int> labelled_lanes(int lanes, double lane_h, double min_gap_px, int group) {
  std::vector<int> out;
  if (lanes <= 0) return out;
  if (static_cast<double>(lanes) * lane_h < min_gap_px) return {0};  // the plot is shorter than a label
  // 1, 2, 5 x 10^e (times group): labels at round lane numbers (dev 0, dev 10, dev 20, ...).
  group = std::max(1, group);
  int k = 1;
  for (int decade = 1; static_cast<double>(k) * lane_h < min_gap_px; decade *= 10)
    for (const int m : {1, 2, 5}) {
      k = group * m * decade;
      if (static_cast<double>(k) * lane_h >= min_gap_px) break;
    }
  for (int l = 0; l < lanes; l += k) out.push_back(l);
  if (out.back() != lanes - 1) {
    if (out.size() > 1 && static_cast<double>(lanes - 1 - out.back()) * lane_h < min_gap_px) out.pop_back();
    if (static_cast<double>(lanes - 1 - out.back()) * lane_h >= min_gap_px) out.push_back(lanes - 1);
  }
  return out;
}

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
  setMinimumSize(300, 200);
  setMouseTracking(true);  // hovering a span shows its details as a tooltip
}

void TimelineWidget::set_timeline(Timeline timeline, QString title, double shared_end_s) {
  timeline_ = std::move(timeline);
  title_ = std::move(title);
  shared_end_s_ = shared_end_s;
  selected_.clear();
  view_start_s_ = 0;
  view_span_s_ = full_span_s();
  update();
}

double TimelineWidget::full_span_s() const noexcept {
  const double own = timeline_.end_s > 0 ? timeline_.end_s : 1;
  return std::max(own, shared_end_s_);
}

QString TimelineWidget::span_details(QPointF pos) const {
  const QRect g = plot_rect();
  if (timeline_.lanes.empty() || !g.contains(pos.toPoint())) return {};
  const double lane_h = lane_height();
  const int lane = std::clamp(static_cast<int>((pos.y() - g.top()) / lane_h), 0, static_cast<int>(timeline_.lanes.size()) - 1);
  const double t = view_start_s_ + (pos.x() - g.left()) / g.width() * view_span_s_;
  // The span under the cursor: dK/dV (drawn over the lower half) first where both overlap.
  const bool lower = pos.y() - g.top() - lane * lane_h > 0.5 * lane_h;
  const TimelineSpan* hit = nullptr;
  for (const auto& sp : timeline_.spans)
    if (sp.lane == lane && sp.start_s <= t && t <= sp.end_s && (!hit || (lower && sp.kind == SpanKind::GradTransfer))) hit = &sp;
  if (!hit) return {};
  QString what = tr(kind_name(hit->kind));
  if (!hit->name.empty()) what += QStringLiteral(" \u201c%1\u201d").arg(QString::fromStdString(hit->name));
  // An attention span's round, and whose K/V block it works on; a wait names the round it follows.
  std::int64_t round = hit->round;
  if (hit->kind == SpanKind::Wait)
    for (const auto& sp : timeline_.spans)
      if (sp.lane == hit->lane && sp.kind == SpanKind::Compute && sp.round >= 0 &&
          std::abs(sp.end_s - hit->start_s) <= 1e-9 * timeline_.end_s)
        round = sp.round;
  if (round >= 0) {
    if (hit->kind == SpanKind::Wait) what += tr(" after round %1").arg(round);
    else what += tr(", round %1").arg(round);
    // The lane's device: the simulated timeline has a compute and a copy-engine lane per device.
    const std::int64_t device = timeline_.simulated ? lane / 2 : lane;
    if (hit->kind == SpanKind::Compute && timeline_.ring_devices > 0)
      what += tr(" on the K/V block of device %1").arg(models::Workload::kv_block_of(device, round, timeline_.ring_devices));
  }
  return tr("%1: %2, %3 .. %4 (%5)")
      .arg(QString::fromStdString(timeline_.lanes[static_cast<std::size_t>(lane)]), what,
           seconds_label(hit->start_s), seconds_label(hit->end_s), seconds_label(hit->end_s - hit->start_s));
}

QRect TimelineWidget::plot_rect() const {
  return QRect(kLeft, kTop, std::max(1, width() - kLeft - kRight), std::max(1, height() - kTop - kBottom));
}

double TimelineWidget::lane_height() const {
  return static_cast<double>(plot_rect().height()) / std::max<double>(1, static_cast<double>(timeline_.lanes.size()));
}

std::vector<int> TimelineWidget::labelled_lanes() const {
  // The simulated timeline pairs a compute and a copy-engine lane per device.
  return gui::labelled_lanes(static_cast<int>(timeline_.lanes.size()), lane_height(), fontMetrics().height(),
                             timeline_.simulated ? 2 : 1);
}

void TimelineWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  const QColor fg = palette().windowText().color();
  if (timeline_.lanes.empty()) {
    p.setPen(fg);
    p.drawText(rect(), Qt::AlignCenter, tr("Run a scenario to see the timeline"));
    return;
  }
  const QRect g = plot_rect();
  p.setPen(fg);
  p.drawText(QRect(0, 0, width(), kTop), Qt::AlignCenter, title_);
  const auto lanes = static_cast<int>(timeline_.lanes.size());
  const double lane_h = static_cast<double>(g.height()) / lanes;
  auto x_of = [&](double t) { return g.left() + (t - view_start_s_) / view_span_s_ * g.width(); };
  p.setClipRect(g);
  // dK/dV shares the copy engine with K/V in the backward pass and overlaps it in time, so it
  // is drawn afterwards in the lower half of the lane: both stay visible.
  for (const bool grad_pass : {false, true}) {
    for (const auto& s : timeline_.spans) {
      if ((s.kind == SpanKind::GradTransfer) != grad_pass) continue;
      const double x0 = x_of(s.start_s), x1 = x_of(s.end_s);
      if (x1 < g.left() || x0 > g.right()) continue;
      // A one-pixel gap keeps back-to-back rounds apart when there is room for it.
      const double w = x1 - x0 > 3 ? x1 - x0 - 1 : std::max(1.0, x1 - x0);
      const double top = g.top() + s.lane * lane_h + lane_h * (grad_pass ? 0.5 : 0.1);
      const QRectF r(x0, top, w, std::max(1.0, lane_h * (grad_pass ? 0.4 : 0.8)));
      switch (s.kind) {
        case SpanKind::Compute: p.fillRect(r, kCompute); break;
        case SpanKind::Other: p.fillRect(r, kOther); break;
        case SpanKind::Transfer: p.fillRect(r, kTransfer); break;
        case SpanKind::GradTransfer: p.fillRect(r, kGradTransfer); break;
        case SpanKind::Wait:
          p.fillRect(r, kWait.lighter(160));
          p.fillRect(r, QBrush(kWait, Qt::BDiagPattern));
          break;
      }
    }
  }
  p.setClipping(false);
  // Lane labels, thinned out when lanes are thinner than the text (labelled_lanes), each
  // centred on its lane; one font height apart, so they never overlap.
  const double text_h = p.fontMetrics().height();
  p.setPen(fg);
  for (const int l : labelled_lanes()) {
    const double mid = g.top() + (l + 0.5) * lane_h;
    p.drawText(QRectF(2, mid - text_h / 2, kLeft - 6, text_h), Qt::AlignRight | Qt::AlignVCenter,
               QString::fromStdString(timeline_.lanes[static_cast<std::size_t>(l)]));
  }
  p.drawRect(g.adjusted(0, 0, -1, -1));
  // Time axis: ticks at round values across the visible window.
  ticks_.clear();
  const double step = step_125(view_span_s_ / 5);
  for (double t = std::ceil(view_start_s_ / step - 1e-9) * step; t <= view_start_s_ + view_span_s_ * (1 + 1e-9); t += step) {
    const double tick = std::abs(t) < step * 1e-9 ? 0.0 : t;
    const int x = static_cast<int>(x_of(tick));
    p.drawLine(x, g.bottom(), x, g.bottom() + 4);
    p.drawText(QRect(x - 50, g.bottom() + 4, 100, 16), Qt::AlignCenter, seconds_label(tick));
    ticks_.push_back(tick);
  }
  // Where this layout's step ends on the shared axis (the other layout may run longer).
  if (timeline_.end_s > 0 && timeline_.end_s < full_span_s()) {
    const double xe = x_of(timeline_.end_s);
    if (xe >= g.left() && xe <= g.right()) {
      p.setPen(QPen(fg, 1, Qt::DashLine));
      p.drawLine(QPointF(xe, g.top()), QPointF(xe, g.bottom()));
      p.setPen(fg);
      p.drawText(QRectF(xe + 4, g.top() + 2, 200, 16), Qt::AlignLeft | Qt::AlignVCenter, tr("ends %1").arg(seconds_label(timeline_.end_s)));
    }
  }
  int x = g.left();
  const int y = g.bottom() + 26;
  p.drawText(QRect(g.left(), g.bottom() + 44, g.width(), 18), Qt::AlignLeft | Qt::AlignVCenter,
             selected_.isEmpty() ? tr("click a span for its lane, kind and times") : selected_);
  auto swatch = [&](const QColor& c, const QString& text, bool hatched) {
    p.fillRect(QRect(x, y, 12, 12), hatched ? c.lighter(160) : c);
    if (hatched) p.fillRect(QRect(x, y, 12, 12), QBrush(c, Qt::BDiagPattern));
    p.setPen(fg);
    p.drawText(QRect(x + 16, y - 3, 300, 18), Qt::AlignLeft | Qt::AlignVCenter, text);
    x += 26 + p.fontMetrics().horizontalAdvance(text);
  };
  if (timeline_.simulated) {
    swatch(kCompute, tr("attention"), false);
    swatch(kOther, tr("other ops"), false);
    swatch(kWait, tr("idle"), true);
    swatch(kTransfer, tr("K/V"), false);
    swatch(kGradTransfer, tr("dK/dV"), false);
  } else {
    swatch(kCompute, tr("attention compute"), false);
    swatch(kWait, tr("waiting for the round's slowest device / transfer"), true);
    swatch(kTransfer, tr("K/V transfer"), false);
  }
  p.drawText(QRect(x, y - 3, width() - x, 18), Qt::AlignLeft | Qt::AlignVCenter, tr("(wheel: zoom, drag: pan)"));
}

void TimelineWidget::wheelEvent(QWheelEvent* event) {
  const QRect g = plot_rect();
  const double frac = std::clamp((event->position().x() - g.left()) / g.width(), 0.0, 1.0);
  const double anchor = view_start_s_ + frac * view_span_s_;
  const double factor = std::pow(0.8, event->angleDelta().y() / 120.0);
  const double full = full_span_s();
  view_span_s_ = std::clamp(view_span_s_ * factor, full * 1e-6, full * 4);
  view_start_s_ = anchor - frac * view_span_s_;
  update();
  event->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* event) {
  press_pos_ = event->position();
  dragging_ = event->button() == Qt::LeftButton;
  drag_x_ = static_cast<int>(event->position().x());
  drag_start_s_ = view_start_s_;
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* event) {
  if (!dragging_) {
    if (const QString d = span_details(event->position()); d.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(event->globalPosition().toPoint(), d, this);
    return;
  }
  const double dx = event->position().x() - drag_x_;
  view_start_s_ = drag_start_s_ - dx / plot_rect().width() * view_span_s_;
  update();
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* event) {
  dragging_ = false;
  // A click (no drag): the span under it, described under the plot.
  if ((event->position() - press_pos_).manhattanLength() < 4) {
    selected_ = span_details(event->position());
    update();
  }
}

void TimelineWidget::mouseDoubleClickEvent(QMouseEvent*) {
  view_start_s_ = 0;
  view_span_s_ = full_span_s();
  update();
}

}  // namespace ringsim::gui
