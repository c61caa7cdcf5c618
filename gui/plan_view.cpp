#include "gui/plan_view.hpp"

#include <cmath>
#include <string_view>

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QThread>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include "gui/error_text.hpp"
#include "gui/memory_bar.hpp"
#include "io/output_file.hpp"
#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::gui {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int kRowRole = Qt::UserRole + 1;

// Thrown from the search's progress callback when Cancel was pressed: the sweep stops its workers
// and rethrows it (planning/sweep.cpp), so the worker thread ends promptly.
struct Cancelled {};

QString human(double v) {
  if (v >= 1e6) return QString::number(v / 1e6, 'f', 2) + " M";
  if (v >= 1e3) return QString::number(v / 1e3, 'f', 1) + " k";
  return QString::number(v, 'f', 0);
}

QString text_of(std::string_view v) { return QString::fromUtf8(v.data(), static_cast<qsizetype>(v.size())); }

QStringList columns_of(const planning::SweepResult& r) {
  const auto& s = r.point.spec;
  const QString label = QString::fromStdString(r.deployability());
  QString step = QString::number(r.step_s, 'g', 4) + " s";
  if (r.step_interval.available)
    step += QStringLiteral(" (%1–%2)").arg(r.step_interval.lo, 0, 'g', 3).arg(r.step_interval.hi, 0, 'g', 3);
  return {QString::fromStdString(s.cp.text()),
          QStringLiteral("%1 x %2 x %3").arg(r.point.dp).arg(s.mp).arg(s.sp),
          QString::fromStdString(s.layout.text()),
          QString::fromStdString(r.impl) + (label.isEmpty() ? QString() : " " + label),
          QStringLiteral("%1x%2").arg(r.tile_q).arg(r.tile_k),
          text_of(models::to_string(r.point.zero)),
          text_of(models::to_string(r.recompute)),
          r.point.pipeline.pipelined() ? QString::fromStdString(r.point.pipeline.text()) : QStringLiteral("-"),
          human(r.tokens_per_s),
          QString::number(100 * r.prediction.mfu, 'f', 1) + " %",
          step,
          QStringLiteral("%1 GiB, %2").arg(r.memory.total_bytes / kGiB, 0, 'f', 1).arg(QString::fromStdString(models::fit_phrase(r.memory))),
          QString::fromStdString(planning::explain(r))};
}

}  // namespace

