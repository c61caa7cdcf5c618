// The GUI driven as a user would: fill the form, press Run, read the pixels it paints.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <map>

#include <catch2/catch.hpp>

#include <QApplication>
#include <QCheckBox>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QGraphicsItem>
#include <QLegend>
#include <QLegendMarker>
#include <QValueAxis>
#include <QFileInfo>
#include <QLabel>
#include <QComboBox>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QProcess>
#include <QPushButton>
#include <QSlider>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include "gui/charts_view.hpp"
#include "tests/gui/gui_fixtures.hpp"
#include "gui/heatmap_widget.hpp"
#include "gui/main_window.hpp"
#include "gui/matrix_view.hpp"
#include "gui/plan_view.hpp"
#include "gui/scenario_file.hpp"
#include "gui/timeline_widget.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"

using namespace ringsim;

namespace {

using test::app;
using test::run_and_wait;

using test::paper_scenario;

int distance(const QColor& a, const QColor& b) {
  return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) + std::abs(a.blue() - b.blue());
}

// Largest colour distance between any two devices' cells of one round.
int round_spread(const gui::HeatmapWidget& h, const QImage& img, std::int64_t round, std::int64_t n) {
  int spread = 0;
  for (std::int64_t a = 0; a < n; ++a)
    for (std::int64_t b = a + 1; b < n; ++b)
      spread = std::max(spread, distance(img.pixelColor(h.cell_center(round, a)), img.pixelColor(h.cell_center(round, b))));
  return spread;
}

}  // namespace

TEST_CASE("heatmaps: contiguous shows the triangular imbalance, striped is uniform", "[gui]") {
  app();
  gui::MainWindow w{models::Catalog()};
  w.resize(1400, 900);
  w.show();
  w.set_scenario(paper_scenario());
  REQUIRE(w.scenario_valid());
  REQUIRE(run_and_wait(w));
  REQUIRE(w.result() != nullptr);
  w.tabs()->setCurrentIndex(0);
  QApplication::processEvents();
  auto& contiguous = *w.heatmap(0);
  auto& striped = *w.heatmap(1);
  const QImage ci = contiguous.grab().toImage();
  const QImage si = striped.grab().toImage();
  const std::int64_t n = 8;
  for (std::int64_t r = 1; r < n; ++r) {
    INFO("round " << r);
    // Contiguous, round r: devices j < r hold a later K/V block (all masked, skipped), devices
    // j >= r an earlier one (a full block): the two sides of the diagonal.
    CHECK(round_spread(contiguous, ci, r, n) > 200);
    CHECK(distance(ci.pixelColor(contiguous.cell_center(r, r - 1)), ci.pixelColor(contiguous.cell_center(r, r))) > 200);
    CHECK(round_spread(striped, si, r, n) < 12);
  }
  CHECK(round_spread(striped, si, 0, n) < 12);
  // One shared scale: striped's cells sit between contiguous's empty and full ones.
  const QColor s_cell = si.pixelColor(striped.cell_center(3, 3));
  CHECK(distance(s_cell, ci.pixelColor(contiguous.cell_center(3, 0))) > 100);
  CHECK(distance(s_cell, ci.pixelColor(contiguous.cell_center(3, 7))) > 100);
  // The strip under each grid: per round the busiest device against the mean. Contiguous rounds
  // after the first wait for a full block while the mean device holds a fraction of one; striped's
  // devices hold nearly equal work in every round. The oracle: the cells' own maxima and means.
  const auto& run = w.result()->layouts[0];
  const auto& cells = run.values(gui::Metric::Area);
  const auto loads = contiguous.round_loads();
  REQUIRE(loads.size() == static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < n; ++r) {
    double busiest = 0, sum = 0;
    for (std::int64_t d = 0; d < n; ++d) {
      busiest = std::max(busiest, static_cast<double>(cells[static_cast<std::size_t>(d * n + r)]));
      sum += cells[static_cast<std::size_t>(d * n + r)];
    }
    CHECK(loads[static_cast<std::size_t>(r)].busiest == Approx(busiest));
    CHECK(loads[static_cast<std::size_t>(r)].mean == Approx(sum / static_cast<double>(n)));
  }
  CHECK(loads[n - 1].busiest > 4 * loads[n - 1].mean);
  for (const auto& l : striped.round_loads()) CHECK(l.busiest < 1.2 * l.mean);
  // Round numbers on the axis: from 0, increasing, within the ring.
  const auto& ticks = contiguous.round_ticks();
  REQUIRE_FALSE(ticks.empty());
  CHECK(ticks.front() == 0);
  CHECK(std::is_sorted(ticks.begin(), ticks.end()));
  CHECK(ticks.back() <= n - 1);
  // A fixed colour scale: 0..1 of a full block for both panels, whatever the data.
  w.fixed_scale_box()->setChecked(true);
  CHECK(contiguous.color_scale() == gui::ColorScale{});
  CHECK(striped.color_scale() == gui::ColorScale{});
  w.fixed_scale_box()->setChecked(false);
  CHECK(contiguous.color_scale() == striped.color_scale());
}

