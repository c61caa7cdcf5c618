#include "gui/charts_view.hpp"

#include <cmath>

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QValueAxis>

namespace ringsim::gui {

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
    auto* x = new QLogValueAxis;
    x->setBase(2);
    x->setLabelFormat("%.0f");
    x->setTitleText("n_seq");
    auto* y = new QValueAxis;
    y->setTitleText(tr("speedup (x)"));
    sc->addAxis(x, Qt::AlignBottom);
    sc->addAxis(y, Qt::AlignLeft);
    double lo = 1, hi = 1;
    for (const auto& run : result->layouts) {
      auto* line = new QLineSeries;
      line->setName(QString::fromStdString(run.layout));
      line->setPointsVisible(true);
      for (std::size_t i = 0; i < result->sweep_n_seq.size(); ++i) {
        const double s = base[i] / run.sweep_step_s[i];
        if (!std::isfinite(s)) continue;  // a scenario impossible at that n_seq
        line->append(static_cast<double>(result->sweep_n_seq[i]), s);
        lo = std::min(lo, s);
        hi = std::max(hi, s);
      }
      sc->addSeries(line);
      line->attachAxis(x);
      line->attachAxis(y);
    }
    y->setRange(std::max(0.0, lo - 0.05 * (hi - lo + 0.1)), hi + 0.05 * (hi - lo + 0.1));

    auto* bars = new QStackedBarSeries;
    const char* names[] = {"attention fwd", "attention bwd", "other compute", "tp comm", "exposed transfer"};
    QStringList categories;
    std::vector<QBarSet*> sets;
    for (const char* n : names) sets.push_back(new QBarSet(tr(n)));
    for (const auto& run : result->layouts) {
      const auto& p = run.prediction;
      categories << QString::fromStdString(run.layout);
      // attention_fwd_s / bwd_s include the exposed transfer time; show it once, on its own.
      // The forward share is exact from the rounds; the backward gets the rest.
      const auto& rounds = p.rounds_fwd;
      double fwd_exposed = 0;
      for (const auto& r : rounds)
        fwd_exposed += r.round_s - run.scenario->profile.round_overhead_s - r.compute_max_s;
      fwd_exposed *= static_cast<double>(run.scenario->model.layers);
      *sets[0] << p.attention_fwd_s - fwd_exposed;
      *sets[1] << p.attention_bwd_s - (p.exposed_transfer_s - fwd_exposed);
      *sets[2] << p.other_compute_s;
      *sets[3] << p.collective_s;
      *sets[4] << p.exposed_transfer_s;
    }
    for (auto* s : sets) bars->append(s);
    bc->addSeries(bars);
    auto* cx = new QBarCategoryAxis;
    cx->append(categories);
    auto* cy = new QValueAxis;
    cy->setTitleText(tr("seconds per step"));
    bc->addAxis(cx, Qt::AlignBottom);
    bc->addAxis(cy, Qt::AlignLeft);
    bars->attachAxis(cx);
    bars->attachAxis(cy);
  }
  // QChartView owns its chart and deletes the previous one on setChart only for itself.
  auto* old_s = speedup_->chart();
  auto* old_b = breakdown_->chart();
  speedup_->setChart(sc);
  breakdown_->setChart(bc);
  delete old_s;
  delete old_b;
}

}  // namespace ringsim::gui
