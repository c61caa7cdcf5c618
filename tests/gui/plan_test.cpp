// The Plan tab and the window's opening: the tab's first plan is `ringsim plan`'s for the same
// inputs (the command run as a process), a selected plan's memory bar is its estimate, a plan
// opens in the scenario views, a search can be cancelled, and the window opens on a scenario
// whose "why" lines are shown.
#include <algorithm>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTreeWidget>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "gui/compare_view.hpp"
#include "tests/gui/gui_fixtures.hpp"
#include "gui/main_window.hpp"
#include "gui/memory_bar.hpp"
#include "gui/plan_view.hpp"
#include "gui/scenario_file.hpp"

using namespace ringsim;

namespace {

QApplication& plan_app() { return test::app(); }

bool plan_and_wait(gui::PlanView& v) {
  QSignalSpy done(&v, &gui::PlanView::finished);
  v.start();
  if (!done.wait(120000)) return false;
  return done.takeFirst().at(0).toBool();
}

}  // namespace

TEST_CASE("the Plan tab's first plan is ringsim plan's for the same inputs", "[gui][plan]") {
  plan_app();
  models::Catalog catalog;
  gui::PlanView view(catalog);
  view.set_inputs("h100-sxm", "llama3-8b", "8", "131072", "max-throughput");
  REQUIRE(plan_and_wait(view));
  REQUIRE(view.result());
  REQUIRE_FALSE(view.result()->plans.empty());
  const auto& mine = view.result()->plans.front().plan;

  QProcess cli;
  cli.start(RINGSIM_BIN, {"plan", "--hardware", "h100-sxm", "--model", "llama3-8b", "--devices", "8", "--seq", "131072",
                          "--format", "json"});
  REQUIRE(cli.waitForFinished(120000));
  REQUIRE(cli.exitCode() == 0);
  const auto j = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
  const auto& first = j.at("plans").at(0);
  CHECK(first.at("impl").get<std::string>() == mine.impl);
  CHECK(first.at("cp").get<std::string>() == mine.point.spec.cp.text());
  CHECK(first.at("layout").get<std::string>() == mine.point.spec.layout.text());
  CHECK(first.at("dp").get<std::int64_t>() == mine.point.dp);
  CHECK(first.at("mp").get<std::int64_t>() == mine.point.spec.mp);
  CHECK(first.at("sp").get<std::int64_t>() == mine.point.spec.sp);
  CHECK(first.at("tile_q").get<std::int64_t>() == mine.tile_q);
  CHECK(first.at("tokens_per_s").get<double>() == Approx(mine.tokens_per_s).epsilon(1e-12));
  CHECK(first.at("ties").size() == view.result()->plans.front().ties.size());

  // The tree: the best of each strategy, then the ranked plans, the first selected, its ties folded
  // under it; the memory bar shows the selected plan's estimate.
  auto* tree = view.tree();
  REQUIRE(tree->topLevelItemCount() == 2);
  CHECK(tree->topLevelItem(0)->childCount() == static_cast<int>(view.result()->best_per_strategy.size()));
  auto* ranked = tree->topLevelItem(1);
  REQUIRE(ranked->childCount() == static_cast<int>(view.result()->plans.size()));
  CHECK(ranked->child(0)->text(4).startsWith(QString::fromStdString(mine.impl)));
  CHECK(ranked->child(0)->childCount() == static_cast<int>(view.result()->plans.front().ties.size()));
  CHECK(tree->currentItem() == ranked->child(0));
  REQUIRE(view.memory_bar()->estimate());
  CHECK(view.memory_bar()->estimate()->total_bytes == Approx(mine.memory.total_bytes));
  CHECK(view.memory_bar()->legend().join(" ").contains("activations"));
  // Words, not the CSV keys.
  CHECK_FALSE(view.memory_bar()->legend().join(" ").contains("_"));
  CHECK(view.open_button()->isEnabled());
  // Every strategy family of the search has its best row.
  QStringList families;
  for (int i = 0; i < tree->topLevelItem(0)->childCount(); ++i) families << tree->topLevelItem(0)->child(i)->text(0);
  CHECK(families.contains("ring"));
  CHECK(families.contains("ulysses"));
  // ZeRO, recomputation and pipeline columns, as the command's table has them.
  const auto* header = tree->headerItem();
  QStringList names;
  for (int c = 0; c < header->columnCount(); ++c) names << header->text(c);
  const auto zero_col = names.indexOf("ZeRO"), recompute_col = names.indexOf("recompute");
  REQUIRE(zero_col > 0);
  REQUIRE(recompute_col > 0);
  CHECK(names.contains("pipeline"));
  CHECK(ranked->child(0)->text(static_cast<int>(zero_col)).toStdString() == models::to_string(mine.point.zero));
  CHECK(ranked->child(0)->text(static_cast<int>(recompute_col)).toStdString() == models::to_string(mine.recompute));
  // The export is the command's JSON, figure for figure.
  CHECK(nlohmann::json::parse(view.answer_json()) == j);
  // And its CSV is the command's `--format csv`, byte for byte (one row per ranked plan).
  QProcess csv;
  csv.start(RINGSIM_BIN, {"plan", "--hardware", "h100-sxm", "--model", "llama3-8b", "--devices", "8", "--seq", "131072",
                          "--format", "csv"});
  REQUIRE(csv.waitForFinished(120000));
  REQUIRE(csv.exitCode() == 0);
  const auto csv_text = csv.readAllStandardOutput().toStdString();
  CHECK(view.answer_csv() == csv_text);
  CHECK(std::count(csv_text.begin(), csv_text.end(), '\n') == 1 + static_cast<std::ptrdiff_t>(view.result()->plans.size()));
  // "Show this plan" compares it with another layout its library runs here (contiguous blocks
  // where it runs them), never with itself when there is one.
  const auto layouts = view.compared_layouts(mine);
  REQUIRE(layouts.size() == 2);
  CHECK(layouts[0].text() == mine.point.spec.layout.text());
  const auto hw = catalog.hardware("h100-sxm");
  const auto impl = catalog.implementation(mine.impl);
  CHECK(impl.offers(hw.kind, layouts[1], models::effective_mask(mine.point.spec), mine.point.spec.cp));
  // Inputs edited after the search: the results are marked as the old inputs' answer.
  CHECK_FALSE(view.stale());
  view.set_inputs("h100-sxm", "llama3-8b", "16", "131072", "min-devices");
  CHECK(view.stale());
  CHECK(view.showing_error());
  CHECK_FALSE(tree->isEnabled());
}

