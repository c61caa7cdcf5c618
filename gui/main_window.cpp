#include "gui/main_window.hpp"

#include <charconv>

#include <QApplication>
#include <QCloseEvent>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QProgressBar>
#include <QSettings>
#include <QPushButton>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

#include "gui/charts_view.hpp"
#include "gui/compare_view.hpp"
#include "gui/error_text.hpp"
#include "gui/heatmap_widget.hpp"
#include "gui/matrix_view.hpp"
#include "gui/plan_view.hpp"
#include "gui/timeline_widget.hpp"
#include "io/build_info.hpp"
#include "models/analytic/breakdown.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"

namespace ringsim::gui {

using models::InputError;

namespace {

QComboBox* editable_combo(const QStringList& items, QWidget* parent) {
  auto* c = new QComboBox(parent);
  c->setEditable(true);
  c->addItems(items);
  return c;
}

std::string text_of(const QLineEdit* e) { return e->text().trimmed().toStdString(); }
std::string text_of(const QComboBox* c) { return c->currentText().trimmed().toStdString(); }

}  // namespace

MainWindow::MainWindow(models::Catalog catalog, QSettings* settings, QWidget* parent)
    : QMainWindow(parent), catalog_(std::move(catalog)), settings_(settings) {
  setWindowTitle(tr("ringsim — Ring vs Striped Attention"));
  auto* split = new QSplitter(this);
  split->addWidget(build_form());
  split->addWidget(build_views());
  split->setStretchFactor(1, 1);
  setCentralWidget(split);

  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(220);
  status_ = new QLabel(tr("ready"), this);
  cancel_btn_ = new QPushButton(tr("Cancel"), this);
  cancel_btn_->setEnabled(false);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_btn_);
  connect(cancel_btn_, &QPushButton::clicked, this, &MainWindow::cancel_run);

  auto* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open scenario…"), QKeySequence::Open, this, &MainWindow::open_scenario);
  file->addAction(tr("&Save scenario…"), QKeySequence::Save, this, &MainWindow::save_scenario_as);
  file->addSeparator();
  file->addAction(tr("Export view as &PNG…"), QKeySequence(tr("Ctrl+E")), this, [this] { export_current("png"); });
  file->addAction(tr("Export view as S&VG…"), this, [this] { export_current("svg"); });
  file->addAction(tr("Export view &data as CSV…"), QKeySequence(tr("Ctrl+Shift+E")), this, &MainWindow::export_current_data);
  file->addAction(tr("Open timeline in Pe&rfetto…"), QKeySequence(tr("Ctrl+T")), this, &MainWindow::open_in_perfetto);
  file->addSeparator();
  // Ctrl+Q on every platform (QKeySequence::Quit is empty on some desktops).
  file->addAction(tr("&Quit"), QKeySequence(tr("Ctrl+Q")), this, &QWidget::close);
  auto* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&How to read the views"), QKeySequence::HelpContents, this, &MainWindow::show_help);
  help->addAction(tr("&About ringsim"), this, &MainWindow::show_about);

  set_scenario(opening_scenario());
  restore_settings();
  plan_from_form();
}

void MainWindow::plan_from_form() {
  // The Plan tab asks about the form's machine and model: its hardware, model, the form's devices
  // (mp x sp) and context, goal max-throughput. Not on every edit: a plan the user opened into the
  // form ("Show this plan") keeps the search it came from.
  try {
    const auto s = scenario().spec;
    plan_->set_inputs(QString::fromStdString(s.hardware), QString::fromStdString(s.model), QString::number(s.mp * s.sp),
                      QString::number(s.n_seq), "max-throughput");
  } catch (const models::InputError&) {
  }
}

namespace {

constexpr const char* kGeometryKey = "window/geometry";
constexpr const char* kScenarioKey = "scenario/last";

}  // namespace

