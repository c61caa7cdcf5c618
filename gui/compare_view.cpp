#include "gui/compare_view.hpp"

#include <algorithm>
#include <array>

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPushButton>
#include <QThread>
#include <QVBoxLayout>

#include "gui/axis_ticks.hpp"
#include "gui/error_text.hpp"
#include "gui/step_parts.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::gui {

namespace {

// A row's strategy and layout, the library that runs it and the kernel that library calls here.
QString row_label(const CompareRow& r) {
  return QString::fromStdString(r.strategy + " " + r.layout + "  " + r.impl +
                                (r.kernel.empty() ? std::string() : " (" + r.kernel + ")"));
}

}  // namespace

// The bars: one row per strategy, its parts stacked left to right in seconds, the interval of
// the step as an error bar over the stack, the why under it.
class CompareBars : public QWidget {
 public:
  explicit CompareBars(QWidget* parent) : QWidget(parent) { setMinimumHeight(200); }
  void set_rows(const std::vector<CompareRow>* rows) {
    rows_ = rows;
    update();
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (!rows_ || rows_->empty()) {
      p.drawText(rect(), Qt::AlignCenter, tr("Compare runs the form's scenario under each strategy listed above"));
      return;
    }
    // The parts any row has, in the breakdown's order and colours (gui/step_parts.hpp).
    std::vector<std::size_t> shown;
    for (std::size_t i = 0; i < models::kStepParts; ++i)
      if (std::any_of(rows_->begin(), rows_->end(), [&](const CompareRow& r) { return !r.refused && r.parts.s[i] != 0; }))
        shown.push_back(i);
    const auto& colours = part_colours();
    const QFontMetrics fm(font());
    double scale = 0;
    for (const auto& r : *rows_)
      if (!r.refused) scale = std::max({scale, r.parts.total(), r.step.available ? r.step.hi : 0.0});
    int label_w = 0;
    for (const auto& r : *rows_)
      label_w = std::max(label_w, fm.horizontalAdvance(row_label(r)));
    const int left = 8 + label_w + 10, right = width() - 90, bar_h = fm.height() + 2, row_h = 2 * fm.height() + 30;
    int y = 8;
    // Legend.
    int lx = left;
    for (const std::size_t i : shown) {
      const QString name = QString::fromUtf8(models::part_info(models::step_part(i)).label);
      p.fillRect(QRect(lx, y + 2, 10, 10), colours[i]);
      p.drawText(QPoint(lx + 14, y + fm.ascent()), name);
      lx += 14 + fm.horizontalAdvance(name) + 16;
    }
    y += fm.height() + 10;
    const double px = scale > 0 ? (right - left) / scale : 0;
    for (const auto& r : *rows_) {
      p.setPen(palette().text().color());
      p.drawText(QRect(8, y, label_w, fm.height() + 6), Qt::AlignLeft | Qt::AlignVCenter,
                 row_label(r));
      if (r.refused) {
        p.drawText(QRect(left, y, width() - left - 8, fm.height() + 6), Qt::AlignLeft | Qt::AlignVCenter,
                   fm.elidedText(tr("not runnable here: %1").arg(QString::fromStdString(*r.refused)), Qt::ElideRight,
                                 width() - left - 8));
        y += row_h;
        continue;
      }
      double x = left;
      for (const std::size_t i : shown) {
        const double w = std::max(0.0, r.parts.s[i]) * px;
        p.fillRect(QRectF(x, y + 2, w, fm.height() + 2), colours[i]);
        x += w;
      }
      if (r.step.available) {
        // The 90 % interval of the step: a whisker with caps just under the stack, not through it.
        p.setPen(QPen(palette().text().color(), 1.5));
        const double mid = y + 2 + bar_h + 5;
        const double lo = left + r.step.lo * px, hi = left + std::min(r.step.hi * px, static_cast<double>(right));
        p.drawLine(QPointF(lo, mid), QPointF(hi, mid));
        p.drawLine(QPointF(lo, mid - 3), QPointF(lo, mid + 3));
        p.drawLine(QPointF(hi, mid - 3), QPointF(hi, mid + 3));
      }
      p.setPen(palette().text().color());
      p.drawText(QPoint(right + 6, y + fm.ascent() + 3), QString::number(r.prediction.step_s, 'g', 4) + " s");
      p.drawText(QRect(left, y + bar_h + 12, width() - left - 8, fm.height() + 4), Qt::AlignLeft | Qt::AlignVCenter,
                 fm.elidedText(QString::fromStdString(r.why), Qt::ElideRight, width() - left - 8));
      y += row_h;
    }
    // The time axis every bar is drawn on, ticks at round values.
    if (scale > 0) {
      p.setPen(palette().text().color());
      p.drawLine(QPointF(left, y), QPointF(right, y));
      const double step = step_125(scale / 5);
      axis_ticks_.clear();
      for (int k = 0; k * step <= scale * (1 + 1e-9); ++k) {
        const double x = left + k * step * px;
        p.drawLine(QPointF(x, y), QPointF(x, y + 4));
        const QString label = seconds_label(k * step);
        p.drawText(QPointF(x - fm.horizontalAdvance(label) / 2.0, y + 5 + fm.ascent()), label);
        axis_ticks_ << label;
      }
      p.drawText(QPointF(right + 6, y + 5 + fm.ascent()), tr("step"));
    }
  }