TEST_CASE("the timeline comes from the discrete-event simulator", "[gui]") {
  app();
  gui::MainWindow w{models::Catalog()};
  w.set_scenario(paper_scenario());
  REQUIRE(run_and_wait(w));
  REQUIRE(w.result() != nullptr);
  for (const auto& run : w.result()->layouts) {
    INFO(run.layout);
    const auto& tl = run.timeline;
    CHECK(tl.simulated);
    CHECK(tl.note.find("simulation") != std::string::npos);
    // A compute lane and a copy-engine lane per device (8 devices, under the 64 shown).
    REQUIRE(tl.lanes.size() == 16);
    CHECK(tl.lanes[1].find("copy") != std::string::npos);
    REQUIRE(tl.end_s > 0);
    std::map<gui::SpanKind, int> kinds;
    for (const auto& s : tl.spans) {
      ++kinds[s.kind];
      CHECK(s.start_s >= 0);
      CHECK(s.end_s <= tl.end_s * (1 + 1e-9));
      CHECK(s.end_s >= s.start_s);
      const bool copy_lane = s.lane % 2 == 1;
      CHECK(copy_lane == (s.kind == gui::SpanKind::Transfer || s.kind == gui::SpanKind::GradTransfer));
    }
    // Forward and backward rings: 8 rounds per device each, K/V over 7 hops and dK/dV over 8.
    CHECK(kinds[gui::SpanKind::Compute] == 2 * 8 * 8);
    CHECK(kinds[gui::SpanKind::Transfer] == 2 * 8 * 7);
    CHECK(kinds[gui::SpanKind::GradTransfer] == 8 * 8);
    CHECK(kinds[gui::SpanKind::Other] > 0);
  }
  // Contiguous leaves devices idle (the causal imbalance): the gaps are there as Wait spans.
  const auto& c = w.result()->layouts[0].timeline;
  CHECK(std::count_if(c.spans.begin(), c.spans.end(), [](const auto& s) { return s.kind == gui::SpanKind::Wait; }) > 0);

  // Both layouts on one time axis (the longer one's), so switching shows the speedup.
  w.resize(1400, 900);
  w.show();
  auto* tl = w.timeline_view();
  const double longest = std::max(w.result()->layouts[0].timeline.end_s, w.result()->layouts[1].timeline.end_s);
  for (int i = 0; i < 2; ++i) {
    w.view_layout_combo()->setCurrentIndex(i);
    CHECK(tl->full_span_s() == longest);
    CHECK(tl->view_span_s() == longest);
  }
  // Ticks at round values: from 0, 1, 2 or 5 x 10^k apart.
  (void)tl->grab();
  const auto& ticks = tl->ticks();
  REQUIRE(ticks.size() >= 3);
  CHECK(ticks.front() == 0);
  const double step = ticks[1] - ticks[0];
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step)));
  CHECK((std::abs(mantissa - 1) < 1e-6 || std::abs(mantissa - 2) < 1e-6 || std::abs(mantissa - 5) < 1e-6));
  // A click on a span names its lane, kind and times; off the spans, nothing.
  w.view_layout_combo()->setCurrentIndex(0);
  const auto& spans = tl->timeline().spans;
  const auto compute = std::find_if(spans.begin(), spans.end(), [](const auto& s) {
    return s.kind == gui::SpanKind::Compute && s.end_s - s.start_s > 0;
  });
  REQUIRE(compute != spans.end());
  const QRect g = tl->plot_rect();
  const double x = g.left() + (0.5 * (compute->start_s + compute->end_s) - tl->view_start_s()) / tl->view_span_s() * g.width();
  const double y = g.top() + (compute->lane + 0.3) * tl->lane_height();
  QTest::mouseClick(tl, Qt::LeftButton, {}, QPoint(static_cast<int>(x), static_cast<int>(y)));
  CHECK(tl->selected_details().contains("attention"));
  CHECK(tl->selected_details().contains(QString::fromStdString(tl->timeline().lanes[static_cast<std::size_t>(compute->lane)])));
  CHECK(tl->span_details(QPointF(g.left() - 20, g.top() + 5)).isEmpty());
}

