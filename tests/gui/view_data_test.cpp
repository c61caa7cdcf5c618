// The numbers behind the views (File > Export view data, the headless export), the timeline's
// details (round, K/V block), the matrix's hover text and side-by-side pair, and the Chrome trace
// for Perfetto: each against an oracle from the library, not against golden numbers.
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include "gui/compare_view.hpp"
#include "tests/gui/gui_fixtures.hpp"
#include "gui/heatmap_widget.hpp"
#include "gui/main_window.hpp"
#include "gui/matrix_view.hpp"
#include "gui/timeline_widget.hpp"
#include "gui/view_data.hpp"
#include "models/analytic/breakdown.hpp"
#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"

using namespace ringsim;

namespace {

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  // The exports quote no field in these scenarios except "why" texts, which the tests skip.
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::string cell;
    std::istringstream ls(line);
    while (std::getline(ls, cell, ',')) f.push_back(cell);
    if (!line.empty() && line.back() == ',') f.emplace_back();
    rows.push_back(f);
  }
  return rows;
}


std::string read_file(const QString& path) {
  QFile f(path);
  REQUIRE(f.open(QIODevice::ReadOnly));
  return f.readAll().toStdString();
}

}  // namespace

TEST_CASE("view data: the heatmap, matrix, charts and timeline CSVs hold the run's own numbers", "[gui]") {
  test::app();
  gui::MainWindow w{models::Catalog()};
  w.set_scenario(test::paper_scenario());
  REQUIRE(test::run_and_wait(w));
  const auto& result = *w.result();
  REQUIRE(result.layouts.size() == 2);

  // Heatmap: one row per (layout, device, round), each value the cell's.
  const auto heat = parse_csv(gui::heatmap_csv(result));
  REQUIRE(heat.size() == 1 + 2 * 8 * 8);
  CHECK(heat[0] == std::vector<std::string>{"layout", "device", "round", "kv_block_of", "visited_area", "allowed_pairs", "tiles_computed"});
  for (std::size_t i = 1; i < heat.size(); ++i) {
    const auto& row = heat[i];
    const auto& run = result.layouts[(i - 1) / 64];
    REQUIRE(row[0] == run.layout);
    const auto d = std::stoll(row[1]), r = std::stoll(row[2]);
    const auto k = static_cast<std::size_t>(d * 8 + r);
    CHECK(std::stoll(row[3]) == (d - r + 8) % 8);
    CHECK(std::stod(row[4]) == Approx(run.area[k]));
    CHECK(std::stod(row[5]) == Approx(run.pairs[k]));
    CHECK(std::stod(row[6]) == Approx(run.tiles[k]));
  }

  // Matrix: every computed tile once, in the round its K/V block reaches the device; the
  // count per (device, round) is the heatmap's tiles fraction times a full block's tiles.
  for (const auto& run : result.layouts) {
    INFO(run.layout);
    const auto rows = parse_csv(gui::matrix_csv(run));
    const std::int64_t per_block = (65536 / 8 / 2048) * (65536 / 8 / 2048);
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> per_cell;
    std::set<std::vector<std::string>> unique;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const auto q_dev = std::stoll(rows[i][0]), kv_dev = std::stoll(rows[i][2]), round = std::stoll(rows[i][4]);
      CHECK(kv_dev == models::Workload::kv_block_of(q_dev, round, 8));
      ++per_cell[{q_dev, round}];
      unique.insert(rows[i]);
    }
    CHECK(unique.size() == rows.size() - 1);
    for (std::int64_t d = 0; d < 8; ++d)
      for (std::int64_t r = 0; r < 8; ++r)
        CHECK(per_cell[{d, r}] == std::llround(run.tiles[static_cast<std::size_t>(d * 8 + r)] * static_cast<double>(per_block)));
    // Bounded: a listing over the limit is refused, not written half.
    CHECK_THROWS_AS(gui::matrix_csv(run, 3), models::InputError);
  }

  // Charts: the sweep's steps, and the step's parts, which sum to the predicted step.
  const auto charts = parse_csv(gui::charts_csv(result));
  for (const auto& run : result.layouts) {
    double parts = 0;
    std::size_t steps = 0;
    for (const auto& row : charts) {
      if (row[0] != run.layout) continue;
      if (row[1] == "part") parts += std::stod(row[3]);
      if (row[1] == "step") ++steps;
    }
    CHECK(steps == result.sweep_n_seq.size());
    CHECK(parts == Approx(run.prediction.step_s).epsilon(1e-9));
  }

  // Timeline: every span, with its round where it has one.
  const auto& tl = result.layouts[0].timeline;
  const auto spans = parse_csv(gui::timeline_csv(tl));
  REQUIRE(spans.size() == 1 + tl.spans.size());
  for (std::size_t i = 0; i < tl.spans.size(); ++i) {
    CHECK(spans[i + 1][0] == tl.lanes[static_cast<std::size_t>(tl.spans[i].lane)]);
    CHECK(spans[i + 1][3] == (tl.spans[i].round >= 0 ? std::to_string(tl.spans[i].round) : std::string()));
  }
}

