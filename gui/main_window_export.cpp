// The main window's exports: a view as PNG or SVG, the numbers behind it as CSV, the whole set
// headless, and the simulated step as a Chrome trace for Perfetto.
#include <QApplication>
#include <QBuffer>
#include <QChartView>
#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QLabel>
#include <QMessageBox>
#include <QPainter>
#include <QSvgGenerator>
#include <QTabWidget>
#include <QUrl>
#include <QComboBox>
#include <QCheckBox>

#include "gui/charts_view.hpp"
#include "gui/compare_view.hpp"
#include "gui/heatmap_widget.hpp"
#include "gui/main_window.hpp"
#include "gui/matrix_view.hpp"
#include "gui/plan_view.hpp"
#include "gui/timeline_widget.hpp"
#include "gui/view_data.hpp"
#include "io/output_file.hpp"
#include "models/io/error.hpp"

namespace ringsim::gui {

namespace {

// Written through io (complete or absent, never through a link); false when it could not be.
bool write_text(const QString& path, std::string_view text) {
  try {
    io::write_output(path.toStdString(), text);
  } catch (const io::OutputError&) {
    return false;
  }
  return true;
}

QString file_part(QString layout) { return layout.replace(':', '_'); }

}  // namespace

QWidget* MainWindow::current_view() const {
  QWidget* page = tabs_->currentWidget();
  return page == matrix_ ? matrix_->matrices() : page;
}

bool MainWindow::export_widget(QWidget* widget, const QString& path) {
  // Rendered in memory, then written through io (complete or absent, never through a link).
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (path.endsWith(".svg", Qt::CaseInsensitive)) {
    QSvgGenerator gen;
    gen.setOutputDevice(&buffer);
    gen.setSize(widget->size());
    gen.setViewBox(widget->rect());
    gen.setTitle("ringsim");
    QPainter p;
    if (!p.begin(&gen)) return false;
    widget->render(&p);
    if (!p.end()) return false;
  } else if (!widget->grab().save(&buffer, "PNG")) {
    return false;
  }
  return write_text(path, std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
}

QStringList MainWindow::export_all(const QString& dir) {
  QStringList written;
  QDir().mkpath(dir);
  auto save = [&](QWidget* w, const QString& name) {
    QApplication::processEvents();
    const QString path = QDir(dir).filePath(name);
    if (export_widget(w, path)) written << path;
  };
  // The numbers behind the current tab beside its picture (a view too large to list is left out).
  auto save_data = [&] {
    try {
      const auto [name, text] = current_view_data();
      const QString path = QDir(dir).filePath(name);
      if (!text.empty() && write_text(path, text)) written << path;
    } catch (const models::InputError&) {
    }
  };
  const int tab = tabs_->currentIndex();
  tabs_->setCurrentWidget(heat_pair_);
  save(heat_pair_, "heatmap.png");
  save_data();
  tabs_->setCurrentWidget(charts_);
  save(charts_->speedup_view(), "speedup.png");
  save(charts_->breakdown_view(), "breakdown.png");
  save_data();
  const bool both = matrix_->side_by_side_box()->isChecked();
  matrix_->side_by_side_box()->setChecked(false);
  for (int i = 0; i < view_layout_->count(); ++i) {
    view_layout_->setCurrentIndex(i);
    const QString name = view_layout_->itemText(i).replace(':', '_');
    tabs_->setCurrentWidget(matrix_);
    save(matrix_->matrix(), "matrix_" + name + ".png");
    save_data();
    // Every round at once, coloured by device (the paper's figures), then back to one round.
    const bool all = matrix_->all_rounds_box()->isChecked();
    matrix_->all_rounds_box()->setChecked(true);
    save(matrix_->matrix(), "matrix_all_" + name + ".png");
    matrix_->all_rounds_box()->setChecked(all);
    tabs_->setCurrentWidget(timeline_);
    save(timeline_, "timeline_" + name + ".png");
    save_data();
  }
  // The two layouts' all-rounds matrices side by side (the paper's figures in one picture).
  if (view_layout_->count() == 2) {
    view_layout_->setCurrentIndex(0);
    tabs_->setCurrentWidget(matrix_);
    const bool all = matrix_->all_rounds_box()->isChecked();
    matrix_->all_rounds_box()->setChecked(true);
    matrix_->side_by_side_box()->setChecked(true);
    save(matrix_->matrices(), "matrix_side_by_side.png");
    matrix_->all_rounds_box()->setChecked(all);
  }
  matrix_->side_by_side_box()->setChecked(both);
  if (!compare_->rows().empty()) {
    tabs_->setCurrentWidget(compare_);
    save(compare_, "compare.png");
    save_data();
  }
  if (plan_->result()) {
    tabs_->setCurrentWidget(plan_);
    save(plan_, "plan.png");
    save_data();
  }
  tabs_->setCurrentIndex(tab);
  return written;
}


std::pair<QString, std::string> MainWindow::current_view_data() const {
  QWidget* page = tabs_->currentWidget();
  if (page == plan_) return {QStringLiteral("plans.csv"), plan_->answer_csv()};
  if (page == compare_) return {QStringLiteral("compare.csv"), compare_->rows().empty() ? std::string() : compare_csv(compare_->rows())};
  const LayoutRun* run = shown_run();
  if (!run) return {};
  const QString layout = file_part(QString::fromStdString(run->layout));
  if (page == heat_pair_) return {QStringLiteral("heatmap.csv"), heatmap_csv(*result_)};
  if (page == charts_) return {QStringLiteral("charts.csv"), charts_csv(*result_)};
  if (page == timeline_) return {"timeline_" + layout + ".csv", timeline_csv(timeline_->timeline())};
  if (page == matrix_) return {"matrix_" + layout + ".csv", matrix_csv(*run)};
  return {};
}

void MainWindow::export_current_data() {
  std::pair<QString, std::string> view;
  try {
    view = current_view_data();
  } catch (const models::InputError& e) {
    QMessageBox::warning(this, tr("Export view data"), QString::fromStdString(e.message()));
    return;
  }
  if (view.second.empty()) {
    QMessageBox::information(this, tr("Export view data"), tr("This view has no data yet: run a scenario (or a plan) first."));
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Export view data"), view.first, tr("CSV (*.csv)"));
  if (!path.isEmpty() && !write_text(path, view.second))
    QMessageBox::warning(this, tr("Export view data"), tr("Could not write %1").arg(path));
}

bool MainWindow::write_chrome_trace(const QString& path) {
  const LayoutRun* run = shown_run();
  // Above the simulated timeline's size the GUI thread would simulate millions of spans: the
  // command line does that (ringsim simulate --trace).
  if (!run || !run->timeline.simulated) return false;
  return write_text(path, chrome_trace_of(*run->scenario));
}

void MainWindow::open_in_perfetto() {
  const LayoutRun* run = shown_run();
  if (!run) return;
  if (!run->timeline.simulated) {
    QMessageBox::information(this, tr("Open in Perfetto"),
                             tr("Above %1 devices the timeline shows the analytic rounds, not a simulation; "
                                "`ringsim simulate --trace FILE` writes the whole step's trace.").arg(kMaxSimulatedDevices));
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Save the Chrome trace"),
                                                    "trace_" + file_part(QString::fromStdString(run->layout)) + ".json",
                                                    tr("Chrome trace (*.json)"));
  if (path.isEmpty()) return;
  if (!write_chrome_trace(path)) {
    QMessageBox::warning(this, tr("Open in Perfetto"), tr("Could not write %1").arg(path));
    return;
  }
  // Perfetto's page cannot be handed a local file by URL: it opens, and the file is one
  // "Open trace file" away.
  QDesktopServices::openUrl(QUrl(QStringLiteral("https://ui.perfetto.dev")));
  status_->setText(tr("wrote %1: in Perfetto, choose \"Open trace file\" and pick it").arg(path));
}

void MainWindow::export_current(const QString& suffix) {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export view"), "view." + suffix,
                                                    suffix == "svg" ? tr("SVG (*.svg)") : tr("PNG (*.png)"));
  if (!path.isEmpty() && !export_widget(current_view(), path))
    QMessageBox::warning(this, tr("Export view"), tr("Could not write %1").arg(path));
}

}  // namespace ringsim::gui