void MainWindow::restore_settings() {
  if (!settings_) return;
  restoreGeometry(settings_->value(kGeometryKey).toByteArray());
  const auto text = settings_->value(kScenarioKey).toString().toStdString();
  if (text.empty()) return;
  // A scenario the catalog no longer runs (a renamed model, a file from a newer build) is dropped:
  // the window opens on its default instead of on an error.
  try {
    auto last = scenario_from_json(text, "settings");
    validate(last.spec, last.layouts, catalog_);
    set_scenario(last);
  } catch (const models::InputError&) {
    settings_->remove(kScenarioKey);
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (settings_) {
    settings_->setValue(kGeometryKey, saveGeometry());
    // Only a scenario that parses: a half-typed mesh is not worth reopening on.
    try {
      settings_->setValue(kScenarioKey, QString::fromStdString(scenario_to_json(scenario())));
    } catch (const models::InputError&) {
    }
    settings_->sync();
  }
  QMainWindow::closeEvent(event);
}

void MainWindow::show_about() {
  const auto b = io::build_info();
  QMessageBox::about(this, tr("About ringsim"),
                     tr("<b>ringsim %1</b> (commit %2, %3 build)<br><br>"
                        "A simulator and analytical performance model of context-parallel causal attention: "
                        "ring, striped and zigzag layouts, all-gather, Ulysses, USP and double rings, each "
                        "predicted from calibrated kernel and link components.<br><br>"
                        "Every figure in this window is the library's (the same numbers as <tt>ringsim predict</tt>, "
                        "<tt>simulate</tt> and <tt>plan</tt>); docs/gui.md describes each view.")
                         .arg(QString::fromUtf8(b.version), QString::fromUtf8(b.commit), QString::fromUtf8(b.build_type)));
}

void MainWindow::show_help() {
  QMessageBox::information(
      this, tr("How to read the views"),
      tr("<b>Which device waits, and why striped removes it</b><ol>"
         "<li>Run the form's scenario (layout A contiguous, layout B striped or zigzag).</li>"
         "<li><b>Heatmap</b>: each cell is one device's work in one round; a bright cell beside dark "
         "ones is the busiest device the others wait for. Layout B's rows are even.</li>"
         "<li><b>Timeline</b>: the same rounds in time, compute and wait per device.</li></ol>"
         "<b>Matrix</b>: which device computes each tile of the attention matrix. "
         "<b>Charts</b>: the step cut into its parts (docs/breakdown.md). "
         "<b>Compare</b>: the scenario under several strategies on one attention kernel. "
         "<b>Plan</b>: <tt>ringsim plan</tt> for the form's hardware and model.<br><br>"
         "Hover or click a timeline span or a matrix tile for its device, round and K/V block.<br><br>"
         "Shortcuts: Ctrl+O open, Ctrl+S save a scenario, Ctrl+E export the view, Ctrl+Shift+E its data as CSV, "
         "Ctrl+T the timeline in Perfetto, Ctrl+Q quit, F1 this page."));
}

MainWindow::~MainWindow() {
  // The worker reads this window's catalog and flag: stop it before they go.
  cancel_ = true;
  if (worker_) worker_->wait();
}

QWidget* MainWindow::build_form() {
  auto* w = new QWidget(this);
  auto* form = new QFormLayout(w);
  hardware_ = new QComboBox(w);
  for (const auto& n : catalog_.hardware_names()) hardware_->addItem(QString::fromStdString(n));
  model_ = new QComboBox(w);
  for (const auto& n : catalog_.model_names()) model_->addItem(QString::fromStdString(n));
  mesh_ = new QLineEdit(w);
  mesh_->setToolTip(tr("tensor-parallel x sequence-parallel (ring size), e.g. 1x8"));
  n_seq_ = new QLineEdit(w);
  layout_a_ = editable_combo({"contiguous", "striped", "zigzag", "cyclic:16", "bucket-striped", "bucket-rotated",
                              "doc-zigzag", "doc-zigzag-docmajor", "ptrr"}, w);
  layout_b_ = editable_combo({"striped", "contiguous", "zigzag", "cyclic:16", "bucket-striped", "bucket-rotated",
                              "doc-zigzag", "doc-zigzag-docmajor", "ptrr"}, w);
  cp_ = editable_combo({"ring", "allgather", "ulysses", "usp:2x4", "usp:4x2", "double-ring:4"}, w);
  cp_->setToolTip(tr("context-parallel strategy: ring | allgather | ulysses | usp:UxR[:ring-inner] | double-ring:W"));
  docs_ = new QLineEdit(w);
  docs_->setPlaceholderText(tr("one sequence (e.g. lognormal:4096:1.5:1:16)"));
  docs_->setToolTip(tr("packed documents: a lengths file or lognormal:MEAN:SIGMA:SEED[:Q]; per-document causal mask"));
  mask_ = editable_combo({"causal", "full", "window:4096"}, w);
  // The implementation both layouts run on: "default" picks the most preferred one that offers
  // the hardware, mask and both layouts (models::Catalog::choose_implementation).
  impl_ = new QComboBox(w);
  impl_->addItem(QStringLiteral("default"));
  // The window runs training steps: the libraries that run one (a serving stack does not).
  for (const auto& n : catalog_.implementation_names())
    if (catalog_.implementation(n).runs_phase(models::RunPhase::Train)) impl_->addItem(QString::fromStdString(n));
  impl_->setToolTip(tr("the library that runs the ring (configs/implementations); default: the most preferred one "
                       "that offers the hardware, mask and both layouts"));
  tile_ = new QLineEdit(w);
  tile_->setPlaceholderText(tr("profile default"));
  profile_ = new QLineEdit(w);
  profile_->setPlaceholderText(tr("hardware default"));
  form->addRow(tr("Hardware"), hardware_);
  form->addRow(tr("Model"), model_);
  form->addRow(tr("Mesh (mp x sp)"), mesh_);
  form->addRow(tr("n_seq"), n_seq_);
  form->addRow(tr("Layout A"), layout_a_);
  form->addRow(tr("Layout B"), layout_b_);
  form->addRow(tr("Strategy (--cp)"), cp_);
  form->addRow(tr("Documents"), docs_);
  form->addRow(tr("Mask"), mask_);
  form->addRow(tr("Implementation"), impl_);
  form->addRow(tr("Tile (q x k)"), tile_);
  form->addRow(tr("Profile"), profile_);
  error_ = new QLabel(w);
  error_->setWordWrap(true);
  error_->setStyleSheet("color: #b00020;");
  form->addRow(error_);
  run_btn_ = new QPushButton(tr("Run"), w);
  form->addRow(run_btn_);
  connect(run_btn_, &QPushButton::clicked, this, &MainWindow::start_run);
  for (auto* e : {mesh_, n_seq_, tile_, profile_, docs_}) connect(e, &QLineEdit::textChanged, this, &MainWindow::validate_form);
  for (auto* c : {hardware_, model_, layout_a_, layout_b_, mask_, cp_, impl_})
    connect(c, &QComboBox::currentTextChanged, this, &MainWindow::validate_form);
  w->setMinimumWidth(260);
  return w;
}

QWidget* MainWindow::build_views() {
  auto* w = new QWidget(this);
  auto* v = new QVBoxLayout(w);
  auto* bar = new QHBoxLayout;
  metric_ = new QComboBox(w);
  metric_->addItems({tr("visited area"), tr("allowed pairs"), tr("tiles computed")});
  view_layout_ = new QComboBox(w);
  view_layout_->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // "contiguous" whole, not "contiguo"
  bar->addWidget(new QLabel(tr("Heatmap colour:"), w));
  bar->addWidget(metric_);
  fixed_scale_ = new QCheckBox(tr("fixed scale 0..1"), w);
  fixed_scale_->setToolTip(tr("colour every run on 0..1 of a full block, so two runs compare by colour "
                              "(unchecked: the scale spans the data of the two heatmaps shown)"));
  bar->addWidget(fixed_scale_);
  bar->addSpacing(20);
  bar->addWidget(new QLabel(tr("Matrix/timeline layout:"), w));
  bar->addWidget(view_layout_);
  bar->addStretch(1);
  v->addLayout(bar);
  tabs_ = new QTabWidget(w);
  heat_pair_ = new QWidget(tabs_);
  auto* h = new QHBoxLayout(heat_pair_);
  for (auto*& hm : heat_) {
    hm = new HeatmapWidget(heat_pair_);
    h->addWidget(hm);
  }
  matrix_ = new MatrixView(tabs_);
  charts_ = new ChartsView(tabs_);
  timeline_ = new TimelineWidget(tabs_);
  tabs_->addTab(heat_pair_, tr("Heatmap"));
  tabs_->addTab(matrix_, tr("Attention matrix"));
  tabs_->addTab(charts_, tr("Charts"));
  tabs_->addTab(timeline_, tr("Timeline"));
  compare_ = new CompareView(catalog_, [this] { return scenario(); }, tabs_);
  tabs_->addTab(compare_, tr("Compare"));
  plan_ = new PlanView(catalog_, tabs_);
  tabs_->addTab(plan_, tr("Plan"));
  v->addWidget(tabs_, 1);
  // What bounds each layout, in words, beside the pictures (a speedup of 1.0x next to a
  // dramatic heatmap needs its reason: a transfer-bound ring).
  why_ = new QLabel(w);
  why_->setWordWrap(true);
  why_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(why_);
  // A plan opened from the Plan tab becomes the form's scenario and runs.
  connect(plan_, &PlanView::open_plan, this, [this](const models::ScenarioSpec& spec, const std::vector<models::LayoutSpec>& layouts) {
    GuiScenario g;
    g.spec = spec;
    g.layouts = layouts;
    set_scenario(g);
    tabs_->setCurrentWidget(heat_pair_);
    if (!valid_) status_->setText(tr("this plan cannot be shown: %1").arg(validation_message()));
    start_run();
  });
  connect(metric_, &QComboBox::currentIndexChanged, this, [this](int i) {
    for (auto* hm : heat_) hm->set_metric(static_cast<Metric>(i));
  });
  connect(view_layout_, &QComboBox::currentIndexChanged, this, [this] { show_layout_views(); });
  connect(fixed_scale_, &QCheckBox::toggled, this, [this](bool on) {
    for (auto* hm : heat_) hm->set_fixed_scale(on);
  });
  return w;
}

void MainWindow::set_scenario(const GuiScenario& s) {
  extra_ = s.spec;
  hardware_->setCurrentText(QString::fromStdString(s.spec.hardware));
  model_->setCurrentText(QString::fromStdString(s.spec.model));
  mesh_->setText(QString("%1x%2").arg(s.spec.mp).arg(s.spec.sp));
  n_seq_->setText(s.spec.n_seq > 0 ? QString::number(s.spec.n_seq) : QString("65536"));
  layout_a_->setCurrentText(QString::fromStdString(s.layouts.at(0).text()));
  layout_b_->setCurrentText(QString::fromStdString(s.layouts.at(1).text()));
  mask_->setCurrentText(QString::fromStdString(s.spec.mask.text()));
  impl_->setCurrentText(s.spec.impl.empty() ? QStringLiteral("default") : QString::fromStdString(s.spec.impl));
  cp_->setCurrentText(QString::fromStdString(s.spec.cp.text()));
  docs_->setText(QString::fromStdString(models::docs_text(s.spec)));
  tile_->setText(s.spec.tile ? QString("%1x%2").arg(s.spec.tile->q).arg(s.spec.tile->k) : QString());
  profile_->setText(QString::fromStdString(s.spec.profile));
  validate_form();
}

GuiScenario MainWindow::scenario() const {
  GuiScenario s;
  s.spec = extra_;
  s.spec.hardware = text_of(hardware_);
  s.spec.hardware_file.clear();
  s.spec.model = text_of(model_);
  s.spec.model_file.clear();
  std::tie(s.spec.mp, s.spec.sp) = parse_pair(text_of(mesh_), "mesh");
  const auto n = text_of(n_seq_);
  const auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), s.spec.n_seq);
  if (n.empty() || ec != std::errc() || p != n.data() + n.size() || s.spec.n_seq <= 0)
    throw InputError({}, 0, "n_seq", "expected a positive integer, got '" + n + "'");
  // The form's strings become typed values here, once; an error names its field.
  s.layouts = models::parse_layouts({text_of(layout_a_), text_of(layout_b_)});
  s.spec.mask = models::MaskSpec::parse(text_of(mask_));
  s.spec.cp = models::Strategy::parse(text_of(cp_));
  if (const auto docs = text_of(docs_); docs.empty()) s.spec.docs.reset();
  else s.spec.docs = models::DocumentsSpec::parse(docs);
  const auto t = text_of(tile_);
  if (t.empty()) s.spec.tile.reset();
  else {
    const auto [q, k] = parse_pair(t, "tile");
    s.spec.tile = models::TileShape{q, k};
  }
  s.spec.profile = text_of(profile_);
  s.spec.impl = text_of(impl_) == "default" ? std::string() : text_of(impl_);
  return s;
}

