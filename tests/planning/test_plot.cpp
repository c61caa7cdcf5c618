// Charts: round tick values, readable labels, both surfaces written (atomically, deterministic),
// and the data a chart is built from checked against the sweep rows it came from.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "models/catalog/resolve.hpp"
#include "models/inference/phase.hpp"
#include "models/io/error.hpp"
#include "planning/plot.hpp"
#include "planning/sweep.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim;
using namespace ringsim::planning;

namespace {

// The sweep's own CSV as the table a front-end would hand over.
Table sweep_table(const SweepGrid& g) {
  std::string text;
  (void)run_points(g, models::Catalog(), {}, 0, [&](const std::string& s) { text += s; });
  Table t;
  t.file = "sweep.csv";
  t.header = sweep_columns(g.has_inference());
  std::istringstream in(text);
  std::string line;
  std::int64_t n = 3;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::string cur;
    bool q = false;
    for (const char c : line) {
      if (c == '"') q = !q;
      else if (c == ',' && !q) f.push_back(cur), cur.clear();
      else cur += c;
    }
    f.push_back(cur);
    t.rows.push_back(f);
    t.lines.push_back(n++);
  }
  return t;
}


}  // namespace

TEST_CASE("plot: ticks are round values that cover the range", "[planning][plot]") {
  for (const auto& [lo, hi] : std::vector<std::pair<double, double>>{{0.83, 1.41}, {0, 487000}, {3.2, 3.3}, {0, 1}}) {
    const auto t = round_ticks(lo, hi);
    REQUIRE(t.size() >= 2);
    CHECK(t.front() <= lo);
    CHECK(t.back() >= hi);
    const double step = t[1] - t[0];
    const double mag = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
    const double m = step / mag;
    CHECK((std::abs(m - 1) < 1e-9 || std::abs(m - 2) < 1e-9 || std::abs(m - 5) < 1e-9));
    for (const double v : t) CHECK(std::abs(v / step - std::round(v / step)) < 1e-6);
  }
  CHECK(tick_label(131072, AxisFormat::Binary, 1) == "128k");
  CHECK(tick_label(1048576, AxisFormat::Binary, 1) == "1M");
  CHECK(tick_label(250000, AxisFormat::Metric, 50000) == "250 k");
  CHECK(tick_label(1.2, AxisFormat::Plain, 0.2) == "1.2");
}

TEST_CASE("plot: the speedup chart is step(baseline) / step(layout) of the sweep's rows", "[planning][plot]") {
  SweepGrid g;
  g.mesh = {{1, 4}, {1, 8}};
  g.n_seq = {32768, 65536, 131072};
  g.layout = ringsim::models::parse_layouts({"contiguous", "striped"});
  const auto t = sweep_table(g);
  PlotRequest r;
  const auto c = line_chart(t, r);
  REQUIRE(c.series.size() == 2);
  CHECK(c.series[0].label == "4 devices, mesh 1x4");
  // Oracle: the rows themselves.
  const models::Catalog cat;
  Evaluator ev(cat, g);
  const auto a = ev.evaluate(g.point(0)), b = ev.evaluate(g.point(1));
  CHECK(c.series[0].x.front() == 32768);
  CHECK(c.series[0].y.front() == Approx(a.step_s / b.step_s).epsilon(1e-5));
}

