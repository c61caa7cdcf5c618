#pragma once
// The Compare tab: the form's scenario under several strategies (ring, all-gather, Ulysses, USP,
// double ring, ...), computed on a worker thread, drawn as one stacked bar per strategy (attention
// forward and backward, other compute, tensor-parallel all-reduces, exposed communication) with
// the step's 90 % interval as an error bar and each row's why; a strategy that cannot run there
// is a row saying why.
#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include <QStringList>
#include <QWidget>

#include "gui/compare.hpp"
#include "gui/scenario_file.hpp"

class QLabel;
class QLineEdit;
class QPushButton;
class QThread;

namespace ringsim::gui {

class CompareBars;

class CompareView : public QWidget {
  Q_OBJECT
 public:
  // `scenario`: the form's scenario when Compare is pressed (throws models::InputError when the
  // form does not parse).
  CompareView(const models::Catalog& catalog, std::function<GuiScenario()> scenario, QWidget* parent = nullptr);
  ~CompareView() override;
  void start();
  [[nodiscard]] bool running() const noexcept { return worker_ != nullptr; }
  [[nodiscard]] const std::vector<CompareRow>& rows() const noexcept { return rows_; }
  [[nodiscard]] QLineEdit* strategies_edit() const noexcept { return strategies_; }
  [[nodiscard]] QLabel* status() const noexcept { return status_; }
  [[nodiscard]] QWidget* bars() const noexcept;
  // The time axis' tick labels as the bars last painted them (tests).
  [[nodiscard]] QStringList axis_ticks() const;

 signals:
  void finished(bool ok);

 private:
  void done();
  const models::Catalog& catalog_;
  std::function<GuiScenario()> scenario_;
  QLineEdit* strategies_ = nullptr;
  QPushButton* compare_btn_ = nullptr;
  QLabel* status_ = nullptr;
  CompareBars* bars_ = nullptr;
  QThread* worker_ = nullptr;
  std::atomic<bool> cancel_{false};
  std::optional<std::vector<CompareRow>> pending_;
  std::string error_;
  std::vector<CompareRow> rows_;
};

}  // namespace ringsim::gui
