#include "gui/heatmap_widget.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include "gui/axis_ticks.hpp"
#include "models/program/program.hpp"

namespace ringsim::gui {

namespace {
// Under the grid: the busiest-vs-mean strip (kStrip), the round numbers, "round →" and the legend.
constexpr int kTop = 26, kLeft = 46, kRight = 10, kStrip = 34, kBottom = 52 + kStrip + 16;
constexpr int kMaxImage = 1024;  // beyond this many cells per axis, cells are averaged into pixels

QString fmt(double v) { return QString::number(v, 'g', 3); }
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

void ValueRange::add(const ValueRange& other) {
  min_nonzero = std::min(min_nonzero, other.min_nonzero);
  max = std::max(max, other.max);
}

ValueRange value_range(const std::vector<float>& values) {
  ValueRange r;
  for (const float v : values) {
    if (v > 0) r.min_nonzero = std::min(r.min_nonzero, static_cast<double>(v));
    r.max = std::max(r.max, static_cast<double>(v));
  }
  return r;
}

ColorScale choose_color_scale(const ValueRange& range) {
  ColorScale s;
  if (!(range.max > 0)) return s;  // nothing but skipped blocks: 0..1
  if (range.max > ColorScale::kLogRatio * range.min_nonzero) {
    s.log = true;
    s.lo = range.min_nonzero;
  }
  s.hi = range.max;
  return s;
}

double ColorScale::position(double v) const {
  if (!(v > 0)) return 0;
  if (!log) return std::clamp(v / hi, 0.0, 1.0);
  const double f = std::clamp(std::log(v / lo) / std::log(hi / lo), 0.0, 1.0);
  return kLogFloor + (1 - kLogFloor) * f;
}

QString heatmap_tooltip(const LayoutRun& run, std::int64_t round, std::int64_t device) {
  const std::int64_t n = run.n;
  const auto k = static_cast<std::size_t>(device * n + round);
  // First the values the colours encode (every metric), as fractions of one full block.
  QString text = HeatmapWidget::tr("device %1, round %2\nvisited area %3, allowed pairs %4, tiles %5 (of a full block)")
                     .arg(device)
                     .arg(round)
                     .arg(fmt(run.area[k]))
                     .arg(fmt(run.pairs[k]))
                     .arg(fmt(run.tiles[k]));
  const auto& s = *run.scenario;
  const auto& prog = *s.program;
  if (!prog.has_ring()) {
    // No ring (all-gather, Ulysses): the ring's blocks are not what runs. The row is the
    // device's kernel calls (the program's forward compute table), spread evenly over n rounds
    // as gui/run.cpp fills it; the tooltip reports the same work.
    const auto& table = prog.compute.front();
    const auto rank = static_cast<std::size_t>(device);
    const auto cost = s.attention->calls(s, table.lists[table.list_of[rank]]);
    const auto nd = static_cast<double>(n);
    return text + HeatmapWidget::tr("\nno ring (%1): the device's kernel work, an n-th per round\n"
                                    "allowed pairs %2 per round (%3 in the layer)\n"
                                    "tiles %4, forward time %5 µs per round (one layer)")
                      .arg(QString::fromStdString(s.strategy.text()))
                      .arg(fmt(static_cast<double>(table.pairs[rank]) / nd))
                      .arg(table.pairs[rank])
                      .arg(fmt(static_cast<double>(cost.tiles) / nd))
                      .arg(cost.fwd_s / nd * 1e6, 0, 'f', 2);
  }
  // The block the cell shows, looked up as gui/run.cpp does: the ring part's workload (usp)
  // in the strategy's schedule (double ring), not the scenario's natural ring.
  const auto& rs = s.ring_scenario();
  const auto kv = prog.kv_position(device, round);
  const auto& b = rs.workload->block(((device - kv) % n + n) % n, device);
  return text + HeatmapWidget::tr("\nK/V block %1\ntiles computed %2, skipped %3\n"
                                  "allowed pairs %4, visited area %5\nforward time %6 µs (one layer)")
                    .arg(kv)
                    .arg(b.tiles_visited)
                    .arg(b.tiles_total - b.tiles_visited)
                    .arg(b.allowed_pairs)
                    .arg(b.visited_area)
                    .arg(rs.cost->attention_fwd_s(b) * 1e6, 0, 'f', 2);
}

HeatmapWidget::HeatmapWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(240, 240);
}

void HeatmapWidget::set_data(const LayoutRun* run, Metric metric) {
  run_ = run;
  metric_ = metric;
  data_changed();
}

void HeatmapWidget::set_metric(Metric metric) {
  metric_ = metric;
  data_changed();
}

void HeatmapWidget::data_changed() {
  range_ = {};
  cells_.clear();
  side_ = 0;
  image_ = {};
  if (run_ && run_->n > 0) {
    const std::int64_t n = run_->n;
    const auto& v = run_->values(metric_);
    range_ = value_range(v);
    side_ = static_cast<int>(std::min<std::int64_t>(n, kMaxImage));
    const auto side = static_cast<std::size_t>(side_);
    cells_.assign(side * side, 0.0);
    std::vector<int> count(cells_.size(), 0);
    for (std::int64_t j = 0; j < n; ++j) {
      const auto py = static_cast<std::size_t>(j * side_ / n);
      for (std::int64_t i = 0; i < n; ++i) {
        const auto px = static_cast<std::size_t>(i * side_ / n);
        cells_[py * side + px] += v[static_cast<std::size_t>(j * n + i)];
        ++count[py * side + px];
      }
    }
    for (std::size_t k = 0; k < cells_.size(); ++k) cells_[k] /= std::max(1, count[k]);
  }
  // The shared scale may have moved: every panel of the view repaints (and recolours).
  if (parentWidget())
    for (auto* h : parentWidget()->findChildren<HeatmapWidget*>(Qt::FindDirectChildrenOnly)) h->update();
  update();
}

void HeatmapWidget::set_fixed_scale(bool fixed) {
  fixed_scale_ = fixed;
  update();
}

std::vector<HeatmapWidget::RoundLoad> HeatmapWidget::round_loads() const {
  std::vector<RoundLoad> out;
  if (!run_ || run_->n <= 0) return out;
  const std::int64_t n = run_->n;
  const auto& v = run_->values(metric_);
  out.assign(static_cast<std::size_t>(n), {});
  for (std::int64_t d = 0; d < n; ++d)
    for (std::int64_t r = 0; r < n; ++r) {
      const double x = v[static_cast<std::size_t>(d * n + r)];
      auto& l = out[static_cast<std::size_t>(r)];
      l.busiest = std::max(l.busiest, x);
      l.mean += x / static_cast<double>(n);
    }
  return out;
}

ColorScale HeatmapWidget::color_scale() const {
  // Values are fractions of one full block: a fixed scale is 0..1, the same for every run.
  if (fixed_scale_) return ColorScale{};
  ValueRange r = range_;
  if (parentWidget())
    for (const auto* h : parentWidget()->findChildren<HeatmapWidget*>(Qt::FindDirectChildrenOnly))
      if (h->run_) r.add(h->range_);
  return choose_color_scale(r);
}

void HeatmapWidget::rebuild_image(const ColorScale& scale) {
  image_ = QImage(side_, side_, QImage::Format_RGB32);
  for (int y = 0; y < side_; ++y)
    for (int x = 0; x < side_; ++x)
      image_.setPixel(x, y, scale.color(cells_[static_cast<std::size_t>(y) * static_cast<std::size_t>(side_) +
                                               static_cast<std::size_t>(x)])
                                .rgb());
  image_scale_ = scale;
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
  const ColorScale scale = color_scale();
  if (image_.isNull() || !(scale == image_scale_)) rebuild_image(scale);
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
  const int below = draw_rounds(p, g);
  p.setPen(palette().windowText().color());
  p.drawText(QRect(g.left(), below, g.width(), 16), Qt::AlignCenter, tr("round →"));
  draw_legend(p, g, scale);
}

int HeatmapWidget::draw_rounds(QPainter& p, const QRect& g) {
  const std::int64_t n = run_->n;
  const double cw = static_cast<double>(g.width()) / static_cast<double>(n);
  const QFontMetrics fm = p.fontMetrics();
  // The strip: per round the devices' mean (filled) and the busiest device (the outline above it);
  // the gap between them is what the others wait for in that round.
  const int top = g.bottom() + 4, h = kStrip - 8;
  const auto loads = round_loads();
  double peak = 0;
  for (const auto& l : loads) peak = std::max(peak, l.busiest);
  p.setPen(palette().windowText().color());
  p.drawText(QRect(0, top, kLeft - 4, h), Qt::AlignRight | Qt::AlignVCenter, tr("wait"));
  if (peak > 0)
    for (std::int64_t r = 0; r < n; ++r) {
      const auto& l = loads[static_cast<std::size_t>(r)];
      const double x0 = g.left() + static_cast<double>(r) * cw, w = std::max(1.0, cw - (n <= 64 ? 1.0 : 0.0));
      const double mean_h = l.mean / peak * h, busy_h = l.busiest / peak * h;
      p.fillRect(QRectF(x0, top + h - mean_h, w, mean_h), QColor(110, 140, 180));
      p.fillRect(QRectF(x0, top + h - busy_h, w, busy_h - mean_h), QColor(225, 87, 89, 170));
    }
  // Round numbers at round values (1, 2 or 5 x 10^k apart), never closer than their labels.
  round_ticks_.clear();
  const int label_w = fm.horizontalAdvance(QString::number(n - 1)) + 8;
  const std::int64_t step = std::max<std::int64_t>(1, std::llround(step_125(label_w / cw)));
  const int ty = top + h + 2;
  for (std::int64_t r = 0; r < n; r += step) {
    const double x = g.left() + (static_cast<double>(r) + 0.5) * cw;
    const QString label = QString::number(r);
    p.drawText(QRectF(x - label_w / 2.0, ty, label_w, 14), Qt::AlignCenter, label);
    round_ticks_.push_back(r);
  }
  return ty + 14;
}

// The colour bar under the grid: [0 swatch, log only] min [bar] max, then what the values are.
void HeatmapWidget::draw_legend(QPainter& p, const QRect& g, const ColorScale& scale) {
  const QFontMetrics fm = p.fontMetrics();
  const int y = g.bottom() + kStrip + 16 + 22, h = 10;
  int x = g.left();
  auto label = [&](const QString& text) {
    p.setPen(palette().windowText().color());
    p.drawText(QRect(x, y - 4, fm.horizontalAdvance(text) + 2, 18), Qt::AlignLeft | Qt::AlignVCenter, text);
    x += fm.horizontalAdvance(text) + 6;
  };
  if (scale.log) {  // zero (a skipped block) has no place on a log scale: its own swatch
    p.fillRect(QRect(x, y, h, h), heat_color(0));
    x += h + 4;
    label("0");
  }
  label(fmt(scale.lo));
  const int w = std::clamp(g.width() / 3, 60, 200);
  const double from = scale.log ? ColorScale::kLogFloor : 0.0;
  for (int i = 0; i < w; ++i) {
    p.setPen(heat_color(from + (1 - from) * static_cast<double>(i) / std::max(1, w - 1)));
    p.drawLine(x + i, y, x + i, y + h);
  }
  x += w + 6;
  label(fmt(scale.hi));
  QString what = scale.log ? tr("log, of a full block") : tr("of a full block");
  if (run_->n > kMaxImage) what += tr(" (cells averaged per pixel)");
  p.setPen(palette().windowText().color());
  p.drawText(QRect(x, y - 4, std::max(0, width() - x - 2), 18), Qt::AlignLeft | Qt::AlignVCenter,
             fm.elidedText(what, Qt::ElideRight, std::max(0, width() - x - 2)));
}

void HeatmapWidget::mouseMoveEvent(QMouseEvent* event) {
  const QRect g = grid_rect();
  const QPoint pos = event->position().toPoint();
  // The strip under the grid: that round's busiest device against the mean.
  if (run_ && run_->n > 0 && pos.x() >= g.left() && pos.x() <= g.right() && pos.y() > g.bottom() &&
      pos.y() <= g.bottom() + kStrip) {
    const auto round = std::clamp<std::int64_t>((pos.x() - g.left()) * run_->n / g.width(), 0, run_->n - 1);
    const auto l = round_loads()[static_cast<std::size_t>(round)];
    QToolTip::showText(event->globalPosition().toPoint(),
                       tr("round %1: busiest device %2, mean %3 (of a full block)\nred: what the mean device waits "
                          "for (%4 % of the round)")
                           .arg(round)
                           .arg(fmt(l.busiest))
                           .arg(fmt(l.mean))
                           .arg(l.busiest > 0 ? 100 * (l.busiest - l.mean) / l.busiest : 0.0, 0, 'f', 0),
                       this);
    return;
  }
  if (!run_ || !g.contains(pos)) {
    QToolTip::hideText();
    return;
  }
  const std::int64_t n = run_->n;
  const auto round = std::clamp<std::int64_t>((pos.x() - g.left()) * n / g.width(), 0, n - 1);
  const auto device = std::clamp<std::int64_t>((pos.y() - g.top()) * n / g.height(), 0, n - 1);
  QToolTip::showText(event->globalPosition().toPoint(), heatmap_tooltip(*run_, round, device), this);
}

}  // namespace ringsim::gui
