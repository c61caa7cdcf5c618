#pragma once
// Round tick spacings and time labels for the views that draw their own axes (the timeline, the
// Compare bars, the heatmap's round numbers). QtCharts axes use charts_view's nice_axis, whose
// steps include 2.5.
#include <QString>

namespace ringsim::gui {

// The smallest 1, 2 or 5 x 10^k at least `at_least` (> 0), with a hair of slack so a value that
// already is one is kept.
[[nodiscard]] double step_125(double at_least);

// Seconds in the unit a label reads best in: "0", "1.5 s", "250 ms", "80 µs".
[[nodiscard]] QString seconds_label(double s);

}  // namespace ringsim::gui
