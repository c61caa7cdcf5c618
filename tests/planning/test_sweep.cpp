// Sweeps: the grid's order, the same bytes for any thread count, shards that merge into the
// unsharded output, resume after an interruption at any byte, skipped rows, bad sweep files.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/catalog/resolve.hpp"
#include "models/io/error.hpp"
#include "models/analytic/training_step.hpp"
#include "planning/sweep.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim;
using namespace ringsim::planning;
using models::InputError;

namespace {

SweepGrid small_grid() {
  SweepGrid g;
  g.hardware = {"a100-80gb", "h100-sxm"};
  g.model = {"ringattn-1b", "llama3-8b"};
  g.mesh = {{1, 4}, {2, 4}, {1, 8}};
  g.n_seq = {32768, 98304};
  g.layout = ringsim::models::parse_layouts({"contiguous", "striped", "zigzag"});
  g.zero = {models::Sharding::None, models::Sharding::Zero3};
  return g;
}

std::string run_to_string(const SweepGrid& g, std::int64_t threads, Shard shard = {}) {
  SweepOptions o;
  o.threads = threads;
  o.shard = shard;
  std::string out = sweep_preamble(g, shard);
  (void)run_points(g, models::Catalog(), o, 0, [&](const std::string& s) { out += s; });
  return out;
}



}  // namespace

TEST_CASE("sweep: point i decodes the axes in mixed radix, innermost fastest", "[planning][sweep]") {
  const auto g = small_grid();
  REQUIRE(g.size() == 2 * 2 * 3 * 2 * 3 * 2);
  std::int64_t i = 0;
  for (const auto& hw : g.hardware)
    for (const auto& m : g.model)
      for (const auto& mesh : g.mesh)
        for (const auto n : g.n_seq)
          for (const auto& l : g.layout)
            for (const auto z : g.zero) {
              const auto p = g.point(i);
              CHECK(p.index == i);
              CHECK(p.spec.hardware == hw);
              CHECK(p.spec.model == m);
              CHECK((Mesh{p.spec.mp, p.spec.sp} == mesh));
              CHECK(p.spec.n_seq == n);
              CHECK(p.spec.layout == l);
              CHECK(p.zero == z);
              ++i;
            }
}

TEST_CASE("sweep: the same bytes for one thread and for many", "[planning][sweep]") {
  const auto g = small_grid();
  const auto one = run_to_string(g, 1);
  CHECK(run_to_string(g, 2) == one);
  CHECK(run_to_string(g, 7) == one);
  // One row per point, rows in the sweep's order.
  std::istringstream in(one);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  std::int64_t expect = 0;
  while (std::getline(in, line)) CHECK(line.substr(0, line.find(',')) == std::to_string(expect++));
  CHECK(expect == g.size());
  CHECK(one.find("nan") == std::string::npos);
  CHECK(one.find("inf") == std::string::npos);
}