QString MainWindow::validation_message() const { return error_->text(); }

void MainWindow::validate_form() {
  if (!run_btn_) return;  // still building the form
  try {
    const auto s = scenario();
    validate(s.spec, s.layouts, catalog_);
    valid_ = true;
    error_->clear();
  } catch (const InputError& e) {
    valid_ = false;
    error_->setText(QString::fromStdString(field_message(e)));
  }
  run_btn_->setEnabled(valid_ && !running());
}

void MainWindow::start_run() {
  if (running() || !valid_) return;
  GuiScenario s;
  try {
    s = scenario();
  } catch (const InputError&) {
    return;  // validate_form already shows why
  }
  cancel_ = false;
  pending_.reset();
  worker_error_.clear();
  progress_->setValue(0);
  status_->setText(tr("running…"));
  run_btn_->setEnabled(false);
  cancel_btn_->setEnabled(true);
  worker_ = QThread::create([this, s] {
    try {
      pending_ = compute_run(s.spec, s.layouts, catalog_, cancel_, [this](double f) {
        // Queued to the GUI thread; dropped by Qt if the window is gone.
        QMetaObject::invokeMethod(this, [this, f] {
          progress_->setValue(static_cast<int>(f * 1000));
          emit progress_changed(f);
        }, Qt::QueuedConnection);
      });
    } catch (const InputError& e) {
      worker_error_ = e.what();
    } catch (const std::exception& e) {
      worker_error_ = e.what();
    }
  });
  connect(worker_, &QThread::finished, this, &MainWindow::worker_done);
  worker_->start();
}