TEST_CASE("plot: every kind writes an SVG and a PNG, the same bytes each time", "[planning][plot]") {
  SweepGrid g;
  g.mesh = {{1, 4}, {1, 8}, {2, 8}};
  g.n_seq = {32768, 131072};
  g.layout = ringsim::models::parse_layouts({"contiguous", "striped"});
  const auto t = sweep_table(g);
  const test::TempDir dir;
  for (const char* kind : {"speedup", "throughput", "exposed", "memory"}) {
    INFO(kind);
    PlotRequest r;
    r.kind = parse_plot_kind(kind);
    const auto svg = dir.file(std::string(kind) + ".svg"), png = dir.file(std::string(kind) + ".png");
    plot(t, r, svg, png);
    const auto s1 = test::read_file(svg), p1 = test::read_file(png);
    CHECK(s1.starts_with("<?xml"));
    CHECK(p1.substr(1, 3) == "PNG");
    plot(t, r, svg, png);
    // cairo numbers its surfaces and glyph subsets per process (surface1, glyph0-, ...): a second
    // chart in one process differs in those ids only (the command draws one chart per run: same
    // bytes, checked by the CLI test).
    const std::regex ids("(glyph|surface)[0-9]+");
    CHECK(std::regex_replace(test::read_file(svg), ids, "$1") == std::regex_replace(s1, ids, "$1"));
    CHECK(test::read_file(png) == p1);
    CHECK_FALSE(std::filesystem::exists(svg + ".tmp"));
  }
  PlotRequest none;
  none.where = {{"n_seq", "12345"}};
  CHECK_THROWS_AS(plot(t, none, dir.file("x.svg"), ""), models::InputError);
  CHECK_FALSE(std::filesystem::exists(dir.file("x.svg")));
  none.where = {{"nope", "1"}};
  CHECK_THROWS_AS(plot(t, none, dir.file("x.svg"), ""), models::InputError);
  CHECK_THROWS_AS(parse_plot_kind("pie"), models::InputError);
}

TEST_CASE("plot: memory in GiB, a configuration that does not fit is marked, and loses to one that fits",
          "[planning][plot]") {
  SweepGrid g;
  g.model = {"llama2-7b"};
  g.mesh = {{1, 8}};
  g.n_seq = {32768, 262144, 1048576};
  g.layout = ringsim::models::parse_layouts({"striped"});
  g.zero = {models::Sharding::None, models::Sharding::Zero3};
  const auto t = sweep_table(g);
  const models::Catalog cat;
  Evaluator ev(cat, g);
  PlotRequest r;
  r.kind = PlotKind::Memory;
  r.where = {{"zero", "none"}};
  const auto m = line_chart(t, r);
  CHECK(m.y_label == "memory per device (GiB)");
  REQUIRE(m.series.size() == 1);
  const auto& s = m.series.front();
  REQUIRE(s.fits.size() == s.x.size());
  // Oracle: each point's memory and fit are its row's.
  for (std::size_t i = 0; i < s.x.size(); ++i) {
    for (std::int64_t p = 0; p < g.size(); ++p) {
      const auto row = ev.evaluate(g.point(p));
      if (row.point.zero != models::Sharding::None || row.point.spec.n_seq != static_cast<std::int64_t>(s.x[i])) continue;
      CHECK(s.y[i] == Approx(row.memory.total_bytes / (1024.0 * 1024.0 * 1024.0)).epsilon(1e-5));
      CHECK(s.fits[i] == row.memory.fits);
    }
  }
  CHECK(std::find(s.fits.begin(), s.fits.end(), false) != s.fits.end());  // 1M tokens without ZeRO does not fit
  // Throughput over both ZeRO stages: where one fits and the other does not, the point is the one that fits.
  PlotRequest th;
  th.kind = PlotKind::Throughput;
  const auto c = line_chart(t, th);
  REQUIRE(c.series.size() == g.n_seq.size());  // one series per context, each one point at 8 devices
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const auto& series = c.series[k];
    REQUIRE(series.x.size() == 1);
    double best_fit = -1, best_any = -1;
    for (std::int64_t p = 0; p < g.size(); ++p) {
      const auto row = ev.evaluate(g.point(p));
      if (row.point.spec.n_seq != g.n_seq[k]) continue;
      best_any = std::max(best_any, row.tokens_per_s);
      if (row.memory.fits) best_fit = std::max(best_fit, row.tokens_per_s);
    }
    INFO(series.label);
    CHECK(series.fits[0] == (best_fit >= 0));
    CHECK(series.y[0] == Approx(best_fit >= 0 ? best_fit : best_any).epsilon(1e-5));
  }
}

