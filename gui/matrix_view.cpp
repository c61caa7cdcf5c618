#include "gui/matrix_view.hpp"

#include <algorithm>

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSlider>
#include <QTimer>
#include <QToolTip>
#include <QMouseEvent>
#include <QVBoxLayout>

#include "gui/heatmap_widget.hpp"

namespace ringsim::gui {

namespace {
constexpr std::int64_t kMaxSide = 1024;         // pixels per axis; tiles beyond are sampled
constexpr std::int64_t kMaxTiles = 4'000'000;   // per round, for the visited-tile table
constexpr int kAxis = 30, kLegendH = 62;         // the axis labels' width, the key's height
const QColor kMasked(70, 70, 70);
const QColor kOtherRound(236, 236, 236);
const QColor kAllowedSkipped(255, 221, 87);   // only index-based sparse masks produce these

QColor wasted(const QColor& c) { return c.darker(220); }
}  // namespace

MatrixWidget::MatrixWidget(QWidget* parent) : QWidget(parent) {
  setMinimumSize(240, 260);
  setMouseTracking(true);  // hovering a pair or tile names it
}

void MatrixWidget::set_data(const LayoutRun* run) {
  run_ = run;
  round_ = 0;
  rebuild_image();
  update();
}

void MatrixWidget::set_round(std::int64_t round) {
  round_ = round;
  rebuild_image();
  update();
}

void MatrixWidget::set_all_rounds(bool all) {
  all_rounds_ = all;
  rebuild_image();
  update();
}

void MatrixWidget::rebuild_image() {
  image_ = {};
  note_.clear();
  if (!run_) return;
  const auto& s = *run_->scenario;
  const auto& l = *s.layout;
  const auto& w = *s.workload;
  const std::int64_t n = l.n_dev();
  const auto tile = s.tile;
  const std::int64_t tq = (l.block() + tile.q - 1) / tile.q, tk = (l.block() + tile.k - 1) / tile.k;
  if (n * tq * tk > kMaxTiles) {
    note_ = tr("%1 tiles per round: too many to draw").arg(n * tq * tk);
    return;
  }
  if (all_rounds_) {
    // Every round: a pair (token view) in the colour of the device holding its query, which is the
    // device that computes it, in whichever round the key's block reaches it; masked pairs dark.
    if (l.n_seq() <= kElementLimit) {
      const std::int64_t seq = l.n_seq();
      image_ = QImage(static_cast<int>(seq), static_cast<int>(seq), QImage::Format_RGB32);
      for (std::int64_t q = 0; q < seq; ++q) {
        const QColor dev = device_color(l.place(q).device);
        for (std::int64_t p = 0; p < seq; ++p)
          image_.setPixel(static_cast<int>(p), static_cast<int>(q), (s.mask->allowed(q, p, 0) ? dev : kMasked).rgb());
      }
      return;
    }
    if (n * n * tq * tk > kMaxTiles) {
      note_ = tr("%1 tiles over all rounds: too many to draw").arg(n * n * tq * tk);
      return;
    }
    // Tiles in device-slot order: tile (device j's Q tile, K/V tile of block b) in j's colour
    // when j's kernel runs it in the round block b reaches j.
    const std::int64_t rows = n * tq, cols = n * tk;
    std::vector<std::int32_t> by(static_cast<std::size_t>(rows * cols), -1);
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t j = 0; j < n; ++j) {
        const auto kd = models::Workload::kv_block_of(j, r, n);
        w.for_each_tile(r, j, [&](std::int64_t, const models::TileCount& t) {
          if (t.visited) by[static_cast<std::size_t>((j * tq + t.q_tile) * cols + kd * tk + t.k_tile)] = static_cast<std::int32_t>(j);
        });
      }
    const int h = static_cast<int>(std::min(rows, kMaxSide)), wd = static_cast<int>(std::min(cols, kMaxSide));
    image_ = QImage(wd, h, QImage::Format_RGB32);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < wd; ++x) {
        const auto d = by[static_cast<std::size_t>((y * rows / h) * cols + x * cols / wd)];
        image_.setPixel(x, y, (d >= 0 ? device_color(d) : kMasked).rgb());
      }
    if (rows > kMaxSide || cols > kMaxSide) note_ = tr("tiles sampled to %1 x %2 pixels").arg(wd).arg(h);
    return;
  }
  // Which tiles each device's kernel runs this round (any head).
  std::vector<char> visited(static_cast<std::size_t>(n * tq * tk), 0);
  for (std::int64_t j = 0; j < n; ++j)
    w.for_each_tile(round_, j, [&](std::int64_t, const models::TileCount& t) {
      if (t.visited) visited[static_cast<std::size_t>((j * tq + t.q_tile) * tk + t.k_tile)] = 1;
    });
  auto is_visited = [&](std::int64_t dev, std::int64_t qt, std::int64_t kt) {
    return visited[static_cast<std::size_t>((dev * tq + qt) * tk + kt)] != 0;
  };
  if (l.n_seq() <= kElementLimit) {
    const std::int64_t seq = l.n_seq();
    image_ = QImage(static_cast<int>(seq), static_cast<int>(seq), QImage::Format_RGB32);
    for (std::int64_t q = 0; q < seq; ++q) {
      const auto pq = l.place(q);
      const auto k_dev = models::Workload::kv_block_of(pq.device, round_, n);
      for (std::int64_t p = 0; p < seq; ++p) {
        const auto pk = l.place(p);
        const bool allowed = s.mask->allowed(q, p, 0);
        QColor c;
        if (pk.device != k_dev) {
          c = allowed ? kOtherRound : kMasked.lighter(130);
        } else {
          const bool run_tile = is_visited(pq.device, pq.local / tile.q, pk.local / tile.k);
          if (allowed) c = run_tile ? device_color(pq.device) : kAllowedSkipped;
          else c = run_tile ? wasted(device_color(pq.device)) : kMasked;
        }
        image_.setPixel(static_cast<int>(p), static_cast<int>(q), c.rgb());
      }
    }
    return;
  }
  const std::int64_t rows = n * tq, cols = n * tk;
  const int h = static_cast<int>(std::min(rows, kMaxSide)), wd = static_cast<int>(std::min(cols, kMaxSide));
  image_ = QImage(wd, h, QImage::Format_RGB32);
  for (int y = 0; y < h; ++y) {
    const std::int64_t r = y * rows / h;
    const std::int64_t dev = r / tq, qt = r % tq;
    const auto k_dev = models::Workload::kv_block_of(dev, round_, n);
    for (int x = 0; x < wd; ++x) {
      const std::int64_t c = x * cols / wd;
      const std::int64_t kd = c / tk, kt = c % tk;
      const QColor col = kd != k_dev ? kOtherRound : is_visited(dev, qt, kt) ? device_color(dev) : kMasked;
      image_.setPixel(x, y, col.rgb());
    }
  }
  if (rows > kMaxSide || cols > kMaxSide) note_ = tr("tiles sampled to %1 x %2 pixels").arg(wd).arg(h);
}

void MatrixWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  if (!run_) {
    p.drawText(rect(), Qt::AlignCenter, tr("Run a scenario to see the attention matrix"));
    return;
  }
  const bool elements = run_->scenario->layout->n_seq() <= kElementLimit;
  p.setPen(palette().windowText().color());
  const QString what = elements ? tr("queries (rows) x keys (columns), token order")
                                : tr("Q tiles (rows) x K/V tiles (columns), device-slot order");
  p.drawText(QRect(0, 0, width(), 20), Qt::AlignCenter,
             all_rounds_ ? tr("%1, every round: %2").arg(QString::fromStdString(run_->layout), what)
                         : tr("%1, round %2: %3").arg(QString::fromStdString(run_->layout)).arg(round_).arg(what));
  const std::int64_t n = run_->scenario->layout->n_dev();
  const QRect target = image_rect();
  const int axis = kAxis;
  if (!image_.isNull()) p.drawImage(target, image_);
  else p.drawText(target, Qt::AlignCenter, note_);
  // Axes: tokens (or tiles) from 0 at the top left to the last at the far edges.
  const QFontMetrics fm = p.fontMetrics();
  const auto seq = run_->scenario->layout->n_seq();
  const QString last = elements ? QString::number(seq - 1) : QString::number(image_.isNull() ? 0 : image_.width() - 1);
  p.setPen(palette().windowText().color());
  p.drawText(QRect(target.left() - axis, target.top(), axis - 3, 14), Qt::AlignRight | Qt::AlignVCenter, "0");
  p.drawText(QRect(target.left() - axis - 20, target.bottom() - 14, axis + 17, 14), Qt::AlignRight | Qt::AlignVCenter, last);
  p.drawText(QRect(target.left(), target.bottom() + 2, 40, 14), Qt::AlignLeft | Qt::AlignVCenter, "0");
  p.drawText(QRect(target.right() - 60, target.bottom() + 2, 60, 14), Qt::AlignRight | Qt::AlignVCenter, last);
  p.drawText(QRect(target.left(), target.bottom() + 2, target.width(), 14), Qt::AlignCenter,
             elements ? tr("key token →") : tr("K/V tile →"));
  int x = 10;
  int y = target.bottom() + 20;
  auto swatch = [&](const QColor& c, const QString& text) {
    if (x + 22 + fm.horizontalAdvance(text) > width() && x > 10) {
      x = 10;
      y += 16;
    }
    p.fillRect(QRect(x, y, 12, 12), c);
    p.setPen(palette().mid().color());  // an outline: light swatches stay visible on the window
    p.drawRect(QRect(x, y, 11, 11));
    p.setPen(palette().windowText().color());
    p.drawText(QRect(x + 16, y - 3, 200, 18), Qt::AlignLeft | Qt::AlignVCenter, text);
    x += 22 + fm.horizontalAdvance(text);
  };
  // The device key: which colour is which device (up to 16; colours repeat beyond).
  for (std::int64_t d = 0; d < std::min<std::int64_t>(n, 16); ++d) swatch(device_color(d), tr("dev %1").arg(d));
  if (n > 16) swatch(device_color(16), tr("(colours repeat)"));
  x = 10;
  y += 18;
  if (all_rounds_) {
    swatch(kMasked, elements ? tr("masked") : tr("tile skipped"));
  } else {
    if (elements) swatch(wasted(device_color(0)), tr("masked, in a computed tile"));
    swatch(kMasked, elements ? tr("masked, tile skipped") : tr("tile skipped"));
    if (elements) swatch(kAllowedSkipped, tr("allowed, tile skipped"));
    swatch(kOtherRound, elements ? tr("allowed, another round") : tr("another round"));
    if (elements) swatch(kMasked.lighter(130), tr("masked, another round"));
  }
  if (!note_.isEmpty() && !image_.isNull())
    p.drawText(QRect(10, y + 14, width() - 20, 18), Qt::AlignLeft, note_);
}