void MainWindow::open_ready() {
  QTimer::singleShot(0, this, [this] { start_run(); });
}

void MainWindow::cancel_run() {
  if (!running()) return;
  cancel_ = true;
  status_->setText(tr("cancelling…"));
  cancel_btn_->setEnabled(false);
}

void MainWindow::worker_done() {
  worker_->deleteLater();
  worker_ = nullptr;
  cancel_btn_->setEnabled(false);
  run_btn_->setEnabled(valid_);
  const bool ok = pending_.has_value();
  if (ok) {
    result_ = std::make_unique<RunResult>(std::move(*pending_));
    pending_.reset();
    progress_->setValue(1000);
    show_result();
    const auto& l = result_->layouts;
    QString msg = tr("done");
    if (l.size() == 2)
      msg += tr(": predicted step %1 s (%2) vs %3 s (%4), speedup %5x")
                 .arg(l[0].prediction.step_s, 0, 'g', 4).arg(QString::fromStdString(l[0].layout))
                 .arg(l[1].prediction.step_s, 0, 'g', 4).arg(QString::fromStdString(l[1].layout))
                 .arg(l[0].prediction.step_s / l[1].prediction.step_s, 0, 'f', 3);
    status_->setText(msg);
  } else {
    progress_->setValue(0);
    status_->setText(worker_error_.empty() ? tr("cancelled") : tr("failed: %1").arg(QString::fromStdString(worker_error_)));
  }
  emit run_finished(ok);
}

