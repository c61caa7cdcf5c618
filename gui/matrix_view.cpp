#include "gui/matrix_view.hpp"

#include <algorithm>

#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>

#include "gui/heatmap_widget.hpp"

namespace ringsim::gui {

namespace {
constexpr std::int64_t kMaxSide = 1024;         // pixels per axis; tiles beyond are sampled
constexpr std::int64_t kMaxTiles = 4'000'000;   // per round, for the visited-tile table
const QColor kMasked(70, 70, 70);
const QColor kOtherRound(236, 236, 236);
const QColor kAllowedSkipped(255, 221, 87);   // only index-based sparse masks produce these

QColor wasted(const QColor& c) { return c.darker(220); }
}  // namespace

MatrixWidget::MatrixWidget(QWidget* parent) : QWidget(parent) { setMinimumSize(240, 260); }

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
  p.drawText(QRect(0, 0, width(), 20), Qt::AlignCenter,
             tr("%1, round %2: %3").arg(QString::fromStdString(run_->layout)).arg(round_)
                 .arg(elements ? tr("queries (rows) x keys (columns), token order")
                               : tr("Q tiles (rows) x K/V tiles (columns), device-slot order")));
  const int legend_h = 40;
  const int side = std::max(10, std::min(width() - 20, height() - 24 - legend_h));
  const QRect target((width() - side) / 2, 22, side, side);
  if (!image_.isNull()) p.drawImage(target, image_);
  else p.drawText(target, Qt::AlignCenter, note_);
  int x = 10;
  const int y = target.bottom() + 8;
  auto swatch = [&](const QColor& c, const QString& text) {
    p.fillRect(QRect(x, y, 12, 12), c);
    p.setPen(palette().windowText().color());
    p.drawText(QRect(x + 16, y - 3, 200, 18), Qt::AlignLeft | Qt::AlignVCenter, text);
    x += 22 + p.fontMetrics().horizontalAdvance(text);
  };
  swatch(device_color(0), tr("computed (device colour)"));
  if (elements) swatch(wasted(device_color(0)), tr("masked, in a computed tile"));
  swatch(kMasked, elements ? tr("masked, tile skipped") : tr("tile skipped"));
  if (elements) swatch(kAllowedSkipped, tr("allowed, tile skipped"));
  swatch(kOtherRound, elements ? tr("allowed, another round") : tr("another round"));
  if (elements) swatch(kMasked.lighter(130), tr("masked, another round"));
  if (!note_.isEmpty() && !image_.isNull())
    p.drawText(QRect(10, y + 14, width() - 20, 18), Qt::AlignLeft, note_);
}

MatrixView::MatrixView(QWidget* parent)
    : QWidget(parent),
      matrix_(new MatrixWidget(this)),
      slider_(new QSlider(Qt::Horizontal, this)),
      play_(new QPushButton(tr("Play"), this)),
      label_(new QLabel(this)),
      timer_(new QTimer(this)) {
  auto* v = new QVBoxLayout(this);
  v->addWidget(matrix_, 1);
  auto* h = new QHBoxLayout;
  h->addWidget(play_);
  h->addWidget(new QLabel(tr("round"), this));
  h->addWidget(slider_, 1);
  h->addWidget(label_);
  v->addLayout(h);
  slider_->setEnabled(false);
  play_->setEnabled(false);
  timer_->setInterval(700);
  connect(slider_, &QSlider::valueChanged, this, [this](int r) {
    matrix_->set_round(r);
    label_->setText(QString::number(r));
  });
  connect(play_, &QPushButton::clicked, this, &MatrixView::toggle_play);
  connect(timer_, &QTimer::timeout, this, [this] {
    slider_->setValue(slider_->value() == slider_->maximum() ? 0 : slider_->value() + 1);
  });
}

void MatrixView::set_data(const LayoutRun* run) {
  timer_->stop();
  play_->setText(tr("Play"));
  matrix_->set_data(run);
  const bool ok = run != nullptr;
  slider_->setEnabled(ok);
  play_->setEnabled(ok);
  slider_->blockSignals(true);
  slider_->setRange(0, ok ? static_cast<int>(run->n - 1) : 0);
  slider_->setValue(0);
  slider_->blockSignals(false);
  label_->setText("0");
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