PlanView::PlanView(const models::Catalog& catalog, QWidget* parent) : QWidget(parent), catalog_(catalog) {
  auto* v = new QVBoxLayout(this);
  auto* form = new QHBoxLayout;
  hardware_ = new QComboBox(this);
  for (const auto& n : catalog_.hardware_names()) hardware_->addItem(QString::fromStdString(n));
  model_ = new QComboBox(this);
  for (const auto& n : catalog_.model_names()) model_->addItem(QString::fromStdString(n));
  goal_ = new QComboBox(this);
  goal_->addItems({"max-throughput", "min-devices", "max-context"});
  devices_ = new QLineEdit(QStringLiteral("8"), this);
  n_seq_ = new QLineEdit(QStringLiteral("131072"), this);
  // Wide enough for a million-token context without scrolling its digits out of view.
  n_seq_->setMinimumWidth(n_seq_->fontMetrics().horizontalAdvance(QStringLiteral("10485760")) + 16);
  target_ = new QLineEdit(this);
  target_->setPlaceholderText(tr("min-devices: tokens/s"));
  for (const auto& [label, w] : std::initializer_list<std::pair<const char*, QWidget*>>{
           {"Hardware", hardware_}, {"Model", model_}, {"Devices", devices_}, {"Context", n_seq_}, {"Goal", goal_},
           {"Target", target_}}) {
    form->addWidget(new QLabel(tr(label), this));
    form->addWidget(w);
  }
  plan_btn_ = new QPushButton(tr("Plan"), this);
  cancel_btn_ = new QPushButton(tr("Cancel"), this);
  cancel_btn_->setEnabled(false);
  export_ = new QPushButton(tr("Export…"), this);
  export_->setToolTip(tr("the answer as `ringsim plan --format json` (a .json file) or `--format csv` (a .csv file) writes it"));
  export_->setEnabled(false);
  form->addWidget(plan_btn_);
  form->addWidget(cancel_btn_);
  form->addWidget(export_);
  form->addStretch(1);
  v->addLayout(form);
  auto* line = new QHBoxLayout;
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(220);
  status_ = new QLabel(tr("the same search as `ringsim plan`: production libraries compete"), this);
  status_->setWordWrap(true);
  line->addWidget(progress_);
  line->addWidget(status_, 1);
  v->addLayout(line);

  auto* split = new QSplitter(Qt::Vertical, this);
  tree_ = new QTreeWidget(split);
  tree_->setHeaderLabels({tr("plan"), tr("strategy"), tr("dp x mp x sp"), tr("layout"), tr("implementation"), tr("tile"),
                          tr("ZeRO"), tr("recompute"), tr("pipeline"), tr("tokens/s"), tr("MFU"), tr("step (90 % interval)"),
                          tr("memory per device"), tr("why")});
  tree_->setAlternatingRowColors(true);
  tree_->setUniformRowHeights(true);
  tree_->header()->setStretchLastSection(true);
  auto* detail = new QWidget(split);
  auto* dv = new QVBoxLayout(detail);
  why_ = new QLabel(detail);
  why_->setWordWrap(true);
  why_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  memory_ = new MemoryBar(detail);
  open_ = new QPushButton(tr("Show this plan in the heatmap, matrix and timeline"), detail);
  open_->setEnabled(false);
  dv->addWidget(why_);
  dv->addWidget(memory_);
  dv->addWidget(open_, 0, Qt::AlignLeft);
  split->addWidget(tree_);
  split->addWidget(detail);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  v->addWidget(split, 1);

  connect(plan_btn_, &QPushButton::clicked, this, &PlanView::start);
  connect(cancel_btn_, &QPushButton::clicked, this, &PlanView::cancel);
  connect(tree_, &QTreeWidget::itemSelectionChanged, this, &PlanView::selection_changed);
  // A double-click opens the plan in the views, as the button does.
  connect(tree_, &QTreeWidget::itemDoubleClicked, this, [this] {
    if (open_->isEnabled()) open_->click();
  });
  connect(open_, &QPushButton::clicked, this, [this] {
    const auto* r = selected_row();
    if (!r) return;
    emit open_plan(r->point.spec, compared_layouts(*r));
  });
  connect(export_, &QPushButton::clicked, this, &PlanView::export_answer);
  // Inputs edited after a search: the results shown answer the old ones.
  for (auto* c : {hardware_, model_, goal_}) connect(c, &QComboBox::currentTextChanged, this, &PlanView::inputs_changed);
  for (auto* e : {devices_, n_seq_, target_}) connect(e, &QLineEdit::textEdited, this, &PlanView::inputs_changed);
}

std::vector<models::LayoutSpec> PlanView::compared_layouts(const planning::SweepResult& row) const {
  // Compared with another layout the plan's library runs on this hardware, mask and strategy
  // (contiguous blocks first: the ring everyone starts from); a library with one layout is shown
  // beside itself.
  const auto& spec = row.point.spec;
  std::vector<models::LayoutSpec> layouts{spec.layout, spec.layout};
  try {
    const auto impl = catalog_.implementation(row.impl);
    const auto hw = catalog_.hardware(spec.hardware);
    const auto mask = models::effective_mask(spec);
    for (const char* other : {"contiguous", "zigzag", "striped"}) {
      const auto l = models::LayoutSpec::parse(other);
      if (l.text() != spec.layout.text() && impl.offers(hw.kind, l, mask, spec.cp)) {
        layouts[1] = l;
        break;
      }
    }
  } catch (const models::InputError&) {
  }
  return layouts;
}

void PlanView::set_status(const QString& text, bool error) {
  showing_error_ = error;
  status_->setText(text);
  QPalette pal = status_->palette();
  pal.setColor(QPalette::WindowText, error ? QColor(190, 30, 30) : palette().color(QPalette::WindowText));
  status_->setPalette(pal);
}