TEST_CASE("export view data follows the tab, and the headless export writes the CSVs beside the pictures", "[gui]") {
  test::app();
  gui::MainWindow w{models::Catalog()};
  w.resize(1400, 900);
  w.show();
  w.set_scenario(test::paper_scenario());
  CHECK(w.current_view_data().second.empty());  // nothing run yet
  REQUIRE(test::run_and_wait(w));
  w.tabs()->setCurrentIndex(0);
  CHECK(w.current_view_data().first == "heatmap.csv");
  CHECK(w.current_view_data().second == gui::heatmap_csv(*w.result()));
  w.tabs()->setCurrentWidget(w.timeline_view());
  w.view_layout_combo()->setCurrentIndex(1);
  CHECK(w.current_view_data().first == "timeline_striped.csv");
  CHECK(w.current_view_data().second == gui::timeline_csv(w.result()->layouts[1].timeline));

  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const auto files = w.export_all(dir.path());
  QStringList names;
  for (const auto& f : files) names << QFileInfo(f).fileName();
  for (const char* want : {"heatmap.csv", "charts.csv", "matrix_contiguous.csv", "matrix_striped.csv",
                           "timeline_contiguous.csv", "timeline_striped.csv", "matrix_side_by_side.png"}) {
    INFO(want);
    CHECK(names.contains(want));
  }
  CHECK(read_file(QDir(dir.path()).filePath("heatmap.csv")) == gui::heatmap_csv(*w.result()));
}