TEST_CASE("sweep: rows of a fitted profile carry the step's interval, intervals off empties it and nothing else",
          "[planning][sweep]") {
  SweepGrid g;
  g.hardware = {"a100-80gb"};  // ring-flash-attn (the default) and jax-blockwise are fitted there
  g.model = {"ringattn-1b"};
  g.impl = {"", "jax-blockwise", "ringsim-tiles"};
  g.mesh = {{1, 4}, {1, 8}};
  g.n_seq = {32768};
  g.layout = ringsim::models::parse_layouts({"contiguous", "zigzag"});
  const auto rows = [](const std::string& csv) {
    std::vector<std::vector<std::string>> out;
    std::istringstream in(csv);
    std::string line;
    std::vector<std::string> header;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      // Fields split at commas outside quotes (a why text may hold commas).
      std::vector<std::string> f(1);
      bool quoted = false;
      for (const char ch : line) {
        if (ch == '"') quoted = !quoted;
        else if (ch == ',' && !quoted) f.emplace_back();
        else f.back() += ch;
      }
      if (header.empty()) header = f;
      else out.push_back(f);
    }
    out.insert(out.begin(), header);
    return out;
  };
  const auto with = rows(run_to_string(g, 2));
  auto off = g;
  off.intervals = false;
  const auto without = rows(run_to_string(off, 2));
  REQUIRE(with.size() == without.size());
  const auto& header = with.front();
  const auto col = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE(it != header.end());
    return static_cast<std::size_t>(it - header.begin());
  };
  const std::size_t status = col("status"), step = col("step_s"), lo = col("step_s_lo"), hi = col("step_s_hi"),
                    impl = col("impl");
  (void)col("tokens_per_s_lo");
  (void)col("tokens_per_s_hi");
  std::int64_t bounded = 0, unbounded = 0;
  for (std::size_t i = 1; i < with.size(); ++i) {
    const auto& a = with[i];
    const auto& b = without[i];
    REQUIRE(a.size() == b.size());
    if (a[status] != "ok") continue;
    // ringsim-tiles runs on spec defaults here (no fit), jax-blockwise's fit is to speedup ratios
    // (no time residuals): no interval either way. ring-flash-attn's is fitted to step times.
    if (a[impl] != "ring-flash-attn") {
      CHECK(a[lo].empty());
      ++unbounded;
    } else {
      REQUIRE_FALSE(a[lo].empty());
      CHECK(std::stod(a[lo]) < std::stod(a[step]));
      CHECK(std::stod(a[step]) < std::stod(a[hi]));
      ++bounded;
    }
    for (std::size_t c = 0; c < a.size(); ++c) {
      // Every interval column (step, tokens/s, attention forward and backward: *_lo, *_hi) is
      // empty without intervals; every other column is the same.
      const bool interval = header[c].ends_with("_lo") || header[c].ends_with("_hi");
      INFO(header[c]);
      if (interval) CHECK(b[c].empty());
      else CHECK(a[c] == b[c]);
    }
  }
  CHECK(bounded > 0);
  CHECK(unbounded > 0);
  // The file form of the switch, and the fingerprint tells the two sweeps apart.
  auto j = g.to_json();
  CHECK_FALSE(j.contains("intervals"));
  j["intervals"] = false;
  CHECK_FALSE(SweepGrid::from_json(j, "s.json").intervals);
  CHECK(SweepGrid::from_json(j, "s.json").fingerprint() != g.fingerprint());
  j["intervals"] = "no";
  CHECK_THROWS_AS(SweepGrid::from_json(j, "s.json"), InputError);
}

TEST_CASE("sweep: combinations that do not go together are skipped rows with the reason", "[planning][sweep]") {
  SweepGrid g;
  g.mesh = {{1, 8}};
  g.n_seq = {98304, 100001};
  g.layout = ringsim::models::parse_layouts({"striped", "zigzag"});
  g.impl = {"jax-blockwise"};  // offers contiguous and striped only
  const models::Catalog cat;
  Evaluator ev(cat, g);
  const auto striped = ev.evaluate(g.point(0));
  const auto zigzag = ev.evaluate(g.point(1));
  const auto odd = ev.evaluate(g.point(2));  // 100001 tokens do not split over 8 devices
  CHECK(striped.ok);
  CHECK_FALSE(zigzag.ok);
  CHECK(zigzag.note.find("zigzag") != std::string::npos);
  CHECK_FALSE(odd.ok);
  CHECK(odd.note.find("n_seq") != std::string::npos);
  std::string row;
  append_csv_row(zigzag, row);
  CHECK(row.find(",skipped,") != std::string::npos);
  // As many fields as columns (commas inside the quoted note do not count).
  long separators = 0;
  bool quoted = false;
  for (const char c : row) {
    if (c == '"') quoted = !quoted;
    separators += c == ',' && !quoted;
  }
  CHECK(separators == static_cast<long>(sweep_columns().size() - 1));
  std::string ok_row;
  append_csv_row(striped, ok_row);
  CHECK(std::count(ok_row.begin(), ok_row.end(), ',') == static_cast<long>(sweep_columns().size() - 1));
}