void MainWindow::show_result() {
  QStringList why;
  for (const auto& l : result_->layouts)
    why << QStringLiteral("<b>%1</b>: %2 (step %3 s)")
               .arg(QString::fromStdString(l.layout).toHtmlEscaped(), QString::fromStdString(models::why(l.prediction, models::pass_breakdown(l.prediction))).toHtmlEscaped())
               .arg(l.prediction.step_s, 0, 'g', 4);
  why_->setText(why.join("<br>"));
  const auto metric = static_cast<Metric>(metric_->currentIndex());
  for (std::size_t i = 0; i < 2; ++i)
    heat_[i]->set_data(i < result_->layouts.size() ? &result_->layouts[i] : nullptr, metric);
  charts_->set_result(result_.get());
  view_layout_->blockSignals(true);
  view_layout_->clear();
  for (const auto& l : result_->layouts) view_layout_->addItem(QString::fromStdString(l.layout));
  view_layout_->blockSignals(false);
  show_layout_views();
}

const LayoutRun* MainWindow::shown_run() const {
  if (!result_ || result_->layouts.empty()) return nullptr;
  const auto i = static_cast<std::size_t>(std::max(0, view_layout_->currentIndex()));
  return &result_->layouts[std::min(i, result_->layouts.size() - 1)];
}

void MainWindow::show_layout_views() {
  const LayoutRun* shown = shown_run();
  if (!shown) return;
  const auto& run = *shown;
  // Beside it (when asked): the other layout of the pair.
  const auto& layouts = result_->layouts;
  const LayoutRun* other = layouts.size() == 2 ? &layouts[shown == &layouts[0] ? 1 : 0] : nullptr;
  matrix_->set_data(&run, other);
  // Computed on the worker (the simulation may take a while); the title carries its note. Every
  // layout on one time axis, the longest layout's: switching shows the speedup, not two full widths.
  double shared_end = 0;
  for (const auto& l : result_->layouts) shared_end = std::max(shared_end, l.timeline.end_s);
  timeline_->set_timeline(run.timeline,
                          tr("%1: %2").arg(QString::fromStdString(run.layout), QString::fromStdString(run.timeline.note)),
                          shared_end);
}

void MainWindow::open_scenario() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), {}, tr("Scenario (*.json)"));
  if (path.isEmpty()) return;
  try {
    set_scenario(load_scenario(path.toStdString()));
    plan_from_form();
  } catch (const InputError& e) {
    QMessageBox::warning(this, tr("Open scenario"), QString::fromUtf8(e.what()));
  }
}

void MainWindow::save_scenario_as() {
  try {
    const auto s = scenario();
    const QString path = QFileDialog::getSaveFileName(this, tr("Save scenario"), "scenario.json", tr("Scenario (*.json)"));
    if (!path.isEmpty()) save_scenario(s, path.toStdString());
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Save scenario"), QString::fromUtf8(e.what()));
  }
}

}  // namespace ringsim::gui