TEST_CASE("a plan search can be cancelled, bad inputs say which field", "[gui][plan]") {
  plan_app();
  models::Catalog catalog;
  gui::PlanView view(catalog);
  view.set_inputs("h100-sxm", "llama3-70b", "1024", "1048576", "max-throughput");
  QSignalSpy done(&view, &gui::PlanView::finished);
  view.start();
  view.cancel();
  REQUIRE(done.wait(120000));
  CHECK_FALSE(done.takeFirst().at(0).toBool());
  CHECK(view.status()->text() == "cancelled");
  view.set_inputs("h100-sxm", "llama3-8b", "zero", "131072", "max-throughput");
  view.start();
  CHECK_FALSE(view.running());
  CHECK(view.status()->text().startsWith("devices"));
  CHECK(view.showing_error());  // in the error colour
}

TEST_CASE("the window opens on a scenario whose why lines are shown, a plan opens in the views", "[gui][plan]") {
  plan_app();
  gui::MainWindow w{models::Catalog{}};
  CHECK(w.mesh_edit()->text() == "1x8");
  CHECK(w.n_seq_edit()->text() == "131072");
  CHECK(w.scenario_valid());
  QSignalSpy ran(&w, &gui::MainWindow::run_finished);
  w.open_ready();  // what ringsim-gui does on opening
  REQUIRE(ran.wait(120000));
  REQUIRE(ran.takeFirst().at(0).toBool());
  // contiguous is imbalance-bound, zigzag is not; both are said under the views.
  CHECK(w.why_label()->text().contains("contiguous"));
  CHECK(w.why_label()->text().contains("imbalance"));
  CHECK(w.why_label()->text().contains("zigzag"));

  auto* plan = w.plan_view();
  plan->set_inputs("h100-sxm", "llama3-8b", "8", "131072", "max-throughput");
  QSignalSpy planned(plan, &gui::PlanView::finished);
  plan->start();
  REQUIRE(planned.wait(120000));
  REQUIRE(planned.takeFirst().at(0).toBool());
  const auto& best = plan->result()->plans.front().plan;
  plan->open_button()->click();
  REQUIRE(ran.wait(120000));
  CHECK(w.mesh_edit()->text() == QString("%1x%2").arg(best.point.spec.mp).arg(best.point.spec.sp));
  CHECK(w.tabs()->currentIndex() == 0);
}