TEST_CASE("above the simulated size the timeline falls back to the analytic rounds and says so", "[gui]") {
  auto spec = paper_scenario().spec;
  spec.sp = 2 * gui::kMaxSimulatedDevices;
  spec.n_seq = spec.sp * 1024;
  spec.tile.reset();
  const std::atomic<bool> cancel{false};
  const auto r = gui::compute_run(spec, {models::LayoutSpec::parse("striped")}, models::Catalog(), cancel, {});
  REQUIRE(r.has_value());
  const auto& tl = r->layouts.front().timeline;
  CHECK_FALSE(tl.simulated);
  CHECK(tl.note.find("analytic") != std::string::npos);
  CHECK(tl.lanes.size() == 65);  // 64 devices and the link
  CHECK_FALSE(tl.spans.empty());
}

TEST_CASE("an invalid entry disables Run and says why", "[gui]") {
  app();
  gui::MainWindow w{models::Catalog()};
  w.set_scenario(paper_scenario());
  REQUIRE(w.run_button()->isEnabled());
  w.n_seq_edit()->setText("65537");  // not divisible by the ring size
  CHECK_FALSE(w.scenario_valid());
  CHECK_FALSE(w.run_button()->isEnabled());
  const QString why = w.validation_message();
  INFO(why.toStdString());
  CHECK(why.contains("divisible"));
  w.n_seq_edit()->setText("abc");
  CHECK_FALSE(w.run_button()->isEnabled());
  CHECK(w.validation_message().startsWith("n_seq"));
  w.tile_edit()->setText("99999x2048");
  w.n_seq_edit()->setText("65536");
  CHECK_FALSE(w.run_button()->isEnabled());  // tile larger than the block
  w.tile_edit()->setText("2048x2048");
  CHECK(w.run_button()->isEnabled());
  CHECK(w.validation_message().isEmpty());
}

TEST_CASE("the implementation drop-down lists every training implementation and refuses what one does not offer", "[gui]") {
  app();
  const models::Catalog cat;
  gui::MainWindow w{cat};
  w.set_scenario(paper_scenario());
  auto* impl = w.impl_combo();
  REQUIRE(impl != nullptr);
  // Every library that runs a training step (the window's), and not the serving stack.
  const auto names = cat.implementation_names();
  const auto training = std::count_if(names.begin(), names.end(), [&](const std::string& n) {
    return cat.implementation(n).runs_phase(models::RunPhase::Train);
  });
  CHECK(training < static_cast<std::ptrdiff_t>(names.size()));
  CHECK(impl->count() == static_cast<int>(training) + 1);  // + "default"
  CHECK(impl->findText("cp-serve") < 0);
  CHECK(impl->currentText() == "default");
  impl->setCurrentText("jax-blockwise");
  CHECK(w.run_button()->isEnabled());
  CHECK(w.scenario().spec.impl == "jax-blockwise");
  // TransformerEngine's p2p runs the zigzag layout only (with a causal mask): the paper's
  // contiguous vs striped comparison is refused with a line naming what it offers.
  impl->setCurrentText("te-p2p");
  CHECK_FALSE(w.run_button()->isEnabled());
  INFO(w.validation_message().toStdString());
  CHECK(w.validation_message().contains("te-p2p"));
  CHECK(w.validation_message().contains("zigzag"));
  impl->setCurrentText("default");
  CHECK(w.run_button()->isEnabled());
  CHECK(w.scenario().spec.impl.empty());
}