 public:
  // The time axis' tick labels as last painted (tests).
  [[nodiscard]] const QStringList& axis_ticks() const noexcept { return axis_ticks_; }

 private:
  const std::vector<CompareRow>* rows_ = nullptr;
  QStringList axis_ticks_;
};

CompareView::CompareView(const models::Catalog& catalog, std::function<GuiScenario()> scenario, QWidget* parent)
    : QWidget(parent), catalog_(catalog), scenario_(std::move(scenario)) {
  auto* v = new QVBoxLayout(this);
  auto* line = new QHBoxLayout;
  strategies_ = new QLineEdit(QStringLiteral("ring, allgather, ulysses, usp:2x4, double-ring:4"), this);
  strategies_->setToolTip(tr("strategies to compare on the form's scenario (its layout A, mesh and context), comma-separated"));
  compare_btn_ = new QPushButton(tr("Compare"), this);
  line->addWidget(new QLabel(tr("Strategies"), this));
  line->addWidget(strategies_, 1);
  line->addWidget(compare_btn_);
  v->addLayout(line);
  status_ = new QLabel(tr("the step of each strategy, broken down, with its 90 % interval as an error bar"), this);
  status_->setWordWrap(true);
  v->addWidget(status_);
  bars_ = new CompareBars(this);
  v->addWidget(bars_, 1);
  connect(compare_btn_, &QPushButton::clicked, this, &CompareView::start);
}

CompareView::~CompareView() {
  cancel_ = true;
  if (worker_) worker_->wait();
}

QWidget* CompareView::bars() const noexcept { return bars_; }

QStringList CompareView::axis_ticks() const { return bars_->axis_ticks(); }

void CompareView::start() {
  if (running()) return;
  models::ScenarioSpec base;
  std::vector<models::Strategy> strategies;
  try {
    const auto g = scenario_();
    base = g.spec;
    base.layout = g.layouts.at(0);
    for (const auto& t : models::split(strategies_->text().toStdString(), ','))
      if (!models::trim(t).empty()) strategies.push_back(models::Strategy::parse(models::trim(t)));
    if (strategies.empty()) throw models::InputError({}, 0, "strategies", "list at least one strategy");
  } catch (const models::InputError& e) {
    status_->setText(QString::fromStdString(field_message(e)));
    return;
  }
  cancel_ = false;
  pending_.reset();
  error_.clear();
  compare_btn_->setEnabled(false);
  status_->setText(tr("comparing…"));
  worker_ = QThread::create([this, base, strategies] {
    try {
      pending_ = compare_strategies(base, strategies, catalog_, cancel_);
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  });
  connect(worker_, &QThread::finished, this, &CompareView::done);
  worker_->start();
}

void CompareView::done() {
  worker_->deleteLater();
  worker_ = nullptr;
  compare_btn_->setEnabled(true);
  const bool ok = pending_.has_value();
  if (ok) {
    rows_ = std::move(*pending_);
    pending_.reset();
    bars_->set_rows(&rows_);
    // The full texts the bars elide (a long reason, a long why).
    QStringList tips;
    for (const auto& r : rows_)
      tips << QString::fromStdString(r.strategy + " " + r.layout + " (" + (r.impl.empty() ? std::string("-") : r.impl) + "): " +
                                     (r.refused ? "not runnable here: " + *r.refused : r.why));
    bars_->setToolTip(tips.join("\n"));
    std::size_t refused = 0;
    for (const auto& r : rows_) refused += r.refused ? 1 : 0;
    status_->setText(tr("%1 strategies compared%2; bars: the step's parts, whisker: its 90 % interval")
                         .arg(rows_.size())
                         .arg(refused ? tr(", %1 not runnable here").arg(refused) : QString()));
  } else {
    status_->setText(tr("failed: %1").arg(QString::fromStdString(error_)));
  }
  emit finished(ok);
}

}  // namespace ringsim::gui
