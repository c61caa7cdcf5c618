// The GUI's opening, as a user sees it, after Qt has started: the catalog read, the window built
// and shown, the opening scenario's run on the worker (Llama-3-8B on 8 H100s at 128k tokens,
// contiguous against zigzag, with its one-layer simulation and sweep) and its views drawn.
// Offscreen, so it needs no display; docs/gui.md and docs/performance.md keep the figure.
#include <benchmark/benchmark.h>

#include <QApplication>
#include <QEventLoop>

#include "gui/main_window.hpp"

namespace {

int argc_ = 1;
char name_[] = "ringsim_gui_open_bench";
char* argv_[] = {name_, nullptr};

void BM_OpenToFinishedRun(benchmark::State& state) {
  qputenv("QT_QPA_PLATFORM", "offscreen");
  static QApplication app(argc_, argv_);
  bool completed = false;
  for (auto _ : state) {
    ringsim::models::Catalog catalog;
    ringsim::gui::MainWindow w(catalog, nullptr);
    w.resize(1400, 900);
    w.show();
    QEventLoop loop;
    QObject::connect(&w, &ringsim::gui::MainWindow::run_finished, &loop, [&](bool ok) {
      completed = ok;
      loop.quit();
    });
    w.open_ready();
    loop.exec();
    QApplication::processEvents();  // the finished run's views painted
  }
  state.counters["completed"] = completed ? 1 : 0;
}
BENCHMARK(BM_OpenToFinishedRun)->Iterations(5)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
