#pragma once
// The colours of a step's parts (models/analytic/breakdown.hpp) in the GUI's bars, one per part,
// in the breakdown's order, so every chart stacks the same list the command line prints.
#include <array>

#include <QColor>

#include "models/analytic/breakdown.hpp"

namespace ringsim::gui {

[[nodiscard]] inline const std::array<QColor, models::kStepParts>& part_colours() {
  static const std::array<QColor, models::kStepParts> c{
      QColor(0x4e79a7), QColor(0x76b7b2), QColor(0xedc948), QColor(0xb07aa1), QColor(0xe15759), QColor(0xff9da7),
      QColor(0x9c755f), QColor(0xf28e2b), QColor(0x59a14f), QColor(0xbab0ac), QColor(0x8cd17d), QColor(0xd37295),
      QColor(0x79706e)};
  return c;
}

}  // namespace ringsim::gui