void PlanView::inputs_changed() {
  if (!found_ || running() || stale_) return;
  stale_ = true;
  tree_->setEnabled(false);
  open_->setEnabled(false);
  set_status(tr("the inputs changed: the plans below answer the previous ones; press Plan to search again"), true);
}

std::string PlanView::answer_json() const {
  if (!found_ || !request_) return {};
  return planning::plan_json(*request_, *found_).dump(2) + "\n";
}

std::string PlanView::answer_csv() const {
  if (!found_ || !request_) return {};
  return planning::plan_csv(*request_, *found_);
}

void PlanView::export_answer() {
  if (!found_) return;
  // The format by the file's suffix, as `ringsim plan --format json|csv` writes it.
  const QString path = QFileDialog::getSaveFileName(this, tr("Export plans"), QStringLiteral("plans.json"),
                                                    tr("JSON (*.json);;CSV (*.csv)"));
  if (path.isEmpty()) return;
  try {
    io::write_output(path.toStdString(), path.endsWith(".csv", Qt::CaseInsensitive) ? answer_csv() : answer_json());
  } catch (const std::exception& e) {
    set_status(tr("export failed: %1").arg(QString::fromUtf8(e.what())), true);
  }
}

PlanView::~PlanView() {
  cancel_ = true;
  if (worker_) worker_->wait();
}

void PlanView::set_inputs(const QString& hardware, const QString& model, const QString& devices, const QString& n_seq,
                          const QString& goal, const QString& target) {
  hardware_->setCurrentText(hardware);
  model_->setCurrentText(model);
  devices_->setText(devices);
  n_seq_->setText(n_seq);
  goal_->setCurrentText(goal);
  target_->setText(target);
}

planning::PlanRequest PlanView::request() const {
  // The fields `ringsim plan` builds from its flags (cli/plan.cpp: request_json), read the same way.
  nlohmann::json j;
  j["hardware"] = hardware_->currentText().toStdString();
  j["model"] = model_->currentText().toStdString();
  j["goal"] = goal_->currentText().toStdString();
  j["devices"] = models::parse_positive_int(devices_->text().trimmed().toStdString(), "devices");
  j["n_seq"] = models::parse_positive_int(n_seq_->text().trimmed().toStdString(), "seq");
  if (const auto t = target_->text().trimmed().toStdString(); !t.empty())
    j["target_tokens_per_s"] = models::parse_double(t, "target-tokens-per-s");
  return planning::plan_request_from_json(j, "Plan tab");
}

