#include "gui/heatmap_widget.hpp"

#include <algorithm>
#include <array>

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

namespace ringsim::gui {

namespace {
constexpr int kTop = 26, kLeft = 46, kRight = 10, kBottom = 52;
constexpr int kMaxImage = 1024;  // beyond this many cells per axis, cells are averaged into pixels
}  // namespace

QColor heat_color(double v) {
  static constexpr std::array<std::array<int, 3>, 6> kStops{{
      {13, 8, 135}, {84, 2, 163}, {156, 23, 158}, {205, 74, 118}, {241, 139, 72}, {240, 249, 33}}};
  v = std::clamp(v, 0.0, 1.0) * static_cast<double>(kStops.size() - 1);
  const auto i = std::min<std::size_t>(static_cast<std::size_t>(v), kStops.size() - 2);
  const double f = v - static_cast<double>(i);
  auto mix = [&](int c) {
    return static_cast<int>(kStops[i][c] + f * (kStops[i + 1][c] - kStops[i][c]) + 0.5);
  };
  return {mix(0), mix(1), mix(2)};
}

QColor device_color(std::int64_t device) {
  static constexpr std::array<QRgb, 16> kPalette{0xe6194b, 0x3cb44b, 0x4363d8, 0xf58231, 0x911eb4, 0x42d4f4,
                                                 0xf032e6, 0xbfef45, 0xfabed4, 0x469990, 0xdcbeff, 0x9a6324,
                                                 0xfffac8, 0x800000, 0xaaffc3, 0x000075};
  return QColor::fromRgb(kPalette[static_cast<std::size_t>(device % 16)]);
}

HeatmapWidget::HeatmapWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(240, 240);
}

void HeatmapWidget::set_data(const LayoutRun* run, Metric metric) {
  run_ = run;
  metric_ = metric;
  rebuild_image();
  update();
}

void HeatmapWidget::set_metric(Metric metric) {
  metric_ = metric;
  rebuild_image();
  update();
}

void HeatmapWidget::rebuild_image() {
  if (!run_) {
    image_ = {};
    return;
  }
  const std::int64_t n = run_->n;
  const int side = static_cast<int>(std::min<std::int64_t>(n, kMaxImage));
  const auto& v = run_->values(metric_);
  std::vector<double> sum(static_cast<std::size_t>(side) * static_cast<std::size_t>(side), 0.0);
  std::vector<int> count(sum.size(), 0);
  for (std::int64_t j = 0; j < n; ++j) {
    const auto py = static_cast<std::size_t>(j * side / n);
    for (std::int64_t i = 0; i < n; ++i) {
      const auto px = static_cast<std::size_t>(i * side / n);
      sum[py * static_cast<std::size_t>(side) + px] += v[static_cast<std::size_t>(j * n + i)];
      ++count[py * static_cast<std::size_t>(side) + px];
    }
  }
  image_ = QImage(side, side, QImage::Format_RGB32);
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      const auto k = static_cast<std::size_t>(y) * static_cast<std::size_t>(side) + static_cast<std::size_t>(x);
      image_.setPixel(x, y, heat_color(count[k] ? sum[k] / count[k] : 0.0).rgb());
    }
}

QRect HeatmapWidget::grid_rect() const {
  return QRect(kLeft, kTop, std::max(1, width() - kLeft - kRight), std::max(1, height() - kTop - kBottom));
}

QPoint HeatmapWidget::cell_center(std::int64_t round, std::int64_t device) const {
  if (!run_ || run_->n == 0) return {};
  const QRect g = grid_rect();
  const double cw = static_cast<double>(g.width()) / static_cast<double>(run_->n);
  const double ch = static_cast<double>(g.height()) / static_cast<double>(run_->n);
  return {g.left() + static_cast<int>((static_cast<double>(round) + 0.5) * cw),
          g.top() + static_cast<int>((static_cast<double>(device) + 0.5) * ch)};
}

void HeatmapWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  if (!run_) {
    p.drawText(rect(), Qt::AlignCenter, tr("Run a scenario to see the work per device and round"));
    return;
  }
  const QRect g = grid_rect();
  const char* metric_name = metric_ == Metric::Area ? "visited area" : metric_ == Metric::Pairs ? "allowed pairs" : "tiles computed";
  p.setPen(palette().windowText().color());
  p.drawText(QRect(0, 0, width(), kTop), Qt::AlignCenter,
             QString::fromStdString(run_->layout) + tr(" — %1 per device and round").arg(tr(metric_name)));
  p.drawImage(g, image_);  // nearest scaling keeps cell edges crisp
  if (run_->n <= 64) {  // cell borders help reading small rings only
    p.setPen(QColor(255, 255, 255, 60));
    for (std::int64_t i = 1; i < run_->n; ++i) {
      const int x = g.left() + static_cast<int>(static_cast<double>(i) * g.width() / static_cast<double>(run_->n));
      const int y = g.top() + static_cast<int>(static_cast<double>(i) * g.height() / static_cast<double>(run_->n));
      p.drawLine(x, g.top(), x, g.bottom());
      p.drawLine(g.left(), y, g.right(), y);
    }
  }
  p.setPen(palette().windowText().color());
  p.save();
  p.translate(12, g.center().y());
  p.rotate(-90);
  p.drawText(QRect(-60, -10, 120, 20), Qt::AlignCenter, tr("device"));
  p.restore();
  p.drawText(QRect(kLeft - 20, g.top(), 18, 16), Qt::AlignRight, "0");
  p.drawText(QRect(kLeft - 44, g.bottom() - 14, 42, 16), Qt::AlignRight, QString::number(run_->n - 1));
  p.drawText(QRect(g.left(), g.bottom() + 2, g.width(), 16), Qt::AlignCenter, tr("round →"));
  // Legend: the shared scale, 0 = skipped, 1 = a full block.
  const QRect bar(g.left(), g.bottom() + 22, std::min(g.width(), 200), 10);
  for (int x = 0; x < bar.width(); ++x) {
    p.setPen(heat_color(static_cast<double>(x) / std::max(1, bar.width() - 1)));
    p.drawLine(bar.left() + x, bar.top(), bar.left() + x, bar.bottom());
  }
  p.setPen(palette().windowText().color());
  p.drawText(QRect(bar.right() + 6, bar.top() - 4, width() - bar.right() - 8, 18), Qt::AlignLeft | Qt::AlignVCenter,
             tr("0 … 1 full block%1").arg(run_->n > kMaxImage ? tr(" (cells averaged per pixel)") : QString()));
}

void HeatmapWidget::mouseMoveEvent(QMouseEvent* event) {
  const QRect g = grid_rect();
  const QPoint pos = event->position().toPoint();
  if (!run_ || !g.contains(pos)) {
    QToolTip::hideText();
    return;
  }
  const std::int64_t n = run_->n;
  const auto round = std::clamp<std::int64_t>((pos.x() - g.left()) * n / g.width(), 0, n - 1);
  const auto device = std::clamp<std::int64_t>((pos.y() - g.top()) * n / g.height(), 0, n - 1);
  const auto& s = *run_->scenario;
  const auto& b = s.workload->block(round, device);
  const auto kv = models::Workload::kv_block_of(device, round, n);
  const QString text = tr("device %1, round %2\nK/V block %3\ntiles computed %4, skipped %5\n"
                          "allowed pairs %6, visited area %7\nforward time %8 µs (one layer)")
                           .arg(device)
                           .arg(round)
                           .arg(kv)
                           .arg(b.tiles_visited)
                           .arg(b.tiles_total - b.tiles_visited)
                           .arg(b.allowed_pairs)
                           .arg(b.visited_area)
                           .arg(s.cost->attention_fwd_s(b) * 1e6, 0, 'f', 2);
  QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

}  // namespace ringsim::gui
