#include "gui/charts_view.hpp"

#include <algorithm>
#include <cmath>

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLegend>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QValueAxis>

#include "gui/step_parts.hpp"

namespace ringsim::gui {

NiceAxis nice_axis(double lo, double hi, int max_ticks) {
  max_ticks = std::max(3, max_ticks);
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (!(hi > lo)) hi = lo + std::max(1.0, std::abs(lo));  // one value: a range from it
  const double raw = (hi - lo) / (max_ticks - 1);
  // The first candidate step whose rounded-out range needs at most max_ticks ticks; rounding
  // out can add a step at each end, hence the next decade's candidates too.
  for (double mag = std::pow(10.0, std::floor(std::log10(raw)));; mag *= 10)
    for (const double m : {1.0, 2.0, 2.5, 5.0}) {
      const double step = m * mag;
      if (step < raw * (1 - 1e-12)) continue;
      // A hair of slack so a bound that is already a multiple is not pushed out by rounding.
      const double lo_k = std::floor(lo / step + 1e-9), hi_k = std::ceil(hi / step - 1e-9);
      const auto ticks = static_cast<int>(hi_k - lo_k) + 1;
      if (ticks <= max_ticks) return {lo_k * step, hi_k * step, step, ticks};
    }
}

void apply_nice_axis(QValueAxis& axis, const NiceAxis& nice) {
  axis.setRange(nice.min, nice.max);
  axis.setTickType(QValueAxis::TicksFixed);
  axis.setTickCount(nice.ticks);
  // As many decimals as the step has (2.5 x 10^k has one more than its power of ten).
  const double e = -std::floor(std::log10(nice.step) + 1e-9);
  const bool half = std::abs(nice.step / std::pow(10.0, -e) - 2.5) < 1e-9;
  axis.setLabelFormat(QString("%.%1f").arg(std::max(0, static_cast<int>(e) + (half ? 1 : 0))));
}

QString compact_count(std::int64_t n) {
  if (n != 0 && n % (std::int64_t{1} << 20) == 0) return QString::number(n >> 20) + "M";
  if (n != 0 && n % 1024 == 0) return QString::number(n >> 10) + "k";
  return QString::number(n);
}

ChartsView::ChartsView(QWidget* parent)
    : QWidget(parent), speedup_(new QChartView(this)), breakdown_(new QChartView(this)) {
  auto* h = new QHBoxLayout(this);
  h->addWidget(speedup_, 1);
  h->addWidget(breakdown_, 1);
  speedup_->setRenderHint(QPainter::Antialiasing);
  set_result(nullptr);
}

void ChartsView::set_result(const RunResult* result) {
  auto* sc = new QChart;
  auto* bc = new QChart;
  sc->setTitle(tr("Predicted step speedup over %1 vs n_seq")
                   .arg(result && !result->layouts.empty() ? QString::fromStdString(result->layouts[0].layout)
                                                           : tr("the first layout")));
  bc->setTitle(tr("Training-step time breakdown (s)"));
  if (result && !result->layouts.empty()) {
    const auto& base = result->layouts[0].sweep_step_s;
    // n_seq doubles from point to point: a log2 axis, labelled at each point with the compact
    // count (a QLogValueAxis can only printf its labels: "131072", elided when narrow).
    auto* x = new QCategoryAxis;
    x->setTitleText("n_seq");
    x->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    const auto& ns = result->sweep_n_seq;
    if (!ns.empty()) {
      x->setRange(std::log2(static_cast<double>(ns.front())) - 0.5, std::log2(static_cast<double>(ns.back())) + 0.5);
      x->setStartValue(x->min());
    }
    for (const auto n : ns) x->append(compact_count(n), std::log2(static_cast<double>(n)));
    auto* y = new QValueAxis;
    y->setTitleText(tr("speedup (x)"));
    x->setTruncateLabels(false);  // compact labels fit; never "1310..."
    y->setTruncateLabels(false);
    sc->addAxis(x, Qt::AlignBottom);
    sc->addAxis(y, Qt::AlignLeft);
    double lo = 1, hi = 1;
    for (const auto& run : result->layouts) {
      auto* line = new QLineSeries;
      line->setName(QString::fromStdString(run.layout));
      line->setPointsVisible(true);
      for (std::size_t i = 0; i < ns.size(); ++i) {
        const double s = base[i] / run.sweep_step_s[i];
        if (!std::isfinite(s)) continue;  // a scenario impossible at that n_seq
        line->append(std::log2(static_cast<double>(ns[i])), s);
        lo = std::min(lo, s);
        hi = std::max(hi, s);
      }
      sc->addSeries(line);
      line->attachAxis(x);
      line->attachAxis(y);
    }
    apply_nice_axis(*y, nice_axis(std::max(0.0, lo - 0.05 * (hi - lo + 0.1)), hi + 0.05 * (hi - lo + 0.1)));

    auto* bars = new QStackedBarSeries;
    // The step's parts any layout has (models/analytic/breakdown.hpp: one pass, as the run
    // predicts it), in the breakdown's order and colours.
    std::vector<models::StepBreakdown> parts;
    for (const auto& run : result->layouts) parts.push_back(models::pass_breakdown(run.prediction, run.prediction.step_s));
    QStringList categories;
    std::vector<QBarSet*> sets;
    for (std::size_t i = 0; i < models::kStepParts; ++i) {
      if (std::none_of(parts.begin(), parts.end(), [&](const models::StepBreakdown& b) { return b.s[i] != 0; })) continue;
      auto* set = new QBarSet(QString::fromUtf8(models::part_info(models::step_part(i)).label));
      set->setColor(part_colours()[i]);
      for (const auto& b : parts) *set << b.s[i];
      sets.push_back(set);
    }
    for (const auto& run : result->layouts) categories << QString::fromStdString(run.layout);
    double bar_lo = 0, bar_hi = 0;  // the stacks' extents: negative and positive parts stack apart
    for (const auto& b : parts) {
      double pos = 0, neg = 0;
      for (const double v : b.s) (v >= 0 ? pos : neg) += v;
      bar_lo = std::min(bar_lo, neg);
      bar_hi = std::max(bar_hi, pos);
    }
    for (auto* s : sets) bars->append(s);
    bc->addSeries(bars);
    auto* cx = new QBarCategoryAxis;
    cx->append(categories);
    auto* cy = new QValueAxis;
    cy->setTitleText(tr("seconds per step"));
    apply_nice_axis(*cy, nice_axis(bar_lo, bar_hi));
    cx->setTruncateLabels(false);
    cy->setTruncateLabels(false);
    bc->addAxis(cx, Qt::AlignBottom);
    bc->addAxis(cy, Qt::AlignLeft);
    bars->attachAxis(cx);
    bars->attachAxis(cy);
  }
  // A legend entry too long for the chart is elided by Qt Charts; its tooltip keeps the text.
  for (auto* c : {sc, bc}) c->legend()->setShowToolTips(true);
  // QChartView owns its chart and deletes the previous one on setChart only for itself.
  auto* old_s = speedup_->chart();
  auto* old_b = breakdown_->chart();
  speedup_->setChart(sc);
  breakdown_->setChart(bc);
  delete old_s;
  delete old_b;
}

}  // namespace ringsim::gui