void PlanView::start() {
  if (running()) return;
  try {
    request_ = request();
    planning::check_request(*request_);
  } catch (const models::InputError& e) {
    // The old results no longer answer: greyed, the error in the error colour.
    if (found_) {
      stale_ = true;
      tree_->setEnabled(false);
      open_->setEnabled(false);
    }
    set_status(QString::fromStdString(field_message(e)), true);
    return;
  }
  cancel_ = false;
  pending_.reset();
  error_.clear();
  progress_->setValue(0);
  set_status(tr("searching…"), false);
  plan_btn_->setEnabled(false);
  cancel_btn_->setEnabled(true);
  const auto req = *request_;
  worker_ = QThread::create([this, req] {
    try {
      const auto grid = planning::plan_grid(req, catalog_);
      grid.validate(catalog_, "Plan tab");
      planning::SweepOptions opt;
      opt.progress = [this](const planning::SweepProgress& p) {
        if (cancel_) throw Cancelled{};
        const double f = p.total > 0 ? static_cast<double>(p.done) / static_cast<double>(p.total) : 0.0;
        QMetaObject::invokeMethod(this, [this, f] { progress_->setValue(static_cast<int>(f * 1000)); }, Qt::QueuedConnection);
      };
      pending_ = planning::search_plans(grid, catalog_, req, opt);
    } catch (const Cancelled&) {
      error_.clear();
    } catch (const models::InputError& e) {
      error_ = field_message(e);
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  });
  connect(worker_, &QThread::finished, this, &PlanView::done);
  worker_->start();
}

void PlanView::cancel() {
  if (!running()) return;
  cancel_ = true;
  set_status(tr("cancelling…"), false);
  cancel_btn_->setEnabled(false);
}

void PlanView::done() {
  worker_->deleteLater();
  worker_ = nullptr;
  plan_btn_->setEnabled(true);
  cancel_btn_->setEnabled(false);
  const bool ok = pending_.has_value();
  if (ok) {
    found_ = std::move(pending_);
    pending_.reset();
    progress_->setValue(1000);
    stale_ = false;
    tree_->setEnabled(true);
    export_->setEnabled(true);
    fill();
    set_status(tr("%1 configurations searched, %2 fit in memory, %3 feasible; production libraries only "
                  "(`ringsim plan --include-research` adds research kernels)")
                   .arg(found_->searched).arg(found_->fit_memory).arg(found_->feasible),
               false);
  } else {
    progress_->setValue(0);
    set_status(error_.empty() ? tr("cancelled") : tr("failed: %1").arg(QString::fromStdString(error_)), !error_.empty());
  }
  emit finished(ok);
}

void PlanView::fill() {
  tree_->clear();
  why_->clear();
  memory_->set_estimate(nullptr);
  open_->setEnabled(false);
  const auto add = [this](QTreeWidgetItem* parent, const QString& first, const planning::SweepResult& r, int key) {
    auto* item = new QTreeWidgetItem(parent, QStringList{first} + columns_of(r));
    item->setData(0, kRowRole, key);
    for (int c = 0; c < item->columnCount(); ++c) item->setToolTip(c, item->text(c));
    return item;
  };
  auto* best = new QTreeWidgetItem(tree_, {tr("Best of each strategy")});
  for (std::size_t i = 0; i < found_->best_per_strategy.size(); ++i)
    add(best, QString::fromStdString(found_->best_per_strategy[i].strategy_family()), found_->best_per_strategy[i],
        static_cast<int>(i) * 2 + 1);
  auto* ranked = new QTreeWidgetItem(tree_, {tr("Ranked plans")});
  // Keys: odd = best of a strategy (index), even = a ranked plan (index << 12) or a tie of it.
  for (std::size_t i = 0; i < found_->plans.size(); ++i) {
    auto* item = add(ranked, QString::number(i + 1), found_->plans[i].plan, static_cast<int>(i << 12) * 2);
    for (std::size_t t = 0; t < found_->plans[i].ties.size(); ++t)
      add(item, tr("tie"), found_->plans[i].ties[t], static_cast<int>((i << 12) + t + 1) * 2);
  }
  if (found_->plans.empty()) new QTreeWidgetItem(ranked, {tr("no configuration answers the request")});
  tree_->expandItem(best);
  tree_->expandItem(ranked);
  for (int c = 0; c < tree_->columnCount() - 1; ++c) tree_->resizeColumnToContents(c);
  if (ranked->childCount() > 0 && !found_->plans.empty()) tree_->setCurrentItem(ranked->child(0));
}

const planning::SweepResult* PlanView::selected_row() const {
  const auto* item = tree_->currentItem();
  if (!item || !found_ || !item->data(0, kRowRole).isValid()) return nullptr;
  const int key = item->data(0, kRowRole).toInt();
  if (key % 2 == 1) {
    const auto i = static_cast<std::size_t>(key / 2);
    return i < found_->best_per_strategy.size() ? &found_->best_per_strategy[i] : nullptr;
  }
  const auto k = static_cast<std::size_t>(key / 2);
  const auto plan = k >> 12, tie = k & 0xfff;
  if (plan >= found_->plans.size()) return nullptr;
  const auto& choice = found_->plans[plan];
  if (tie == 0) return &choice.plan;
  return tie - 1 < choice.ties.size() ? &choice.ties[tie - 1] : nullptr;
}

void PlanView::selection_changed() {
  const auto* r = selected_row();
  memory_->set_estimate(r ? &r->memory : nullptr);
  open_->setEnabled(r != nullptr);
  std::string text = r ? planning::explain(*r) : std::string();
  // A ranked plan inside a fold says so (the ranking among its fold is by memory spare).
  if (r && found_)
    for (const auto& c : found_->plans)
      if (&c.plan == r && c.fold) text += "\n" + planning::fold_text(c);
  why_->setText(QString::fromStdString(text));
}

}  // namespace ringsim::gui
