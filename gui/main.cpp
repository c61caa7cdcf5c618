// ringsim-gui: the interactive window, or with --scenario FILE --export-dir DIR a headless
// render of every view to PNG (exit 0; 2 for a bad scenario; 1 for any other failure).
#include <cstdio>
#include <cstring>
#include <string>

#include <QApplication>
#include <QEventLoop>
#include <QLabel>
#include <QSettings>
#include <QTimer>

#include "gui/compare_view.hpp"
#include "gui/main_window.hpp"
#include "gui/plan_view.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"

namespace {

int usage() {
  std::fputs("usage: ringsim-gui [--scenario FILE.json] [--export-dir DIR]\n", stderr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario_path, export_dir;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--scenario") == 0 && has_value) scenario_path = argv[++i];
    else if (std::strcmp(argv[i], "--export-dir") == 0 && has_value) export_dir = argv[++i];
    else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) return usage(), 0;
    else if (argv[i][0] == '-' && std::strncmp(argv[i], "-platform", 9) != 0) return usage();
  }
  if (!export_dir.empty() && scenario_path.empty()) {
    std::fputs("ringsim-gui: --export-dir needs --scenario FILE\n", stderr);
    return 2;
  }
  // Headless export must not need a display.
  if (!export_dir.empty() && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");

  using namespace ringsim;
  gui::GuiScenario scenario;
  models::Catalog catalog;
  if (!scenario_path.empty()) {
    try {
      scenario = gui::load_scenario(scenario_path);
      gui::validate(scenario.spec, scenario.layouts, catalog);
    } catch (const models::InputError& e) {
      std::fprintf(stderr, "ringsim-gui: %s: %s\n", scenario_path.c_str(), e.what());
      return 2;
    }
  }
  QApplication app(argc, argv);
  // The interactive window remembers its size and last scenario (~/.config/ringsim/ringsim-gui.conf
  // on Linux); a headless export reads and writes nothing.
  QSettings settings("ringsim", "ringsim-gui");
  gui::MainWindow window(catalog, export_dir.empty() ? &settings : nullptr);
  if (!scenario_path.empty()) window.set_scenario(scenario);
  if (export_dir.empty()) {
    if (!settings.contains("window/geometry")) window.resize(1400, 900);
    window.show();
    // Opens on a finished run, not an empty window: the opening scenario (or --scenario's) runs
    // at once, on the worker as any run.
    window.open_ready();
    return QApplication::exec();
  }
  window.resize(1500, 950);
  window.show();
  bool completed = false;
  QEventLoop loop;
  QObject::connect(&window, &gui::MainWindow::run_finished, &loop, [&](bool ok) {
    completed = ok;
    loop.quit();
  });
  window.start_run();
  loop.exec();
  if (!completed) {
    std::fprintf(stderr, "ringsim-gui: run failed: %s\n", window.status_label()->text().toStdString().c_str());
    return 1;
  }
  // The Compare tab: the scenario under its default list of strategies.
  QEventLoop compare_loop;
  QObject::connect(window.compare_view(), &gui::CompareView::finished, &compare_loop, [&](bool) { compare_loop.quit(); });
  window.compare_view()->start();
  if (window.compare_view()->running()) compare_loop.exec();
  // The Plan tab too: the plans for the scenario's hardware, model, devices and context.
  auto* plan = window.plan_view();
  const auto s = window.scenario();
  plan->set_inputs(QString::fromStdString(s.spec.hardware), QString::fromStdString(s.spec.model),
                   QString::number(s.spec.mp * s.spec.sp), QString::number(s.spec.n_seq), "max-throughput");
  QEventLoop plan_loop;
  QObject::connect(plan, &gui::PlanView::finished, &plan_loop, [&](bool) { plan_loop.quit(); });
  plan->start();
  if (plan->running()) plan_loop.exec();
  const auto files = window.export_all(QString::fromStdString(export_dir));
  for (const auto& f : files) std::printf("%s\n", f.toStdString().c_str());
  return files.isEmpty() ? 1 : 0;
}