QRect MatrixWidget::image_rect() const {
  const int side = std::max(10, std::min(width() - 20 - kAxis, height() - 24 - kLegendH - 16));
  return {kAxis + (width() - kAxis - side) / 2, 22, side, side};
}

QString MatrixWidget::cell_details(QPointF pos) const {
  const QRect target = image_rect();
  if (!run_ || image_.isNull() || !target.contains(pos.toPoint())) return {};
  const auto& s = *run_->scenario;
  const auto& l = *s.layout;
  const std::int64_t n = l.n_dev();
  // The pixel under the cursor, then the pair or tile it samples (as rebuild_image does).
  const auto px = std::clamp<std::int64_t>(static_cast<std::int64_t>((pos.x() - target.left()) * image_.width() / target.width()), 0, image_.width() - 1);
  const auto py = std::clamp<std::int64_t>(static_cast<std::int64_t>((pos.y() - target.top()) * image_.height() / target.height()), 0, image_.height() - 1);
  auto round_of = [n](std::int64_t q_dev, std::int64_t k_dev) { return ((q_dev - k_dev) % n + n) % n; };
  if (l.n_seq() <= kElementLimit) {
    const auto pq = l.place(py), pk = l.place(px);
    const bool allowed = s.mask->allowed(py, px, 0);
    return tr("query %1 (device %2) x key %3 (device %4): %5 by device %2 in round %6")
        .arg(py).arg(pq.device).arg(px).arg(pk.device)
        .arg(allowed ? tr("computed") : tr("masked")).arg(round_of(pq.device, pk.device));
  }
  const auto tile = s.tile;
  const std::int64_t tq = (l.block() + tile.q - 1) / tile.q, tk = (l.block() + tile.k - 1) / tile.k;
  const std::int64_t row = py * n * tq / image_.height(), col = px * n * tk / image_.width();
  const std::int64_t dev = row / tq, qt = row % tq, kd = col / tk, kt = col % tk;
  const std::int64_t round = round_of(dev, kd);
  bool visited = false;
  s.workload->for_each_tile(round, dev, [&](std::int64_t, const models::TileCount& t) {
    if (t.q_tile == qt && t.k_tile == kt && t.visited) visited = true;
  });
  return tr("Q tile %1 of device %2 x K/V tile %3 of device %4's block: round %5, %6")
      .arg(qt).arg(dev).arg(kt).arg(kd).arg(round).arg(visited ? tr("computed") : tr("skipped (fully masked)"));
}

