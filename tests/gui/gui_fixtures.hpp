#pragma once
// What every GUI test file needs: the one QApplication of the test process and a run of the
// window's form that waits (bounded) for the worker.
#include <QApplication>
#include <QPushButton>
#include <QSignalSpy>

#include "gui/main_window.hpp"

namespace ringsim::test {

inline QApplication& app() {
  static int argc = 1;
  static char name[] = "ringsim_gui_tests";
  static char* argv[] = {name, nullptr};
  // Never destroyed: a static QApplication outliving main() crashes in Qt's own teardown.
  static auto* a = QApplication::instance() ? static_cast<QApplication*>(QApplication::instance()) : new QApplication(argc, argv);
  return *a;
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