TEST_CASE("timeline details name the round and the K/V block; the Chrome trace is the same simulation", "[gui]") {
  test::app();
  gui::MainWindow w{models::Catalog()};
  w.resize(1400, 900);
  w.show();
  w.set_scenario(test::paper_scenario());
  REQUIRE(test::run_and_wait(w));
  auto* tl = w.timeline_view();
  w.tabs()->setCurrentWidget(tl);
  w.view_layout_combo()->setCurrentIndex(0);
  (void)tl->grab();
  const auto& timeline = tl->timeline();
  CHECK(timeline.ring_devices == 8);
  const QRect g = tl->plot_rect();
  auto at = [&](const gui::TimelineSpan& s) {
    const double x = g.left() + (0.5 * (s.start_s + s.end_s) - tl->view_start_s()) / tl->view_span_s() * g.width();
    return QPointF(x, g.top() + (s.lane + 0.3) * tl->lane_height());
  };
  // Every attention span wide enough to hit: its round and whose block it is, as the workload says.
  int checked = 0;
  for (const auto& s : timeline.spans) {
    if (s.kind != gui::SpanKind::Compute || (s.end_s - s.start_s) / tl->view_span_s() * g.width() < 4) continue;
    const QString d = tl->span_details(at(s));
    INFO(d.toStdString());
    REQUIRE(s.round >= 0);
    CHECK(d.contains(QString("round %1").arg(s.round)));
    CHECK(d.contains(QString("K/V block of device %1").arg(models::Workload::kv_block_of(s.lane / 2, s.round, 8))));
    ++checked;
  }
  CHECK(checked > 8);
  // A wait after an attention span names that round.
  const auto wait = std::find_if(timeline.spans.begin(), timeline.spans.end(), [&](const gui::TimelineSpan& s) {
    return s.kind == gui::SpanKind::Wait && (s.end_s - s.start_s) / tl->view_span_s() * g.width() > 4 &&
           std::any_of(timeline.spans.begin(), timeline.spans.end(), [&](const gui::TimelineSpan& c) {
             return c.lane == s.lane && c.kind == gui::SpanKind::Compute && std::abs(c.end_s - s.start_s) <= 1e-9 * timeline.end_s;
           });
  });
  REQUIRE(wait != timeline.spans.end());
  CHECK(tl->span_details(at(*wait)).contains("after round"));

  // The trace Perfetto opens: the same one-layer simulation, every attention span with its round.
  QTemporaryDir dir;
  REQUIRE(dir.isValid());
  const QString path = QDir(dir.path()).filePath("trace.json");
  REQUIRE(w.write_chrome_trace(path));
  const auto doc = nlohmann::json::parse(read_file(path));
  std::size_t rounds = 0;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == "X" && e.contains("args")) ++rounds;
  const auto computes = std::count_if(timeline.spans.begin(), timeline.spans.end(), [](const auto& s) { return s.kind == gui::SpanKind::Compute; });
  CHECK(static_cast<std::ptrdiff_t>(rounds) == computes);  // all 8 devices are shown, so all spans are in both
  CHECK(doc.at("metadata").at("step_s").get<double>() == Approx(timeline.end_s));
}

TEST_CASE("the matrix names the pair under the cursor and shows the other layout beside it", "[gui]") {
  test::app();
  gui::MainWindow w{models::Catalog()};
  w.resize(1400, 900);
  w.show();
  w.set_scenario(test::small_matrix_scenario());
  REQUIRE(test::run_and_wait(w));
  w.tabs()->setCurrentWidget(w.matrix_view());
  auto* view = w.matrix_view();
  auto* m = view->matrix();
  (void)m->grab();
  const QRect r = m->image_rect();
  const auto& s = *w.result()->layouts[0].scenario;
  // Each pair: its query and key devices and the round the query's device meets the key's block.
  for (const int q : {0, 5, 17, 31})
    for (const int k : {0, 3, 16, 30}) {
      const QPointF pos(r.left() + (k + 0.5) * r.width() / 32.0, r.top() + (q + 0.5) * r.height() / 32.0);
      const QString d = m->cell_details(pos);
      INFO(d.toStdString());
      const auto qd = s.layout->place(q).device, kd = s.layout->place(k).device;
      CHECK(d.startsWith(QString("query %1 (device %2) x key %3 (device %4)").arg(q).arg(qd).arg(k).arg(kd)));
      CHECK(d.contains(s.mask->allowed(q, k, 0) ? "computed" : "masked"));
      CHECK(d.endsWith(QString("round %1").arg((qd - kd + 4) % 4)));
    }
  CHECK(m->cell_details(QPointF(r.left() - 5, r.top() - 5)).isEmpty());

  // Side by side: the other layout's matrix, on the same round, the same as it is drawn alone.
  view->side_by_side_box()->setChecked(true);
  REQUIRE(view->other_matrix()->isVisible());
  view->slider()->setValue(2);
  CHECK(view->other_matrix()->round() == 2);
  const QImage beside = view->other_matrix()->image();
  w.view_layout_combo()->setCurrentIndex(1);
  view->slider()->setValue(2);
  CHECK(view->matrix()->image() == beside);
  view->side_by_side_box()->setChecked(false);
  CHECK_FALSE(view->other_matrix()->isVisible());
}
