#include "gui/axis_ticks.hpp"

#include <cmath>

namespace ringsim::gui {

double step_125(double at_least) {
  const double mag = std::pow(10.0, std::floor(std::log10(at_least)));
  for (const double m : {1.0, 2.0, 5.0})
    if (m * mag >= at_least * (1 - 1e-9)) return m * mag;
  return 10 * mag;
}

QString seconds_label(double s) {
  if (s == 0) return QStringLiteral("0");
  if (s >= 1) return QString::number(s, 'g', 4) + " s";
  if (s >= 1e-3) return QString::number(s * 1e3, 'g', 4) + " ms";
  return QString::number(s * 1e6, 'g', 4) + " µs";
}

}  // namespace ringsim::gui
