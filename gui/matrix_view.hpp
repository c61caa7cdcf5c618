#pragma once
// The attention matrix of one round, coloured by the device that computes each pair (the
// Striped Attention paper's Figures 2-4). Up to 256 tokens: every (query, key) pair in original
// token order. Beyond: the tile grid in device-slot order (rows: Q tiles of devices 0..N-1,
// columns: K/V tiles), since a tile of a striped block is not contiguous in token order.
#include <QImage>
#include <QWidget>

#include "gui/run.hpp"

class QCheckBox;
class QSlider;
class QPushButton;
class QTimer;
class QLabel;

namespace ringsim::gui {

class MatrixWidget : public QWidget {
  Q_OBJECT
 public:
  static constexpr std::int64_t kElementLimit = 256;
  explicit MatrixWidget(QWidget* parent = nullptr);
  void set_data(const LayoutRun* run);
  void set_round(std::int64_t round);
  [[nodiscard]] std::int64_t round() const noexcept { return round_; }
  // Every round at once (the paper's figures): each pair or tile a device computes in any round,
  // in that device's colour; off: one round, the others greyed.
  void set_all_rounds(bool all);
  [[nodiscard]] bool all_rounds() const noexcept { return all_rounds_; }
  // The drawn matrix (tests read its pixels): queries x keys, or Q tiles x K/V tiles.
  [[nodiscard]] const QImage& image() const noexcept { return image_; }
  // Where the matrix is drawn at the current size (tests place the cursor with it).
  [[nodiscard]] QRect image_rect() const;
  // What the pair or tile under `pos` is: query and key (or Q and K/V tile) with their devices,
  // the round the computing device meets that key, and whether it is computed, masked or
  // skipped. Empty off the matrix. Also the hover tooltip.
  [[nodiscard]] QString cell_details(QPointF pos) const;
  [[nodiscard]] QSize sizeHint() const override { return {520, 560}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  void rebuild_image();
  const LayoutRun* run_ = nullptr;
  std::int64_t round_ = 0;
  bool all_rounds_ = false;
  QImage image_;
  QString note_;
};

// A matrix with its round slider and play/pause; optionally the other layout's matrix beside it
// (the paper's contiguous and striped figures side by side), on the same round.
class MatrixView : public QWidget {
  Q_OBJECT
 public:
  explicit MatrixView(QWidget* parent = nullptr);
  // `other`: the layout shown beside `run` when "side by side" is on (null: none).
  void set_data(const LayoutRun* run, const LayoutRun* other = nullptr);
  [[nodiscard]] MatrixWidget* matrix() const noexcept { return matrix_; }
  [[nodiscard]] MatrixWidget* other_matrix() const noexcept { return other_; }
  // The matrices as shown: one, or both side by side (what an export of this view draws).
  [[nodiscard]] QWidget* matrices() const noexcept { return pair_; }
  [[nodiscard]] QSlider* slider() const noexcept { return slider_; }
  [[nodiscard]] QCheckBox* all_rounds_box() const noexcept { return all_; }
  [[nodiscard]] QCheckBox* side_by_side_box() const noexcept { return both_; }

 private:
  void toggle_play();
  void show_other();
  QWidget* pair_;
  MatrixWidget* matrix_;
  MatrixWidget* other_;
  QCheckBox* both_;
  const LayoutRun* other_run_ = nullptr;
  QSlider* slider_;
  QPushButton* play_;
  QCheckBox* all_;
  QLabel* label_;
  QTimer* timer_;
  bool has_data_ = false;
};

}  // namespace ringsim::gui
