#pragma once
// The Plan tab: `ringsim plan` in the window. The inputs a user decides with (hardware, model,
// devices, context, goal), the search on a worker thread (progress, Cancel), the best plan of
// each strategy and the ranked plans with their ties folded under them, each row with tokens/s,
// MFU, step and its 90 % interval, memory with its headroom and why; a selected row's memory as a
// stacked bar, and a button that opens the plan in the scenario views. The request goes through
// planning::plan_request_from_json as the command's flags do, so the answers are the same.
#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include <QWidget>

#include "models/catalog/catalog.hpp"
#include "planning/plan.hpp"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QProgressBar;
class QThread;
class QTreeWidget;
class QTreeWidgetItem;

namespace ringsim::gui {

class MemoryBar;

class PlanView : public QWidget {
  Q_OBJECT
 public:
  explicit PlanView(const models::Catalog& catalog, QWidget* parent = nullptr);
  ~PlanView() override;

  // The request as the form says; throws models::InputError naming the field.
  [[nodiscard]] planning::PlanRequest request() const;
  void set_inputs(const QString& hardware, const QString& model, const QString& devices, const QString& n_seq,
                  const QString& goal, const QString& target = {});
  void start();
  void cancel();
  [[nodiscard]] bool running() const noexcept { return worker_ != nullptr; }
  [[nodiscard]] const planning::PlanSearch* result() const noexcept { return found_ ? &*found_ : nullptr; }

  // For tests: the result tree (top level: "Best of each strategy", "Ranked plans"), the memory
  // bar of the selected row, and the status line.
  [[nodiscard]] QTreeWidget* tree() const noexcept { return tree_; }
  [[nodiscard]] MemoryBar* memory_bar() const noexcept { return memory_; }
  [[nodiscard]] QLabel* status() const noexcept { return status_; }
  [[nodiscard]] QPushButton* open_button() const noexcept { return open_; }
  // Whether the results shown were searched with inputs since changed (the tree greys out).
  [[nodiscard]] bool stale() const noexcept { return stale_; }
  // Whether the status line shows an error (drawn in the error colour).
  [[nodiscard]] bool showing_error() const noexcept { return showing_error_; }
  // The answer as `ringsim plan --format json` writes it (planning::plan_json); empty without one.
  [[nodiscard]] std::string answer_json() const;
  // The ranked plans as `ringsim plan --format csv` writes them (planning::plan_csv); empty without one.
  [[nodiscard]] std::string answer_csv() const;
  // The layouts "Show this plan" compares: the plan's, and contiguous blocks of the same library
  // where it runs them (else zigzag or striped; else the plan's again).
  [[nodiscard]] std::vector<models::LayoutSpec> compared_layouts(const planning::SweepResult& row) const;

 signals:
  void finished(bool ok);
  // "Show in the views": the selected plan's scenario and the layouts to compare it with.
  void open_plan(const models::ScenarioSpec& spec, const std::vector<models::LayoutSpec>& layouts);

 private:
  void done();
  void fill();
  void selection_changed();
  void inputs_changed();
  void set_status(const QString& text, bool error);
  void export_answer();
  [[nodiscard]] const planning::SweepResult* selected_row() const;

  const models::Catalog& catalog_;
  QComboBox *hardware_ = nullptr, *model_ = nullptr, *goal_ = nullptr;
  QLineEdit *devices_ = nullptr, *n_seq_ = nullptr, *target_ = nullptr;
  QPushButton *plan_btn_ = nullptr, *cancel_btn_ = nullptr, *open_ = nullptr, *export_ = nullptr;
  bool stale_ = false, showing_error_ = false;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* why_ = nullptr;
  QTreeWidget* tree_ = nullptr;
  MemoryBar* memory_ = nullptr;
  QThread* worker_ = nullptr;
  std::atomic<bool> cancel_{false};
  std::optional<planning::PlanRequest> request_;
  std::optional<planning::PlanSearch> pending_, found_;
  std::string error_;
};

}  // namespace ringsim::gui
