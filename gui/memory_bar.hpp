#pragma once
// One device's memory as a stacked bar against its capacity: parameters, gradients, optimizer
// states, activations, workspace, the strategy's buffers and the fixed costs (CUDA context, NCCL,
// fragmentation), with the headroom marked, so a plan's "fits with X GiB spare" is visible.
#include <optional>

#include <QWidget>

#include "models/memory/memory.hpp"

namespace ringsim::gui {

class MemoryBar : public QWidget {
  Q_OBJECT
 public:
  explicit MemoryBar(QWidget* parent = nullptr);
  void set_estimate(const models::MemoryEstimate* e);  // nullptr: empty
  [[nodiscard]] QSize sizeHint() const override { return {600, 90}; }
  [[nodiscard]] const std::optional<models::MemoryEstimate>& estimate() const noexcept { return e_; }
  // The legend's text of each term, as drawn ("activations 21.3 GiB"), in the bar's order.
  [[nodiscard]] QStringList legend() const;

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  std::optional<models::MemoryEstimate> e_;
};

}  // namespace ringsim::gui
