#pragma once
// The main window: scenario form (validated as you type through models::resolve), Run/Cancel
// with a worker thread, and the views in tabs. All numbers come from the library.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <QMainWindow>
#include <QStringList>

#include "gui/run.hpp"
#include "gui/scenario_file.hpp"
#include "models/catalog/resolve.hpp"

class QCheckBox;
class QCloseEvent;
class QComboBox;
class QSettings;
class QLineEdit;
class QLabel;
class QPushButton;
class QProgressBar;
class QTabWidget;
class QThread;

namespace ringsim::gui {

class HeatmapWidget;
class MatrixView;
class ChartsView;
class TimelineWidget;
class PlanView;
class CompareView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  // `settings`: where the window remembers its size and last scenario (restored here, saved when
  // it closes); nullptr remembers nothing (tests, headless export).
  explicit MainWindow(models::Catalog catalog, QSettings* settings = nullptr, QWidget* parent = nullptr);
  ~MainWindow() override;

  void set_scenario(const GuiScenario& s);
  // The form as a scenario; throws models::InputError for text that does not parse.
  [[nodiscard]] GuiScenario scenario() const;
  [[nodiscard]] bool scenario_valid() const noexcept { return valid_; }
  [[nodiscard]] QString validation_message() const;

  void start_run();
  // Runs the form's scenario as soon as the event loop turns: the window opens on a finished run.
  void open_ready();
  void cancel_run();
  [[nodiscard]] bool running() const noexcept { return worker_ != nullptr; }
  [[nodiscard]] const RunResult* result() const noexcept { return result_.get(); }

  // Renders a widget to PNG or SVG (by suffix); false when the file could not be written.
  static bool export_widget(QWidget* widget, const QString& path);
  // Every view to DIR/<name>.png and the numbers behind it to DIR/<name>.csv, switching tabs and
  // layouts as needed; the files written.
  QStringList export_all(const QString& dir);
  // The current tab's numbers as CSV (gui/view_data.hpp) and a file name for them; an empty text
  // where the view has no data yet. Throws models::InputError for a matrix too large to list.
  [[nodiscard]] std::pair<QString, std::string> current_view_data() const;
  // The one-layer simulation the timeline shows, as a Chrome trace (sim::chrome_trace_json) to
  // `path`; false without a simulated timeline or when the file cannot be written.
  bool write_chrome_trace(const QString& path);

  // For tests and scripting.
  [[nodiscard]] QLineEdit* mesh_edit() const noexcept { return mesh_; }
  [[nodiscard]] QLineEdit* n_seq_edit() const noexcept { return n_seq_; }
  [[nodiscard]] QLineEdit* tile_edit() const noexcept { return tile_; }
  [[nodiscard]] QPushButton* run_button() const noexcept { return run_btn_; }
  [[nodiscard]] QComboBox* impl_combo() const noexcept { return impl_; }
  [[nodiscard]] QComboBox* hardware_combo() const noexcept { return hardware_; }
  [[nodiscard]] QComboBox* layout_a_combo() const noexcept { return layout_a_; }
  [[nodiscard]] QPushButton* cancel_button() const noexcept { return cancel_btn_; }
  [[nodiscard]] QLabel* status_label() const noexcept { return status_; }
  [[nodiscard]] HeatmapWidget* heatmap(int i) const noexcept { return heat_[i]; }
  [[nodiscard]] QCheckBox* fixed_scale_box() const noexcept { return fixed_scale_; }
  [[nodiscard]] TimelineWidget* timeline_view() const noexcept { return timeline_; }
  [[nodiscard]] MatrixView* matrix_view() const noexcept { return matrix_; }
  [[nodiscard]] QComboBox* view_layout_combo() const noexcept { return view_layout_; }
  [[nodiscard]] QTabWidget* tabs() const noexcept { return tabs_; }
  [[nodiscard]] PlanView* plan_view() const noexcept { return plan_; }
  [[nodiscard]] CompareView* compare_view() const noexcept { return compare_; }
  // Each layout's "why" (models::why), shown under the views.
  [[nodiscard]] QLabel* why_label() const noexcept { return why_; }

 signals:
  void progress_changed(double fraction);
  // completed: false when cancelled or failed.
  void run_finished(bool completed);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void restore_settings();
  // The Plan tab's hardware, model, devices and context from the form (opening, a scenario file).
  void plan_from_form();
  void show_about();
  void show_help();
  QWidget* build_form();
  QWidget* build_views();
  void validate_form();
  void worker_done();
  void show_result();
  void show_layout_views();
  QWidget* current_view() const;
  void open_scenario();
  void save_scenario_as();
  void export_current(const QString& suffix);
  void export_current_data();
  void open_in_perfetto();
  // The layout the matrix and timeline show (the view-layout box's), or null without a result.
  [[nodiscard]] const LayoutRun* shown_run() const;

  models::Catalog catalog_;
  models::ScenarioSpec extra_;  // fields the form does not show (batch, seed), kept from files
  QSettings* settings_ = nullptr;  // not owned
  QComboBox* hardware_ = nullptr;
  QComboBox* model_ = nullptr;
  QLineEdit* mesh_ = nullptr;
  QLineEdit* n_seq_ = nullptr;
  QComboBox* layout_a_ = nullptr;
  QComboBox* layout_b_ = nullptr;
  QComboBox* mask_ = nullptr;
  QComboBox* impl_ = nullptr;  // "default" or an implementation of configs/implementations
  QLineEdit* tile_ = nullptr;
  QLineEdit* profile_ = nullptr;
  QComboBox* cp_ = nullptr;     // context-parallel strategy
  QLineEdit* docs_ = nullptr;   // packed documents
  QLabel* error_ = nullptr;
  QPushButton* run_btn_ = nullptr;
  QPushButton* cancel_btn_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QComboBox* metric_ = nullptr;
  QComboBox* view_layout_ = nullptr;  // which layout the matrix and timeline show
  QWidget* heat_pair_ = nullptr;
  HeatmapWidget* heat_[2] = {nullptr, nullptr};
  QCheckBox* fixed_scale_ = nullptr;  // the heatmaps' fixed 0..1 colour scale
  MatrixView* matrix_ = nullptr;
  ChartsView* charts_ = nullptr;
  TimelineWidget* timeline_ = nullptr;
  PlanView* plan_ = nullptr;
  CompareView* compare_ = nullptr;
  QLabel* why_ = nullptr;
  bool valid_ = false;

  QThread* worker_ = nullptr;
  std::atomic<bool> cancel_{false};
  // Written by the worker before it finishes, read in worker_done() after QThread::finished.
  std::optional<RunResult> pending_;
  std::string worker_error_;
  std::unique_ptr<RunResult> result_;
};

}  // namespace ringsim::gui
