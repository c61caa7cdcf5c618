#pragma once
// Qt Charts: predicted speedup over the first layout as n_seq varies, and the training step's
// time breakdown as one stacked bar per layout.
#include <cstdint>

#include <QString>
#include <QWidget>

#include "gui/run.hpp"

class QChartView;
class QValueAxis;

namespace ringsim::gui {

// A value axis' range and ticks: `ticks` values from min to max, `step` apart, every one a
// multiple of step, which is 1, 2, 2.5 or 5 x 10^k.
struct NiceAxis {
  double min = 0, max = 1, step = 0.25;
  int ticks = 5;
};
// The smallest such range covering [lo, hi] with at most max_ticks ticks (>= 3).
[[nodiscard]] NiceAxis nice_axis(double lo, double hi, int max_ticks = 8);
// Sets the axis' range, fixed ticks and a label format with the step's decimals.
void apply_nice_axis(QValueAxis& axis, const NiceAxis& nice);
// A token count in compact form, in the binary units sequence lengths are quoted in: 131072 ->
// "128k", 1048576 -> "1M", 1572864 -> "1536k"; a count that is not a multiple of 1024 stays
// as it is.
[[nodiscard]] QString compact_count(std::int64_t n);

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
