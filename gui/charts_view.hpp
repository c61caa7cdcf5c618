#pragma once
// Qt Charts: predicted speedup over the first layout as n_seq varies, and the training step's
// time breakdown as one stacked bar per layout.
#include <QWidget>

#include "gui/run.hpp"

class QChartView;

namespace ringsim::gui {

class ChartsView : public QWidget {
  Q_OBJECT
 public:
  explicit ChartsView(QWidget* parent = nullptr);
  void set_result(const RunResult* result);
  [[nodiscard]] QChartView* speedup_view() const noexcept { return speedup_; }
  [[nodiscard]] QChartView* breakdown_view() const noexcept { return breakdown_; }

 private:
  QChartView* speedup_;
  QChartView* breakdown_;
};

}  // namespace ringsim::gui