TEST_CASE("the Compare tab breaks each strategy's step down exactly and says why one cannot run", "[gui][plan]") {
  plan_app();
  gui::MainWindow w{models::Catalog{}};
  auto* cmp = w.compare_view();
  cmp->strategies_edit()->setText("ring, ulysses, usp:2x4, double-ring:4, double-ring:3");
  QSignalSpy done(cmp, &gui::CompareView::finished);
  cmp->start();
  REQUIRE(done.wait(120000));
  REQUIRE(done.takeFirst().at(0).toBool());
  const auto& rows = cmp->rows();
  REQUIRE(rows.size() == 5);
  int runnable = 0;
  for (const auto& r : rows) {
    INFO(r.strategy);
    if (r.refused) {
      CHECK_FALSE(r.refused->empty());
      continue;
    }
    ++runnable;
    // One attention kernel for every row that runs (the form's implementation's), as predict compares.
    CHECK(r.kernel == rows[0].kernel);
    CHECK_FALSE(r.kernel.empty());
    // The parts add up to the predicted step, each counted once, none negative.
    CHECK(r.parts.total() == Approx(r.prediction.step_s).epsilon(1e-12));
    for (const double x : r.parts.s) CHECK(x >= 0);
    CHECK(r.parts[ringsim::models::StepPart::SimulatedDifference] == 0);
    CHECK_FALSE(r.why.empty());
    if (r.step.available) {
      CHECK(r.step.lo <= r.prediction.step_s);
      CHECK(r.step.hi >= r.prediction.step_s);
    }
  }
  CHECK(runnable == 4);
  // InternEvo's double ring runs balanced layouts only: its row takes the fastest it offers.
  CHECK_FALSE(rows[3].refused.has_value());
  CHECK(rows[3].layout != "contiguous");
  // Windows of 3 do not divide the ring of 8: a row with the reason, not a failure.
  CHECK(rows[4].refused.has_value());
  CHECK(cmp->bars()->toolTip().contains("not runnable here"));
  // On an H100 the ring's default library calls FlashAttention-2 and Ulysses' TransformerEngine's
  // cuDNN kernel: compared, both run FlashAttention-2, as `ringsim predict --cp ring,ulysses` does.
  w.hardware_combo()->setCurrentText("h100-sxm");
  w.layout_a_combo()->setCurrentText("zigzag");
  REQUIRE(w.hardware_combo()->currentText() == "h100-sxm");
  REQUIRE(w.layout_a_combo()->currentText() == "zigzag");
  cmp->strategies_edit()->setText("ring, ulysses");
  cmp->start();
  REQUIRE(done.wait(120000));
  REQUIRE(done.takeFirst().at(0).toBool());
  REQUIRE(cmp->rows().size() == 2);
  for (const auto& r : cmp->rows()) REQUIRE_FALSE(r.refused.has_value());
  CHECK(cmp->rows()[0].kernel == "flash-attn-2");
  CHECK(cmp->rows()[1].kernel == "flash-attn-2");
  CHECK(cmp->rows()[1].impl == "usp");
  // Painted on one time axis with round ticks from 0 past the longest bar.
  (void)cmp->bars()->grab();
  const auto ticks = cmp->axis_ticks();
  REQUIRE(ticks.size() >= 3);
  CHECK(ticks.front() == "0");
  // Each strategy at the fastest layout its library runs: contiguous blocks for the form's layout
  // A, the ring still shows a balanced layout (the causal ring's contiguous blocks are the slowest).
  w.layout_a_combo()->setCurrentText("contiguous");
  cmp->start();
  REQUIRE(done.wait(120000));
  REQUIRE(done.takeFirst().at(0).toBool());
  REQUIRE(cmp->rows().size() == 2);
  CHECK(cmp->rows()[0].layout != "contiguous");
  ringsim::models::ScenarioSpec contiguous = w.scenario().spec;
  contiguous.cp = ringsim::models::Strategy::parse("ring");
  contiguous.impl = cmp->rows()[0].impl;
  contiguous.layout = ringsim::models::LayoutSpec::parse("contiguous");
  CHECK(cmp->rows()[0].prediction.step_s <
        ringsim::models::predict(ringsim::models::resolve(contiguous, ringsim::models::Catalog{})).step_s);
  w.layout_a_combo()->setCurrentText("zigzag");
  // The form's implementation anchors the kernel: TransformerEngine's ring on cuDNN, its Ulysses too.
  w.impl_combo()->setCurrentText("te-p2p");
  cmp->start();
  REQUIRE(done.wait(120000));
  REQUIRE(done.takeFirst().at(0).toBool());
  REQUIRE(cmp->rows().size() == 2);
  for (const auto& r : cmp->rows()) REQUIRE_FALSE(r.refused.has_value());
  CHECK(cmp->rows()[0].impl == "te-p2p");
  CHECK(cmp->rows()[1].kernel == cmp->rows()[0].kernel);
  CHECK(cmp->rows()[1].impl != "usp");
  // A length zigzag cannot split (65544 tokens: 16 chunks of 4096.5): the ring still runs at a
  // layout that can, instead of the whole row being refused for zigzag's reason.
  w.impl_combo()->setCurrentText("default");
  w.layout_a_combo()->setCurrentText("contiguous");
  w.n_seq_edit()->setText("65544");  // the form's layout B (zigzag) cannot run it: Compare reads layout A
  cmp->strategies_edit()->setText("ring");
  cmp->start();
  REQUIRE(done.wait(120000));
  REQUIRE(done.takeFirst().at(0).toBool());
  REQUIRE(cmp->rows().size() == 1);
  REQUIRE_FALSE(cmp->rows()[0].refused.has_value());
  CHECK(cmp->rows()[0].layout != "zigzag");
  // A strategy that does not parse is the status line, not a crash.
  cmp->strategies_edit()->setText("ring, bogus");
  cmp->start();
  CHECK_FALSE(cmp->running());
  CHECK_FALSE(cmp->status()->text().isEmpty());
}