TEST_CASE("cancel stops a large run and leaves the window usable", "[gui]") {
  app();
  gui::MainWindow w{models::Catalog()};
  w.show();
  auto s = paper_scenario();
  s.spec.sp = 1024;
  s.spec.n_seq = 1024 * 2048;
  s.spec.mask = ringsim::models::MaskSpec::parse("window:65536");  // zigzag x window: no memo classes, seconds of work
  s.layouts = ringsim::models::parse_layouts({"zigzag", "striped"});
  s.spec.tile.reset();
  w.set_scenario(s);
  REQUIRE(w.scenario_valid());
  QSignalSpy progress(&w, &gui::MainWindow::progress_changed);
  QSignalSpy done(&w, &gui::MainWindow::run_finished);
  w.run_button()->click();
  CHECK(w.running());
  CHECK_FALSE(w.run_button()->isEnabled());
  REQUIRE(progress.wait(60000));  // mid-run
  w.cancel_button()->click();
  REQUIRE((done.count() > 0 || done.wait(60000)));
  CHECK_FALSE(done.takeFirst().at(0).toBool());
  CHECK_FALSE(w.running());
  CHECK(w.result() == nullptr);
  CHECK(w.status_label()->text() == "cancelled");
  CHECK(w.run_button()->isEnabled());
  // Still usable: a small run completes.
  w.set_scenario(paper_scenario());
  CHECK(run_and_wait(w));
  CHECK(w.result() != nullptr);
}

TEST_CASE("export writes every view as a non-empty PNG and SVG", "[gui]") {
  app();
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  gui::MainWindow w{models::Catalog()};
  w.resize(1400, 900);
  w.show();
  w.set_scenario(paper_scenario());
  REQUIRE(run_and_wait(w));
  const auto files = w.export_all(dir.path());
  // Pictures: heatmap, speedup, breakdown; per layout its round-0 matrix, its all-rounds matrix and
  // its timeline; the two all-rounds matrices side by side. Data: heatmap and charts, per layout
  // its matrix and timeline.
  CHECK(files.filter(".png").size() == 3 + 2 * 3 + 1);
  CHECK(files.filter(".csv").size() == 2 + 2 * 2);
  for (const auto& f : files) {
    INFO(f.toStdString());
    CHECK(QFileInfo(f).size() > 1000);
    if (f.endsWith(".png")) CHECK(QImage(f).width() > 100);
  }
  const QString svg = QDir(dir.path()).filePath("heatmap.svg");
  REQUIRE(gui::MainWindow::export_widget(w.heatmap(0), svg));
  CHECK(QFileInfo(svg).size() > 1000);
}

TEST_CASE("scenario files round-trip, bad ones name the file and field", "[gui]") {
  auto s = paper_scenario();
  s.layouts = ringsim::models::parse_layouts({"contiguous", "zigzag"});
  const auto back = gui::scenario_from_json(gui::scenario_to_json(s), "x.json");
  CHECK(back.spec.n_seq == s.spec.n_seq);
  CHECK(back.spec.sp == 8);
  CHECK(back.spec.tile == s.spec.tile);
  CHECK(back.layouts == s.layouts);
  CHECK(back.spec.impl.empty());
  s.spec.impl = "ring-flash-attn";
  CHECK(gui::scenario_from_json(gui::scenario_to_json(s), "x.json").spec.impl == "ring-flash-attn");
  CHECK_THROWS_AS(gui::scenario_from_json("{", "bad.json"), models::InputError);
  try {
    (void)gui::scenario_from_json(R"({"n_seq": "many"})", "bad.json");
    FAIL("expected InputError");
  } catch (const models::InputError& e) {
    CHECK(e.file() == "bad.json");
    CHECK(e.field() == "n_seq");
  }
}

