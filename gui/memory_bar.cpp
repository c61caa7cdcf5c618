#include "gui/memory_bar.hpp"

#include <algorithm>
#include <array>

#include <QPainter>

namespace ringsim::gui {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Distinct hues in the terms' order (MemoryEstimate::terms()).
constexpr std::array<QRgb, 7> kColours{0xff4e79a7, 0xfff28e2b, 0xffe15759, 0xff76b7b2, 0xff59a14f, 0xffedc948, 0xffb07aa1};

// The terms' keys (strategy_buffers, kv_cache: CSV columns) read as words, in the legend as drawn
// and as listed.
QString term_label(const models::MemoryTerm& t) { return QString::fromLatin1(t.name).replace('_', ' '); }

}  // namespace

MemoryBar::MemoryBar(QWidget* parent) : QWidget(parent) { setMinimumHeight(80); }

void MemoryBar::set_estimate(const models::MemoryEstimate* e) {
  if (e) e_ = *e;
  else e_.reset();
  setToolTip(e_ ? QString::fromStdString(models::fit_phrase(*e_)) : QString());
  update();
}

QStringList MemoryBar::legend() const {
  QStringList out;
  if (!e_) return out;
  for (const auto& t : e_->terms())
    if (t.bytes > 0)
      out << QStringLiteral("%1 %2 GiB").arg(term_label(t)).arg(t.bytes / kGiB, 0, 'f', 1);
  return out;
}

void MemoryBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (!e_) {
    p.drawText(rect(), Qt::AlignCenter, tr("select a plan to see its memory"));
    return;
  }
  const auto& e = *e_;
  // The scale: the capacity, or the total when it does not fit (the overflow stays visible).
  const double scale = std::max(e.capacity_bytes, e.total_bytes);
  if (!(scale > 0)) return;
  const int left = 8, right = width() - 8, top = 6, bar_h = 26;
  const double px = (right - left) / scale;
  double x = left;
  const auto terms = e.terms();
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const double w = terms[i].bytes * px;
    if (w <= 0) continue;
    p.fillRect(QRectF(x, top, w, bar_h), QColor::fromRgb(kColours[i % kColours.size()]));
    x += w;
  }
  // Capacity and the headroom a plan must leave below it.
  p.setPen(QPen(Qt::black, 2));
  const double cap = left + e.capacity_bytes * px;
  p.drawLine(QPointF(cap, top - 4), QPointF(cap, top + bar_h + 4));
  p.setPen(QPen(Qt::black, 1, Qt::DashLine));
  const double head = left + std::max(0.0, e.capacity_bytes - e.headroom_bytes) * px;
  p.drawLine(QPointF(head, top - 2), QPointF(head, top + bar_h + 2));
  p.setPen(palette().text().color());
  p.drawText(QRectF(left, top + bar_h + 2, right - left, 16), Qt::AlignLeft | Qt::AlignVCenter,
             tr("%1 of %2 GiB: %3 (dashed: the %4 GiB headroom)")
                 .arg(e.total_bytes / kGiB, 0, 'f', 1).arg(e.capacity_bytes / kGiB, 0, 'f', 1)
                 .arg(QString::fromStdString(models::fit_phrase(e))).arg(e.headroom_bytes / kGiB, 0, 'f', 1));
  // Legend: a swatch and the term with its size, wrapped over as many lines as it needs.
  int lx = left, ly = top + bar_h + 22;
  const QFontMetrics fm(font());
  for (std::size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].bytes <= 0) continue;
    const QString text = QStringLiteral("%1 %2 GiB").arg(term_label(terms[i])).arg(terms[i].bytes / kGiB, 0, 'f', 1);
    const int w = 14 + fm.horizontalAdvance(text) + 14;
    if (lx + w > right && lx > left) lx = left, ly += fm.height() + 2;
    p.fillRect(QRect(lx, ly + 2, 10, 10), QColor::fromRgb(kColours[i % kColours.size()]));
    p.drawText(QPoint(lx + 14, ly + fm.ascent()), text);
    lx += w;
  }
}

}  // namespace ringsim::gui
