// The GUI driven as a user would: fill the form, press Run, read the pixels it paints.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>

#include <catch2/catch.hpp>

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QComboBox>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>

#include "gui/heatmap_widget.hpp"
#include "gui/main_window.hpp"
#include "gui/scenario_file.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"

using namespace ringsim;

namespace {

QApplication& app() {
  static int argc = 1;
  static char name[] = "ringsim_gui_tests";
  static char* argv[] = {name, nullptr};
  // Never destroyed: a static QApplication outliving main() crashes in Qt's own teardown.
  static auto* a = new QApplication(argc, argv);
  return *a;
}

gui::GuiScenario paper_scenario() {
  gui::GuiScenario s;
  s.spec.hardware = "a100-80gb";
  s.spec.model = "ringattn-1b";
  s.spec.mp = 1;
  s.spec.sp = 8;
  s.spec.n_seq = 65536;
  s.spec.tile = models::TileShape{2048, 2048};
  return s;
}

// Runs and waits for the worker (bounded; the run itself takes well under a second).
bool run_and_wait(gui::MainWindow& w) {
  QSignalSpy done(&w, &gui::MainWindow::run_finished);
  w.run_button()->click();
  if (!done.wait(120000)) return false;
  return done.takeFirst().at(0).toBool();
}

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

TEST_CASE("the implementation drop-down lists every implementation and refuses what one does not offer", "[gui]") {
  app();
  const models::Catalog cat;
  gui::MainWindow w{cat};
  w.set_scenario(paper_scenario());
  auto* impl = w.impl_combo();
  REQUIRE(impl != nullptr);
  CHECK(impl->count() == static_cast<int>(cat.implementation_names().size()) + 1);  // + "default"
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
  CHECK(files.size() == 7);
  for (const auto& f : files) {
    INFO(f.toStdString());
    CHECK(QFileInfo(f).size() > 1000);
    CHECK(QImage(f).width() > 100);
  }
  const QString svg = QDir(dir.path()).filePath("heatmap.svg");
  REQUIRE(gui::MainWindow::export_widget(w.heatmap(0), svg));
  CHECK(QFileInfo(svg).size() > 1000);
}

TEST_CASE("scenario files round-trip; bad ones name the file and field", "[gui]") {
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

TEST_CASE("ringsim-gui --export-dir renders headless; a bad scenario exits 2 with one line", "[gui]") {
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