TEST_CASE("ringsim-gui --export-dir renders headless, a bad scenario exits 2 with one line", "[gui]") {
  app();
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const QString good = QDir(dir.path()).filePath("good.json");
  gui::save_scenario(paper_scenario(), good.toStdString());
  QProcess p;
  p.start(RINGSIM_GUI_EXE, {"--scenario", good, "--export-dir", QDir(dir.path()).filePath("out")});
  REQUIRE(p.waitForFinished(120000));
  CHECK(p.exitCode() == 0);
  for (const char* name : {"heatmap.png", "matrix_contiguous.png", "matrix_striped.png", "speedup.png", "breakdown.png",
                           "timeline_contiguous.png", "timeline_striped.png"})
    CHECK(QFileInfo(QDir(dir.path()).filePath(QString("out/") + name)).size() > 1000);

  auto bad = paper_scenario();
  bad.spec.n_seq = 65537;
  const QString bad_path = QDir(dir.path()).filePath("bad.json");
  gui::save_scenario(bad, bad_path.toStdString());
  p.start(RINGSIM_GUI_EXE, {"--scenario", bad_path, "--export-dir", QDir(dir.path()).filePath("out2")});
  REQUIRE(p.waitForFinished(60000));
  CHECK(p.exitCode() == 2);
  const QString err = QString::fromUtf8(p.readAllStandardError()).trimmed();
  INFO(err.toStdString());
  CHECK(err.count('\n') == 0);
  CHECK(err.contains("bad.json"));
  CHECK_FALSE(QDir(dir.path()).exists("out2"));
}

namespace {

// The paper's scenario computed without the window (the charts and tooltips read it).
gui::RunResult compute_paper(const models::ScenarioSpec& spec, const std::vector<std::string>& layouts) {
  const std::atomic<bool> cancel{false};
  auto r = gui::compute_run(spec, models::parse_layouts(layouts), models::Catalog(), cancel, {});
  REQUIRE(r.has_value());
  return std::move(*r);
}

// The second layout's speedup over the first: 0.93 ... 1.87 over n_seq 64k ... 1M.
void plant_speedups(gui::RunResult& r) {
  r.sweep_n_seq = {65536, 131072, 262144, 524288, 1048576};
  const std::vector<double> speedup{0.93, 1.2, 1.5, 1.7, 1.87};
  r.layouts[0].sweep_step_s.assign(speedup.size(), 1.0);
  r.layouts[1].sweep_step_s.clear();
  for (const double s : speedup) r.layouts[1].sweep_step_s.push_back(1.0 / s);
}

// Every tick of a fixed-tick value axis is a multiple of its step, a 1, 2, 2.5 or 5 x 10^k.
void check_round_ticks(const QValueAxis& axis) {
  INFO("axis " << axis.titleText().toStdString() << ": " << axis.min() << " .. " << axis.max() << ", "
               << axis.tickCount() << " ticks");
  REQUIRE(axis.tickType() == QValueAxis::TicksFixed);
  REQUIRE(axis.tickCount() >= 2);
  const double step = (axis.max() - axis.min()) / (axis.tickCount() - 1);
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  const std::array<double, 4> round_steps{1.0, 2.0, 2.5, 5.0};
  CHECK(std::any_of(round_steps.begin(), round_steps.end(), [&](double m) { return std::abs(mantissa - m) < 1e-9; }));
  for (int i = 0; i < axis.tickCount(); ++i) {
    const double v = (axis.min() + i * step) / step;
    CHECK(std::abs(v - std::round(v)) < 1e-6);
  }
}

}  // namespace