TEST_CASE("plot: the crossover chart is pass-Q over pass-KV against the cache-hit rate, a line per model",
          "[planning][plot][inference]") {
  // Prefills of one context L = P + T at three hit rates, on a ring across nodes: each (T, P) pair
  // its own sweep (a sweep crosses its axes), the rows joined as the script joins them.
  const std::int64_t context = 262144;
  const std::vector<std::string> models_ = {"attn:32:32:128", "attn:32:8:128"};
  Table t;
  std::vector<SweepGrid> grids;
  for (const std::int64_t new_tokens : {context / 2, context / 8, context / 64}) {
    SweepGrid g;
    g.phase = {models::RunPhase::Prefill};
    g.hardware = {"h100-sxm"};
    g.model = models_;
    g.mesh = {{1, 16}};
    g.n_seq = {new_tokens};
    g.cached_tokens = {context - new_tokens};
    g.layout = {models::LayoutSpec::parse("zigzag")};
    g.intervals = false;
    const auto part = sweep_table(g);
    t.header = part.header;
    t.file = part.file;
    t.rows.insert(t.rows.end(), part.rows.begin(), part.rows.end());
    t.lines.insert(t.lines.end(), part.lines.begin(), part.lines.end());
    grids.push_back(g);
  }
  PlotRequest r;
  r.kind = parse_plot_kind("crossover");
  const auto c = line_chart(t, r);
  REQUIRE(c.series.size() == 2);
  CHECK(c.series[0].label == "attn:32:32:128");
  CHECK(c.series[1].label == "attn:32:8:128");
  CHECK(c.reverse_x);
  CHECK(c.x_format == AxisFormat::HitRate);
  REQUIRE(c.references.size() == 1);
  CHECK(c.references[0].y == 1.0);
  // Oracle: each point is its row's new-token share and pass-Q / pass-KV, as the evaluator gives them.
  const models::Catalog cat;
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& s = c.series[k];
    REQUIRE(s.x.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      const auto& g = grids[2 - i];  // x ascending: the smallest share (the last grid) first
      Evaluator ev(cat, g);
      const auto row = ev.evaluate(g.point(static_cast<std::int64_t>(k)));
      REQUIRE(row.inference);
      CHECK(s.x[i] == Approx(static_cast<double>(g.n_seq[0]) / static_cast<double>(context)));
      CHECK(s.y[i] == Approx(row.inference->pass_q_s / row.inference->pass_kv_s).epsilon(1e-5));
    }
  }
  // More KV heads make pass-KV's message larger and leave pass-Q's alone: at every hit rate the
  // ratio of the MHA model is at most the GQA one's.
  for (std::size_t i = 0; i < 3; ++i) CHECK(c.series[0].y[i] <= c.series[1].y[i]);
  CHECK(tick_label(0.125, AxisFormat::HitRate, 1) == "87.5%");
  CHECK(tick_label(1.0, AxisFormat::HitRate, 1) == "0%");

  // Marks: a hit rate on a named series, in its colour; an unknown series or a rate out of range
  // is refused naming the field.
  r.marks = {parse_mark("attn:32:8:128=0.75")};
  const auto marked = line_chart(t, r);
  REQUIRE(marked.marks.size() == 1);
  CHECK(marked.marks[0].series == 1);
  CHECK(marked.marks[0].x == Approx(0.25));
  const test::TempDir dir;
  plot(t, r, dir.file("c.svg"), dir.file("c.png"));
  CHECK(test::read_file(dir.file("c.svg")).starts_with("<?xml"));
  const auto field = [](auto&& f) {
    try {
      f();
    } catch (const models::InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  r.marks = {{"attn:32:4:128", 0.5}};
  CHECK(field([&] { (void)line_chart(t, r); }) == "mark");
  CHECK(field([] { (void)parse_mark("attn:32:8:128=1"); }) == "mark");
  CHECK(field([] { (void)parse_mark("0.5"); }) == "mark");
  PlotRequest other;
  other.marks = {{"attn:32:8:128", 0.5}};
  CHECK(field([&] { (void)line_chart(t, other); }) == "mark");  // speedup: no marks to draw
  // Training rows have no variants to compare.
  SweepGrid train;
  train.n_seq = {32768};
  CHECK(field([&] { (void)line_chart(sweep_table(train), r); }) == "phase");
  CHECK(field([] { (void)parse_plot_kind("pie"); }) == "kind");
}