TEST_CASE("sweep: pipeline stages and micro-batches are axes, each row counted as predict counts it", "[planning][sweep]") {
  SweepGrid g;
  g.hardware = {"h100-sxm"};
  g.model = {"llama2-7b"};
  g.mesh = {{1, 2}};
  g.dp = {2};
  g.n_seq = {16384};
  g.layout = ringsim::models::parse_layouts({"zigzag"});
  g.zero = {models::Sharding::Zero1};
  g.recompute = {models::Recompute::None};
  g.pp = {1, 2, 3};
  g.micro_batches = {1, 8};
  g.intervals = false;
  const models::Catalog cat;
  Evaluator ev(cat, g);
  REQUIRE(g.size() == 6);
  for (std::int64_t i = 0; i < g.size(); ++i) {
    const auto p = g.point(i);
    const auto r = ev.evaluate(p);
    INFO("pp " << p.pipeline.stages << ", " << p.pipeline.micro_batches << " micro-batches");
    if (p.pipeline.stages == 3) {  // 32 layers do not split over 3 stages: a skipped row naming pp
      CHECK_FALSE(r.ok);
      CHECK(r.note_field == "pp");
      continue;
    }
    REQUIRE(r.ok);
    CHECK(r.devices() == p.pipeline.stages * 2 * 1 * 2);
    // The row's step is the training step of its point's prediction (models::training_step).
    models::TrainingOptions o;
    o.dp = 2;
    o.zero = models::Sharding::Zero1;
    o.recompute = models::Recompute::None;
    o.pipeline = p.pipeline;
    auto s = resolve_point(p, cat);
    const auto t = models::training_step(s, models::predict(s), o);
    CHECK(r.step_s == Approx(t.step_s).epsilon(1e-12));
    CHECK(r.tokens_per_s == Approx(2.0 * static_cast<double>(p.pipeline.micro_batches) * 16384 / r.step_s).epsilon(1e-12));
    CHECK((r.pipeline_bubble > 0) == p.pipeline.pipelined());
    std::string row;
    append_csv_row(r, row);
    CHECK(std::count(row.begin(), row.end(), ',') == static_cast<long>(sweep_columns().size() - 1));
  }
  // Defaults stay out of the sweep file's JSON: outputs written before these axes keep their
  // fingerprint; a pipeline axis changes it.
  const SweepGrid plain;
  CHECK_FALSE(plain.to_json().contains("pp"));
  CHECK_FALSE(plain.to_json().contains("micro_batches"));
  CHECK(g.to_json().at("pp").size() == 3);
  // The file's fields: what is wrong is named.
  const auto field = [](const char* text) {
    try {
      (void)SweepGrid::from_json(nlohmann::json::parse(text), "s.json");
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  CHECK(field(R"({"pp": [1, 2], "micro_batches": 4, "pp_schedule": ["1f1b", "interleaved:2"]})") == "none");
  CHECK(field(R"({"pp": 0})") == "pp");
  CHECK(field(R"({"micro_batches": -1})") == "micro_batches");
  CHECK(field(R"({"pp_schedule": "gpipe"})") == "pp_schedule");
}

TEST_CASE("sweep: shards merged are the unsharded sweep, byte for byte", "[planning][sweep]") {
  const auto g = small_grid();
  const test::TempDir dir;
  const auto whole = run_to_string(g, 2);
  for (const std::int64_t n : {2, 3, 5, 144, 150}) {
    std::vector<std::string> paths;
    for (std::int64_t k = n; k >= 1; --k) {  // any order
      paths.push_back(dir.file("shard" + std::to_string(k) + ".csv"));
      test::write_file(paths.back(), run_to_string(g, 2, Shard{k, n}));
    }
    CHECK(merge_shards(paths) == whole);
    // A missing shard, a repeated one, or another sweep's shard is an input error.
    auto missing = paths;
    missing.pop_back();
    CHECK_THROWS_AS(merge_shards(missing), InputError);
    auto repeated = paths;
    repeated.back() = repeated.front();
    CHECK_THROWS_AS(merge_shards(repeated), InputError);
  }
  auto other = g;
  other.n_seq = {65536};
  test::write_file(dir.file("a.csv"), run_to_string(g, 1, Shard{1, 2}));
  test::write_file(dir.file("b.csv"), run_to_string(other, 1, Shard{2, 2}));
  CHECK_THROWS_AS(merge_shards({dir.file("a.csv"), dir.file("b.csv")}), InputError);
}

TEST_CASE("sweep: --resume after an interruption at any byte loses nothing and duplicates nothing",
          "[planning][sweep]") {
  const auto g = small_grid();
  const test::TempDir dir;
  const auto path = dir.file("sweep.csv");
  SweepOptions o;
  o.threads = 2;
  (void)run_sweep_to_file(g, models::Catalog(), path, false, o);
  const auto whole = test::read_file(path);
  REQUIRE(whole == run_to_string(g, 1));
  // Cut the file where an interruption could have left it: inside the preamble, inside a row,
  // at a row's end; resume must give the whole sweep again.
  std::mt19937_64 rng(17);
  std::vector<std::size_t> cuts = {0, 10, whole.find('\n') + 1, whole.size() - 1, whole.size()};
  for (int i = 0; i < 12; ++i) cuts.push_back(std::uniform_int_distribution<std::size_t>(0, whole.size())(rng));
  for (const auto cut : cuts) {
    INFO("cut at byte " << cut << " of " << whole.size());
    test::write_file(path, whole.substr(0, cut));
    const auto sum = run_sweep_to_file(g, models::Catalog(), path, true, o);
    CHECK(test::read_file(path) == whole);
    CHECK(sum.resumed + sum.written == g.size());
  }
  // Shards resume the same way.
  const auto shard_path = dir.file("shard.csv");
  o.shard = Shard{2, 3};
  (void)run_sweep_to_file(g, models::Catalog(), shard_path, false, o);
  const auto shard_whole = test::read_file(shard_path);
  test::write_file(shard_path, shard_whole.substr(0, shard_whole.size() / 2));
  (void)run_sweep_to_file(g, models::Catalog(), shard_path, true, o);
  CHECK(test::read_file(shard_path) == shard_whole);
  // Another sweep's file is refused, not overwritten.
  auto other = g;
  other.n_seq = {65536};
  o.shard = {};
  CHECK_THROWS_AS(run_sweep_to_file(other, models::Catalog(), path, true, o), InputError);
  CHECK(test::read_file(path) == whole);
}

TEST_CASE("sweep: --resume refuses a kept row that was edited or holds nan, and merge refuses nan", "[planning][sweep]") {
  const auto g = small_grid();
  const test::TempDir dir;
  const auto path = dir.file("sweep.csv");
  // The sweep's bytes (the resume test above checks that the file written equals them).
  const auto whole = run_to_string(g, 2);
  SweepOptions o;
  o.threads = 2;
  // The step_s cell of the row of point `row`: after ",ok,".
  const auto edit = [&](std::int64_t row, const std::string& value) {
    auto text = whole;
    const auto at = text.find("\n" + std::to_string(row) + ",");
    const auto ok = text.find(",ok,", at);
    REQUIRE(ok < text.find('\n', at + 1));  // the row itself is a computed row
    const auto end = text.find(',', ok + 4);
    text.replace(ok + 4, end - ok - 4, value);
    return text;
  };
  const auto rows = static_cast<std::int64_t>(g.size());
  REQUIRE(rows >= 4);
  for (const std::int64_t row : {std::int64_t{0}, rows / 2, rows - 2}) {
    for (const std::string value : {"nan", "-inf", "0.123456", "1e-300"}) {
      INFO("row " << row << " step_s = " << value);
      // Cut after the edited row (the last row cut off): resume keeps the edited row, and must not.
      auto text = edit(row, value);
      text.resize(text.rfind('\n', text.size() - 2) + 1);
      test::write_file(path, text);
      CHECK_THROWS_AS(run_sweep_to_file(g, models::Catalog(), path, true, o), InputError);
      CHECK(test::read_file(path) == text);  // refused, not rewritten
    }
  }
  // The rows as the sweep wrote them resume.
  test::write_file(path, whole.substr(0, whole.rfind('\n', whole.size() - 2) + 1));
  (void)run_sweep_to_file(g, models::Catalog(), path, true, o);
  CHECK(test::read_file(path) == whole);
  // merge: structure alone is not enough either.
  test::write_file(dir.file("whole.csv"), whole);
  CHECK(merge_shards({dir.file("whole.csv")}) == whole);
  for (const std::string value : {"nan", "inf", "-Infinity"}) {
    test::write_file(dir.file("bad.csv"), edit(1, value));
    CHECK_THROWS_AS(merge_shards({dir.file("bad.csv")}), InputError);
  }
}

TEST_CASE("sweep: the sweep file names the field that is wrong", "[planning][sweep]") {
  const models::Catalog cat;
  const auto field_of = [&](const std::string& text) -> std::string {
    try {
      SweepGrid::from_json(nlohmann::json::parse(text), "f.json").validate(cat, "f.json");
    } catch (const InputError& e) {
      CHECK(e.file() == "f.json");
      return e.field();
    }
    return "no error";
  };
  CHECK(field_of(R"({"hardware": ["a100-80gb", "nope"]})") == "hardware");
  CHECK(field_of(R"({"model": "nope"})") == "model");
  CHECK(field_of(R"({"mesh": ["2x"]})") == "mesh[0]");
  CHECK(field_of(R"({"n_seq": [1024, -5]})") == "n_seq[1]");
  CHECK(field_of(R"({"n_seq": []})") == "n_seq");
  CHECK(field_of(R"({"n_seq": ["8192"]})") == "n_seq[0]");  // a string is not a count
  CHECK(field_of(R"({"dp": "2"})") == "dp");
  CHECK(field_of(R"({"layout": "diagonal"})") == "layout");
  CHECK(field_of(R"({"impl": "nope"})") == "impl");
  CHECK(field_of(R"({"cp": "nope"})") == "cp");
  CHECK(field_of(R"({"zero": 4})") == "zero");
  CHECK(field_of(R"({"recompute": "some"})") == "recompute");
  CHECK(field_of(R"({"topology": "ring:8"})") == "topology");
  CHECK(field_of(R"({"engine": "fast"})") == "engine");
  CHECK(field_of(R"({"profile": ["a", "b"]})") == "profile");
  CHECK(field_of(R"({"kv_buffers": 0})") == "kv_buffers");
  CHECK(field_of(R"({"layouts": ["striped"]})") == "layouts");
  CHECK(field_of(R"({"mesh": ["1x8"], "sp": [8]})") == "mesh");
  CHECK(field_of(R"([1, 2])") == "sweep");
  CHECK(field_of(R"({"n_seq": [1,2,3,4,5,6,7,8,9,10], "tile": ["1x1","1x2","1x3","1x4","1x5","1x6","1x7","1x8","1x9","1x10"],
                     "batch": [1,2,3,4,5,6,7,8,9,10], "dp": [1,2,3,4,5,6,7,8,9,10], "mesh": ["1x1","1x2","1x3","1x4","1x5","1x6","1x7","1x8","1x9","1x10"],
                     "hardware": ["a100-80gb","a100-80gb","a100-80gb","a100-80gb","a100-80gb","a100-80gb","a100-80gb","a100-80gb","a100-80gb","a100-80gb"],
                     "model": ["ringattn-1b","ringattn-1b","ringattn-1b","ringattn-1b","ringattn-1b","ringattn-1b","ringattn-1b","ringattn-1b","ringattn-1b","ringattn-1b"],
                     "mask": ["causal","causal","causal","causal","causal","causal","causal","causal","causal","causal"],
                     "layout": ["striped","striped","striped","striped","striped","striped","striped","striped","striped","striped"],
                     "cp": ["ring","ring","ring","ring","ring","ring","ring","ring","ring","ring"],
                     "impl": ["default","default","default","default","default","default","default","default","default","default"],
                     "topology": ["default","default","default","default","default","default","default","default","default","default"],
                     "zero": [0,1,2,3,0,1,2,3,0,1]})") == "sweep");
  CHECK(field_of(R"({"hardware": "a100-80gb", "mesh": "1x8", "n_seq": 4096, "layout": "striped"})") == "no error");
}

TEST_CASE("sweep: a shard is K/N with 1 <= K <= N", "[planning][sweep]") {
  CHECK(Shard::parse("3/8").k == 3);
  CHECK(Shard::parse("3/8").points(20) == 3);  // 2, 10, 18
  CHECK(Shard::parse("8/8").points(7) == 0);
  CHECK_THROWS_AS(Shard::parse("0/4"), InputError);
  CHECK_THROWS_AS(Shard::parse("5/4"), InputError);
  CHECK_THROWS_AS(Shard::parse("2"), InputError);
}