TEST_CASE("chart value axes tick at round numbers", "[gui]") {
  app();
  for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{{0.93, 1.87}, {0, 0.0137}, {3, 3}, {1.2e3, 9.9e4}}) {
    const auto n = gui::nice_axis(lo, hi);
    INFO(lo << " .. " << hi << " -> " << n.min << " .. " << n.max << " step " << n.step);
    CHECK(n.min <= lo);
    CHECK(n.max >= hi);
    CHECK(n.ticks <= 8);
    CHECK(std::abs((n.max - n.min) / n.step - (n.ticks - 1)) < 1e-9);
  }
  const auto n = gui::nice_axis(0.93, 1.87);
  CHECK(n.step == Approx(0.2));
  CHECK(n.min == Approx(0.8));
  CHECK(n.max == Approx(2.0));

  auto r = compute_paper(paper_scenario().spec, {"contiguous", "striped"});
  plant_speedups(r);
  gui::ChartsView v;
  v.set_result(&r);
  const auto ys = v.speedup_view()->chart()->axes(Qt::Vertical);
  REQUIRE(ys.size() == 1);
  const auto* y = qobject_cast<QValueAxis*>(ys.front());
  REQUIRE(y != nullptr);
  CHECK(y->min() <= 0.93);
  CHECK(y->max() >= 1.87);
  check_round_ticks(*y);
  const auto* by = qobject_cast<QValueAxis*>(v.breakdown_view()->chart()->axes(Qt::Vertical).front());
  REQUIRE(by != nullptr);
  check_round_ticks(*by);
}

TEST_CASE("chart labels are compact token counts and long legend entries keep their text", "[gui]") {
  app();
  CHECK(gui::compact_count(131072) == "128k");
  CHECK(gui::compact_count(1048576) == "1M");
  CHECK(gui::compact_count(65536) == "64k");
  CHECK(gui::compact_count(1000) == "1000");
  auto r = compute_paper(paper_scenario().spec, {"contiguous", "striped"});
  plant_speedups(r);
  const std::string long_name = "striped (a layout named at length: " + std::string(150, 'x') + ")";
  r.layouts[1].layout = long_name;
  gui::ChartsView v;
  v.resize(900, 420);
  v.set_result(&r);
  v.show();
  QApplication::processEvents();
  auto* x = qobject_cast<QCategoryAxis*>(v.speedup_view()->chart()->axes(Qt::Horizontal).front());
  REQUIRE(x != nullptr);
  const QStringList labels = x->categoriesLabels();
  INFO(labels.join(", ").toStdString());
  CHECK(labels.contains("128k"));
  CHECK(labels.contains("1M"));
  CHECK_FALSE(x->labelsTruncated());
  // The legend entry is wider than the chart: drawn elided, the whole name in its tooltip.
  const QString full = QString::fromStdString(long_name);
  bool marker = false;
  for (const auto* m : v.speedup_view()->chart()->legend()->markers()) marker |= m->label() == full;
  CHECK(marker);
  bool tooltip = false;
  for (const auto* item : v.speedup_view()->scene()->items()) tooltip |= item->toolTip() == full;
  CHECK(tooltip);
}