void MatrixWidget::mouseMoveEvent(QMouseEvent* event) {
  if (const QString d = cell_details(event->position()); d.isEmpty()) QToolTip::hideText();
  else QToolTip::showText(event->globalPosition().toPoint(), d, this);
}

MatrixView::MatrixView(QWidget* parent)
    : QWidget(parent),
      pair_(new QWidget(this)),
      matrix_(new MatrixWidget(pair_)),
      other_(new MatrixWidget(pair_)),
      both_(new QCheckBox(tr("side by side"), this)),
      slider_(new QSlider(Qt::Horizontal, this)),
      play_(new QPushButton(tr("Play"), this)),
      label_(new QLabel(this)),
      timer_(new QTimer(this)) {
  auto* v = new QVBoxLayout(this);
  auto* pair = new QHBoxLayout(pair_);
  pair->setContentsMargins(0, 0, 0, 0);
  pair->addWidget(matrix_, 1);
  pair->addWidget(other_, 1);
  other_->hide();
  v->addWidget(pair_, 1);
  auto* h = new QHBoxLayout;
  h->addWidget(play_);
  h->addWidget(new QLabel(tr("round"), this));
  h->addWidget(slider_, 1);
  h->addWidget(label_);
  all_ = new QCheckBox(tr("all rounds"), this);
  all_->setToolTip(tr("every pair in the colour of the device that computes it, in any round (the Striped Attention "
                      "paper's figures)"));
  h->addWidget(all_);
  both_->setToolTip(tr("the other layout's matrix beside this one, on the same round (or every round)"));
  h->addWidget(both_);
  v->addLayout(h);
  connect(both_, &QCheckBox::toggled, this, [this] { show_other(); });
  connect(all_, &QCheckBox::toggled, this, [this](bool on) {
    // Every round at once has no round to step through.
    if (on && timer_->isActive()) toggle_play();
    matrix_->set_all_rounds(on);
    other_->set_all_rounds(on);
    slider_->setEnabled(has_data_ && !on);
    play_->setEnabled(has_data_ && !on);
  });
  slider_->setEnabled(false);
  play_->setEnabled(false);
  timer_->setInterval(700);
  connect(slider_, &QSlider::valueChanged, this, [this](int r) {
    matrix_->set_round(r);
    if (other_->isVisible()) other_->set_round(r);
    label_->setText(QString::number(r));
  });
  connect(play_, &QPushButton::clicked, this, &MatrixView::toggle_play);
  connect(timer_, &QTimer::timeout, this, [this] {
    slider_->setValue(slider_->value() == slider_->maximum() ? 0 : slider_->value() + 1);
  });
}

void MatrixView::show_other() {
  const bool on = both_->isChecked() && other_run_ != nullptr;
  // Built only while shown: a hidden matrix costs nothing.
  other_->set_data(on ? other_run_ : nullptr);
  if (on) {
    other_->set_all_rounds(all_->isChecked());
    other_->set_round(std::min<std::int64_t>(slider_->value(), other_run_->n - 1));
  }
  other_->setVisible(on);
}

void MatrixView::set_data(const LayoutRun* run, const LayoutRun* other) {
  timer_->stop();
  play_->setText(tr("Play"));
  matrix_->set_data(run);
  other_run_ = other;
  both_->setEnabled(other != nullptr);
  const bool ok = run != nullptr;
  has_data_ = ok;
  slider_->setEnabled(ok && !all_->isChecked());
  play_->setEnabled(ok && !all_->isChecked());
  slider_->blockSignals(true);
  slider_->setRange(0, ok ? static_cast<int>(run->n - 1) : 0);
  slider_->setValue(0);
  slider_->blockSignals(false);
  label_->setText("0");
  show_other();
}

void MatrixView::toggle_play() {
  if (timer_->isActive()) {
    timer_->stop();
    play_->setText(tr("Play"));
  } else {
    timer_->start();
    play_->setText(tr("Pause"));
  }
}

}  // namespace ringsim::gui
