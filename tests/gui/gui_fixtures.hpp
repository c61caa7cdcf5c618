#pragma once
// What every GUI test file needs: the one QApplication of the test process and a run of the
// window's form that waits (bounded) for the worker.
#include <QApplication>
#include <QPushButton>
#include <QSignalSpy>

#include "gui/main_window.hpp"
#include "gui/scenario_file.hpp"

namespace ringsim::test {

inline QApplication& app() {
  static int argc = 1;
  static char name[] = "ringsim_gui_tests";
  static char* argv[] = {name, nullptr};
  // Never destroyed: a static QApplication outliving main() crashes in Qt's own teardown.
  static auto* a = QApplication::instance() ? static_cast<QApplication*>(QApplication::instance()) : new QApplication(argc, argv);
  return *a;
}

// The Striped Attention paper's 8-GPU scenario: a 1B model over 64k tokens on 8 A100s, 2048 x 2048 tiles.
inline gui::GuiScenario paper_scenario() {
  gui::GuiScenario s;
  s.spec.hardware = "a100-80gb";
  s.spec.model = "ringattn-1b";
  s.spec.mp = 1;
  s.spec.sp = 8;
  s.spec.n_seq = 65536;
  s.spec.tile = models::TileShape{2048, 2048};
  return s;
}

// 32 tokens on 4 devices in 4 x 4 tiles: the matrix is drawn pair by pair in token order.
inline gui::GuiScenario small_matrix_scenario() {
  gui::GuiScenario s;
  s.spec.hardware = "a100-80gb";
  s.spec.model = "ringattn-1b";
  s.spec.sp = 4;
  s.spec.n_seq = 32;
  s.spec.tile = models::TileShape{4, 4};
  return s;
}

// Presses Run and waits for the worker (the runs of these tests take well under a second; the
// bound only stops a hang). True when the run completed.
inline bool run_and_wait(gui::MainWindow& w) {
  QSignalSpy done(&w, &gui::MainWindow::run_finished);
  w.run_button()->click();
  if (!done.wait(120000)) return false;
  return done.takeFirst().at(0).toBool();
}

}  // namespace ringsim::test