TEST_CASE("heatmap colour scale follows the data: log over a wide range, linear over a narrow one", "[gui]") {
  app();
  CHECK(gui::choose_color_scale(gui::value_range({0.f, 1e-4f, 1e-2f, 1.f})).log);
  CHECK_FALSE(gui::choose_color_scale(gui::value_range({0.5f, 0.7f, 1.f})).log);
  CHECK_FALSE(gui::choose_color_scale(gui::value_range({0.f, 0.5f, 1.f})).log);  // zeros don't count
  // A 4-device heatmap whose non-zero values span 1e-4 .. 1 (packed documents): log, and the
  // mid-range cell is far from black.
  gui::LayoutRun run;
  run.layout = "docs";
  run.n = 4;
  run.area = {0, 1e-4f, 1e-3f, 1e-2f, 1e-2f, 1e-1f, 1, 0, 0, 0, 1e-2f, 1, 1e-3f, 1e-2f, 0, 1};
  gui::HeatmapWidget h;
  h.resize(400, 400);
  h.set_data(&run, gui::Metric::Area);
  const auto scale = h.color_scale();
  CHECK(scale.log);
  CHECK(scale.lo == Approx(1e-4));
  CHECK(scale.hi == Approx(1));
  const QImage img = h.grab().toImage();
  const QColor mid = img.pixelColor(h.cell_center(3, 0));  // 1e-2, half-way up on a log scale
  INFO("mid cell " << mid.name().toStdString());
  CHECK(mid.lightness() > 100);
  CHECK(distance(mid, img.pixelColor(h.cell_center(0, 0))) > 100);  // apart from a skipped block
  // Values within 0.5 .. 1: linear from 0.
  run.area = {0.5f, 0.6f, 0.7f, 0.8f, 0.9f, 1, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  h.set_data(&run, gui::Metric::Area);
  CHECK_FALSE(h.color_scale().log);
  CHECK(h.color_scale().hi == Approx(1));
}

TEST_CASE("all-gather heatmap tooltips show the cell's values", "[gui]") {
  auto spec = paper_scenario().spec;
  spec.cp = models::Strategy::parse("allgather");
  const auto r = compute_paper(spec, {"contiguous", "zigzag"});
  for (const auto& run : r.layouts) {
    INFO(run.layout);
    REQUIRE_FALSE(run.scenario->program->has_ring());
    // Device 1 in the last round: contiguous's natural ring would hold a later, fully masked
    // block there (what the tooltip used to read: all zeros), but all-gather's device 1 works.
    const std::int64_t device = 1, round = run.n - 1;
    const float value = run.area[static_cast<std::size_t>(device * run.n + round)];
    REQUIRE(value > 0);
    const QString tip = gui::heatmap_tooltip(run, round, device);
    INFO(tip.toStdString());
    CHECK(tip.contains(QString::number(value, 'g', 3)));
    // The device's kernel work per round, not a ring block's (which has no meaning here).
    const auto pairs = models::device_pairs(*run.scenario)[static_cast<std::size_t>(device)];
    CHECK(tip.contains(QString::number(static_cast<double>(pairs) / static_cast<double>(run.n), 'g', 3)));
    CHECK_FALSE(tip.contains("tiles computed 0"));
  }
}

TEST_CASE("timeline lane labels stay a font height apart at 64 and 1024 lanes", "[gui]") {
  app();
  for (const int lanes : {64, 128, 1024}) {
    for (const bool simulated : {false, true}) {
      gui::Timeline tl;
      tl.simulated = simulated;
      for (int l = 0; l < lanes; ++l) tl.lanes.push_back("dev " + std::to_string(l));
      tl.spans.push_back({lanes - 1, 0, 1, gui::SpanKind::Compute, 0, "attn fwd r0"});
      tl.end_s = 1;
      gui::TimelineWidget w;
      w.resize(900, 500);
      w.set_timeline(tl, "t");
      const auto labelled = w.labelled_lanes();
      const double gap = w.fontMetrics().height();
      INFO(lanes << " lanes, " << w.lane_height() << " px each, font " << gap << " px");
      REQUIRE(labelled.size() >= 2);
      CHECK(labelled.front() == 0);
      CHECK(labelled.back() == lanes - 1);
      for (std::size_t i = 1; i < labelled.size(); ++i)
        CHECK((labelled[i] - labelled[i - 1]) * w.lane_height() >= gap);
      (void)w.grab();  // paints every lane without trouble
    }
  }
  // Room for every name: every lane labelled.
  CHECK(gui::labelled_lanes(8, 40, 15).size() == 8);
}

TEST_CASE("the window remembers its size and last scenario, and has Help and the usual shortcuts", "[gui]") {
  app();
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  QSettings settings(dir.filePath("ringsim-gui.ini"), QSettings::IniFormat);
  QSize closed_at;
  {
    gui::MainWindow w{models::Catalog(), &settings};
    w.resize(1717, 1013);
    w.show();
    w.hardware_combo()->setCurrentText("h100-sxm");
    w.mesh_edit()->setText("2x4");
    w.n_seq_edit()->setText("65536");
    REQUIRE(w.scenario_valid());
    closed_at = w.size();
    REQUIRE(closed_at != gui::MainWindow{models::Catalog()}.size());
    w.close();
  }
  REQUIRE(settings.contains("window/geometry"));
  REQUIRE(settings.contains("scenario/last"));
  {
    gui::MainWindow again{models::Catalog(), &settings};
    CHECK(again.hardware_combo()->currentText() == "h100-sxm");
    CHECK(again.mesh_edit()->text() == "2x4");
    CHECK(again.n_seq_edit()->text() == "65536");
    CHECK(again.size() == closed_at);
  }
  // A remembered scenario the catalog cannot run (a model since renamed) is dropped: the window
  // opens on its default scenario, not on an error.
  auto stale = gui::opening_scenario();
  stale.spec.model = "no-such-model";
  settings.setValue("scenario/last", QString::fromStdString(gui::scenario_to_json(stale)));
  {
    gui::MainWindow fresh{models::Catalog(), &settings};
    const gui::MainWindow plain{models::Catalog()};
    CHECK(fresh.mesh_edit()->text() == plain.mesh_edit()->text());
    CHECK(fresh.scenario().spec.model == gui::opening_scenario().spec.model);
    CHECK_FALSE(settings.contains("scenario/last"));
  }
  // Without settings nothing is read or written (tests, headless export).
  const gui::MainWindow none{models::Catalog()};
  // The Plan tab asks about the form's hardware, model, devices and context, not its lists' first entries.
  const auto form = none.scenario().spec;
  const auto asked = none.plan_view()->request();
  CHECK(asked.hardware == form.hardware);
  CHECK(asked.model == form.model);
  CHECK(asked.devices == form.mp * form.sp);
  CHECK(asked.n_seq == form.n_seq);
  // The menus: File with Ctrl+O / Ctrl+S / Ctrl+Q, Help with F1 and About.
  std::map<QString, QKeySequence> shortcuts;
  QStringList menus;
  for (auto* menu : none.menuBar()->actions()) {
    menus << menu->text();
    if (menu->menu())
      for (auto* a : menu->menu()->actions()) shortcuts[a->text()] = a->shortcut();
  }
  CHECK(menus.contains("&Help"));
  CHECK(shortcuts.at("&Quit") == QKeySequence(QObject::tr("Ctrl+Q")));
  CHECK(shortcuts.at("&Open scenario…") == QKeySequence(QKeySequence::Open));
  CHECK(shortcuts.at("&Save scenario…") == QKeySequence(QKeySequence::Save));
  CHECK(shortcuts.at("&How to read the views") == QKeySequence(QKeySequence::HelpContents));
  CHECK(shortcuts.count("&About ringsim") == 1);
  CHECK(shortcuts.at("Export view &data as CSV…") == QKeySequence(QObject::tr("Ctrl+Shift+E")));
  CHECK(shortcuts.at("Open timeline in Pe&rfetto…") == QKeySequence(QObject::tr("Ctrl+T")));
}

TEST_CASE("the attention matrix over every round colours each pair by the device that computes it", "[gui]") {
  app();
  gui::MainWindow w{models::Catalog()};
  w.resize(1400, 900);
  w.show();
  w.set_scenario(test::small_matrix_scenario());
  REQUIRE(run_and_wait(w));
  auto* view = w.matrix_view();
  view->all_rounds_box()->setChecked(true);
  CHECK_FALSE(view->slider()->isEnabled());
  for (int layout = 0; layout < 2; ++layout) {
    w.view_layout_combo()->setCurrentIndex(layout);
    CHECK_FALSE(view->slider()->isEnabled());  // switching layouts keeps every round shown
    const auto& run = w.result()->layouts[static_cast<std::size_t>(layout)];
    INFO(run.layout);
    const auto& s = *run.scenario;
    const QImage& img = view->matrix()->image();
    REQUIRE(img.width() == 32);
    // The oracle: the query's owner computes the pair (in the round the key's block reaches it);
    // a masked pair is dark. Contiguous gives the owners' bands, striped interleaves them.
    for (std::int64_t q = 0; q < 32; ++q)
      for (std::int64_t k = 0; k < 32; ++k) {
        const QColor want = s.mask->allowed(q, k, 0) ? gui::device_color(s.layout->place(q).device) : QColor(70, 70, 70);
        if (img.pixelColor(static_cast<int>(k), static_cast<int>(q)) != want) {
          FAIL("pixel (" << q << ", " << k << ")");
        }
      }
  }
  // Off again: one round, the slider back.
  view->all_rounds_box()->setChecked(false);
  CHECK(view->slider()->isEnabled());
  CHECK_FALSE(view->matrix()->all_rounds());
}
