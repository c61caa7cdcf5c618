// sweep, merge, plan and check as a user runs them: shards merged give the unsharded bytes, a
// killed sweep resumed loses and repeats nothing, plan's answer is the best row of the sweep it
// searched, check flags planted bad rows and no published one, bad files exit 2 with one line.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <map>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/cli_run.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim::test;

namespace {


std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

// Fields of one CSV line (quotes as the sweep writes them).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> f;
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else quoted = !quoted;
    } else if (c == ',' && !quoted) {
      f.push_back(cur), cur.clear();
    } else {
      cur += c;
    }
  }
  f.push_back(cur);
  return f;
}

const char* kSweep = R"({
  "hardware": ["a100-80gb", "h100-sxm"],
  "model": ["ringattn-1b", "llama3-8b"],
  "mesh": ["1x4", "2x4", "1x8"],
  "n_seq": [32768, 131072],
  "layout": ["contiguous", "striped", "zigzag"],
  "zero": [0, 3],
  "recompute": ["none", "full"]
})";

}  // namespace

TEST_CASE("cli sweep: shards merged are the unsharded sweep, byte for byte", "[cli][sweep]") {
  const TempDir dir;
  write_file(dir.file("grid.json"), kSweep);
  const auto whole = run("sweep " + dir.file("grid.json") + " -o " + dir.file("whole.csv"));
  REQUIRE(whole.code == 0);
  CHECK(whole.err.empty());  // no progress bar when stderr is not a terminal
  std::string shards;  // in reverse order: merge takes any
  for (int k = 4; k >= 1; --k) {
    const auto r = run("sweep " + dir.file("grid.json") + " --shard " + std::to_string(k) + "/4 --threads 1 -o " +
                       dir.file(std::to_string(k) + "-of-4.csv"));
    REQUIRE(r.code == 0);
    shards += dir.file(std::to_string(k) + "-of-4.csv");
    shards += ' ';
  }
  const auto m = run("merge " + shards + "-o " + dir.file("merged.csv"));
  REQUIRE(m.code == 0);
  CHECK(read_file(dir.file("merged.csv")) == read_file(dir.file("whole.csv")));
  CHECK(split_lines(read_file(dir.file("whole.csv"))).size() == 2 + 2 * 2 * 3 * 2 * 3 * 2 * 2);
  // Flags give the same sweep as the file.
  const auto flags = run("sweep --hardware a100-80gb,h100-sxm --model ringattn-1b,llama3-8b --mesh 1x4,2x4,1x8 --seq "
                         "32768,131072 --layout contiguous,striped,zigzag --zero 0,3 --recompute none,full");
  REQUIRE(flags.code == 0);
  CHECK(flags.out == read_file(dir.file("whole.csv")));
  expect_bad("merge " + dir.file("1-of-4.csv") + " " + dir.file("2-of-4.csv"), "shard 3/4 is missing");
}

TEST_CASE("cli sweep: killed mid-way and resumed, it loses nothing and repeats nothing", "[cli][sweep]") {
  const TempDir dir;
  // Simulated points take milliseconds each, so the kill lands mid-sweep.
  write_file(dir.file("grid.json"), R"({"engine": "des", "hardware": "a100-80gb", "model": ["ringattn-1b", "llama2-7b"],
    "mesh": ["1x4", "1x8", "2x4"], "n_seq": [65536, 131072, 262144, 524288], "layout": ["contiguous", "striped"]})");
  const auto out = dir.file("sweep.csv");
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    execl(RINGSIM_BIN, RINGSIM_BIN, "sweep", dir.file("grid.json").c_str(), "-o", out.c_str(), "--threads", "1",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for a few rows (bounded), then kill without warning.
  for (int i = 0; i < 6000 && split_lines(read_file(out)).size() < 6; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const auto partial = split_lines(read_file(out)).size();
  const auto resumed = run("sweep " + dir.file("grid.json") + " --resume -o " + out);
  REQUIRE(resumed.code == 0);
  const auto fresh = run("sweep " + dir.file("grid.json") + " -o " + dir.file("fresh.csv"));
  REQUIRE(fresh.code == 0);
  INFO("rows before the kill: " << partial);
  CHECK(read_file(out) == read_file(dir.file("fresh.csv")));
  // Resuming a finished sweep changes nothing; another sweep's file is refused.
  CHECK(run("sweep " + dir.file("grid.json") + " --resume -o " + out).code == 0);
  CHECK(read_file(out) == read_file(dir.file("fresh.csv")));
  write_file(dir.file("other.json"), R"({"engine": "des", "n_seq": 8192})");
  expect_bad("sweep " + dir.file("other.json") + " --resume -o " + out, "not this sweep's output");
  CHECK(read_file(out) == read_file(dir.file("fresh.csv")));
}

TEST_CASE("cli plan: the answer is the best row of the equivalent sweep", "[cli][plan]") {
  const TempDir dir;
  // Narrowed axes (two strategies, two implementations, ZeRO 0 and 3, no and full recomputation,
  // contexts to 2^18): the property does not depend on the grid's size, and the suite stays fast
  // on a loaded CI machine and in the sanitizer build (the full default search is 6e6 points).
  const std::string common = "--hardware a100-80gb --model llama2-7b --seq 65536 --devices 16 --tile default,512x512 "
                             "--cp ring,allgather --impl jax-blockwise,ringsim-tiles --zero 0,3 --recompute none,full "
                             "--max-context 262144 ";
  for (const std::string goal : {"max-throughput", "min-devices --target-tokens-per-s 20000", "max-context"}) {
    INFO(goal);
    const auto plan = run("plan " + common + "--goal " + goal + " --format csv --top 3 --emit-sweep " + dir.file("g.json") +
                          " -o " + dir.file("plan.csv"));
    REQUIRE(plan.code == 0);
    REQUIRE(run("sweep " + dir.file("g.json") + " -o " + dir.file("rows.csv")).code == 0);
    const auto rows = split_lines(read_file(dir.file("rows.csv")));
    const auto header = fields(rows.at(1));
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
    // The best feasible row by a plain scan of the sweep's CSV.
    double best_metric = -1e300;
    std::map<std::string, std::string> by_index;
    for (std::size_t i = 2; i < rows.size(); ++i) {
      const auto f = fields(rows[i]);
      by_index[f[col["index"]]] = rows[i];
      if (f[col["status"]] != "ok" || f[col["fits_memory"]] != "true" || std::stoll(f[col["devices"]]) > 16) continue;
      const double tps = std::stod(f[col["tokens_per_s"]]);
      double metric = tps;
      if (goal.starts_with("min-devices")) {
        if (tps < 20000) continue;
        metric = -std::stod(f[col["devices"]]);
      } else if (goal == "max-context") {
        metric = std::stod(f[col["n_seq"]]);
      }
      best_metric = std::max(best_metric, metric);
    }
    const auto plan_rows = split_lines(read_file(dir.file("plan.csv")));
    REQUIRE(plan_rows.size() >= 2);
    const auto first = fields(plan_rows[1]);
    REQUIRE(first[0] == "1");
    // The plan's row is the sweep's row of that index, byte for byte (rank and why aside).
    const std::string row_text = plan_rows[1].substr(plan_rows[1].find(',') + 1);
    const auto& sweep_row = by_index.at(first[1]);
    CHECK(row_text.substr(0, sweep_row.size()) == sweep_row);
    const auto f = fields(sweep_row);
    double metric = std::stod(f[col["tokens_per_s"]]);
    if (goal.starts_with("min-devices")) metric = -std::stod(f[col["devices"]]);
    if (goal == "max-context") metric = std::stod(f[col["n_seq"]]);
    CHECK(metric == best_metric);
  }
  // The table says what its +- column is (the 90 % interval where the profile has a fitted
  // uncertainty, - where it has none: derived and spec-default profiles).
  const auto table = run("plan " + common + "--top 2");
  REQUIRE(table.code == 0);
  CHECK(table.out.find("+-: half width of the 90 % prediction interval") != std::string::npos);
  CHECK(table.out.find("why:") != std::string::npos);
  const auto json = run("plan " + common + "--top 2 --format json");
  REQUIRE(json.code == 0);
  CHECK(json.out.find("\"interval\"") != std::string::npos);
}

TEST_CASE("cli sweep and plan: a bad file is one line naming the field, exit 2, no output file", "[cli][plan][sweep]") {
  const TempDir dir;
  write_file(dir.file("bad.json"), R"({"hardware": "a100-80gb", "n_seq": [4096, "many"]})");
  expect_bad("sweep " + dir.file("bad.json") + " -o " + dir.file("out.csv"), "n_seq[1]");
  CHECK_FALSE(std::filesystem::exists(dir.file("out.csv")));
  write_file(dir.file("typo.json"), R"({"layouts": ["striped"]})");
  expect_bad("sweep " + dir.file("typo.json"), "layouts");
  write_file(dir.file("broken.json"), R"({"hardware": )");
  expect_bad("sweep " + dir.file("broken.json"), "broken.json");
  expect_bad("sweep --shard 5/4", "shard");
  write_file(dir.file("plan.json"), R"({"goal": "min-devices", "devices": 8})");
  expect_bad("plan " + dir.file("plan.json") + " -o " + dir.file("plan.out"), "target_tokens_per_s");
  CHECK_FALSE(std::filesystem::exists(dir.file("plan.out")));
  write_file(dir.file("plan2.json"), R"({"goal": "max-throughput", "devices": 8, "layout": ["striped", "diagonal"]})");
  expect_bad("plan " + dir.file("plan2.json"), "layout");
  expect_bad("plan --goal cheapest", "goal");
}

TEST_CASE("cli check: planted bad rows are flagged with the bound, published measurements are not", "[cli][check]") {
  const TempDir dir;
  write_file(dir.file("m.csv"),
        "hardware,devices,n_seq,batch,heads,kv_heads,head_dim,causal,pass,cp,layout,ring_degree,ulysses_degree,iter_per_s\n"
        "a100-80gb,8,65536,1,32,8,128,true,fwd+bwd,ring,zigzag,8,1,10.6\n"    // line 2: ring-flash-attention's figure
        "a100-80gb,8,65536,1,32,8,128,true,fwd+bwd,ring,zigzag,8,1,40\n"      // 3: above peak FLOP/s
        "a100-80gb,8,131072,2,32,32,32,true,fwd,ring,striped,8,1,90\n"        // 4: above peak FLOP/s
        "a100-80gb,8,65536,1,32,8,128,true,fwd,ulysses,contiguous,1,8,10\n"   // 5: fine
        "a100-80gb,8,65536,1,32,4,128,true,fwd,ulysses,contiguous,1,8,10\n"   // 6: Ulysses above the K/V heads
        "a100-80gb,8,65544,1,32,8,128,true,fwd,ring,zigzag,8,1,10\n"          // 7: not divisible in 16 chunks
        "a100-80gb,8,512,1,32,32,128,true,fwd,ring,contiguous,8,1,60000\n"    // 8: above the link's bandwidth
        "a100-80gb,8,65536,1,32,8,128,true,fwd,ring,contiguous,8,1,OOM\n");   // 9: nothing to check
  const auto r = run("check " + dir.file("m.csv"));
  REQUIRE(r.code == 0);
  const auto out = split_lines(r.out);
  REQUIRE(out.size() == 5);
  CHECK(out[0].find("m.csv:3: ") != std::string::npos);
  CHECK(out[0].find("above a100-80gb's dense peak 312 TFLOP/s") != std::string::npos);
  CHECK(out[1].find("m.csv:4: ") != std::string::npos);
  CHECK(out[2].find("m.csv:6: Ulysses degree 8 is above the 4 K/V heads") != std::string::npos);
  CHECK(out[3].find("m.csv:7: n_seq 65544 is not divisible") != std::string::npos);
  CHECK(out[4].find("m.csv:8: ") != std::string::npos);
  CHECK(out[4].find("link") != std::string::npos);
  CHECK(run("check --fail-on-findings " + dir.file("m.csv")).code == 1);
  // Training measurements: tokens/s of a whole model.
  write_file(dir.file("t.csv"), "hardware,model,mp,sp,n_seq,tokens_per_s\na100-80gb,llama3-8b,1,8,65536,3000\n"
                           "a100-80gb,llama3-8b,1,8,65536,30000\n");
  const auto t = run("check " + dir.file("t.csv"));
  CHECK(t.out.find("t.csv:2:") == std::string::npos);
  CHECK(t.out.find("t.csv:3: implies") != std::string::npos);
  for (const char* f : {"attention_throughput_published.csv", "striped_paper_calibration.csv", "paper_unmeasured_configs.csv",
                        "nemo_llama2_7b_cp_runs.csv"}) {
    const auto p = run(std::string("check ") + RINGSIM_TEST_DATA + "/" + f);
    INFO(f << ": " << p.out);
    CHECK(p.code == 0);
    CHECK(p.out.empty());
  }
  write_file(dir.file("tf.csv"), "hardware,model,mp,sp,n_seq,tflops_per_gpu\nh100-sxm,llama2-7b,8,32,1048576,1200\n");
  CHECK(run("check " + dir.file("tf.csv")).out.find("tf.csv:2: reports 1200 TFLOP/s") != std::string::npos);
  write_file(dir.file("bad.csv"), "hardware,n_seq,model,iter_per_s\na100-80gb,-4,llama3-8b,3\n");
  expect_bad("check " + dir.file("bad.csv"), "bad.csv:2");
}

TEST_CASE("cli plot: SVG and PNG from a sweep, the same bytes on every run, bad requests exit 2", "[cli][plot]") {
  const TempDir dir;
  REQUIRE(run("sweep --mesh 1x4,1x8 --seq 32768,65536,131072 -o " + dir.file("s.csv")).code == 0);
  for (const char* kind : {"speedup", "throughput", "exposed", "memory"}) {
    INFO(kind);
    const std::string args = "plot " + dir.file("s.csv") + " --kind " + kind + " --svg " + dir.file("a.svg") + " --png " +
                             dir.file("a.png");
    REQUIRE(run(args).code == 0);
    const auto svg = read_file(dir.file("a.svg")), png = read_file(dir.file("a.png"));
    REQUIRE(run(args).code == 0);
    CHECK(read_file(dir.file("a.svg")) == svg);
    CHECK(read_file(dir.file("a.png")) == png);
  }
  expect_bad("plot " + dir.file("s.csv") + " --kind pie --svg " + dir.file("b.svg"), "kind");
  expect_bad("plot " + dir.file("s.csv") + " --where n_seq=7 --svg " + dir.file("b.svg"), "where");
  expect_bad("plot " + dir.file("s.csv"), "--svg");
  CHECK_FALSE(std::filesystem::exists(dir.file("b.svg")));
}

TEST_CASE("cli agreement: Kendall's tau-b of predict's speedups against the Striped paper's", "[cli][agreement]") {
  const TempDir dir;
  REQUIRE(run(std::string("predict --scenarios ") + RINGSIM_TEST_DATA + "/striped_paper_calibration.csv --format csv -o " +
              dir.file("p.csv"))
              .code == 0);
  const auto r = run("agreement " + dir.file("p.csv") + " --measured speedup --predicted pred_speedup --format json");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"items\": 45") != std::string::npos);
  // The same column against itself agrees perfectly.
  CHECK(run("agreement " + dir.file("p.csv") + " --measured speedup --predicted speedup").out.find("tau-b 1.000") !=
        std::string::npos);
  expect_bad("agreement " + dir.file("p.csv") + " --measured speedup --predicted nope", "nope");
}

TEST_CASE("cli plan-docs: a histogram planned per bucket, the same bytes for any thread count", "[cli][plan-docs]") {
  const TempDir dir;
  // A histogram (length,count) and single documents: short ones and a long tail.
  write_file(dir.file("lengths.csv"), "length,count\n100,300\n900,80\n3000,20\n7000,3\n20000\n");
  const std::string base = "plan-docs " + dir.file("lengths.csv") + " --seq 8192 --mesh 1x4 --buckets 1024,4096";
  const auto one = run(base + " --format csv --threads 1");
  REQUIRE(one.code == 0);
  const auto two = run(base + " --format csv --threads 2");
  REQUIRE(two.code == 0);
  CHECK(one.out == two.out);
  const auto rows = split_lines(one.out);
  REQUIRE(rows.size() > 2);
  CHECK(rows[0].starts_with("bucket,longest_lo,longest_hi,rank,cp,layout,impl,kernel,status"));
  // Every bucket has a rank-1 row, and the whole dataset's rank 1 is there.
  std::map<std::string, int> firsts;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = fields(rows[i]);
    REQUIRE(f.size() == fields(rows[0]).size());
    if (f[3] == "1") ++firsts[f[0]];
    // Every row that runs names the kernel its library calls on this GPU.
    if (f[8] == "ok") CHECK(!f[7].empty());
  }
  CHECK(firsts.count("all") == 1);
  CHECK(firsts.count("1") == 1);
  const auto table = run(base);
  REQUIRE(table.code == 0);
  CHECK(table.out.find("recommended") != std::string::npos);
  CHECK(table.out.find("why: ") != std::string::npos);
  CHECK(table.out.find("padding    memory") != std::string::npos);  // each candidate's memory per device
  const auto json = run(base + " --format json -o " + dir.file("plan.json"));
  REQUIRE(json.code == 0);
  CHECK(json.out.empty());
  CHECK(read_file(dir.file("plan.json")).find("\"ranking\"") != std::string::npos);
  // A generated sample works the same way.
  CHECK(run("plan-docs lognormal:2000:1.5:3:300 --seq 16384 --mesh 1x4 --format csv").code == 0);
}

TEST_CASE("cli plan-docs: a tile check the full model cannot count is reported, the plan still printed", "[cli][plan-docs]") {
  // docs/planning.md's fourth example: the document-major layout's exact tile count at 128 x 128
  // is past the per-scenario bound (refused from an estimate, before counting). The top 8, so that
  // ringsim-tiles' rows, behind TransformerEngine's, are printed with their label.
  const TempDir dir;
  write_file(dir.file("lengths.csv"), "length,count\n120,20000\n350,30000\n900,20000\n2500,6000\n9000,800\n40000,120\n110000,20\n");
  const std::string base = "plan-docs " + dir.file("lengths.csv") +
                           " --hardware h100-sxm --model llama3-8b --seq 131072 --mesh 1x16 --packing first-fit-shuffle --top 8 --tile-check 1";
  // By default only production libraries are chosen: no library runs the document-major ring, so
  // that pair is skipped, saying why; --include-research lets ringsim's reference kernels run it.
  const auto deployable = run(base + " --list-skipped");
  REQUIRE(deployable.code == 0);
  CHECK(deployable.out.find("ringsim-tiles") == std::string::npos);
  CHECK(deployable.out.find("no production library offers strategy ring with layout doc-zigzag-docmajor") !=
        std::string::npos);
  const auto table = run(base + " --include-research");
  INFO(table.err);
  REQUIRE(table.code == 0);
  CHECK(table.out.find("recommended") != std::string::npos);
  CHECK(table.out.find("not checked: ring doc-zigzag-docmajor") != std::string::npos);
  CHECK(table.out.find("ringsim-tiles [reference; spec defaults]") != std::string::npos);
  const auto json = run(base + " --include-research --format json");
  REQUIRE(json.code == 0);
  CHECK(json.out.find("\"not_checked\"") != std::string::npos);
}

TEST_CASE("cli plan-docs: bad input is one line naming what is wrong, exit 2, no output file", "[cli][plan-docs]") {
  const TempDir dir;
  write_file(dir.file("bad.csv"), "100\n200,x\n");
  expect_bad("plan-docs " + dir.file("bad.csv") + " --seq 8192 -o " + dir.file("out.csv"), "bad.csv:2");
  CHECK_FALSE(std::filesystem::exists(dir.file("out.csv")));
  write_file(dir.file("ok.csv"), "100\n200\n");
  expect_bad("plan-docs --seq 8192", "lengths");
  expect_bad("plan-docs " + dir.file("missing.csv"), "missing.csv");
  expect_bad("plan-docs " + dir.file("ok.csv") + " --buckets 4096,1024 --seq 8192", "buckets");
  expect_bad("plan-docs " + dir.file("ok.csv") + " --buckets 8192 --seq 8192", "buckets");
  expect_bad("plan-docs " + dir.file("ok.csv") + " --mesh 4", "mesh");
  expect_bad("plan-docs " + dir.file("ok.csv") + " --packing best-fit", "packing");
  expect_bad("plan-docs " + dir.file("ok.csv") + " --zero 5", "zero");
  expect_bad("plan-docs " + dir.file("ok.csv") + " --layout cyclic:2", "layout");
  expect_bad("plan-docs " + dir.file("ok.csv") + " --cp ring,spiral", "cp");
  expect_bad("plan-docs lognormal:100:1:1", "lognormal");
  expect_bad("plan-docs " + dir.file("ok.csv") + " --seq 67108864", "seq");
}

namespace {

// The first data row of a CSV text ('#' lines skipped), by column name.
std::map<std::string, std::string> first_row(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line) && rows.size() < 2) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f(1);
    bool q = false;
    for (const char c : line) {
      if (c == '"') q = !q;
      else if (c == ',' && !q) f.emplace_back();
      else f.back() += c;
    }
    rows.push_back(f);
  }
  std::map<std::string, std::string> out;
  if (rows.size() < 2) return out;
  for (std::size_t i = 0; i < rows[0].size() && i < rows[1].size(); ++i) out[rows[0][i]] = rows[1][i];
  return out;
}

}  // namespace

TEST_CASE("cli predict: --dp, --zero, --recompute and --topology give the sweep's step, throughput and memory",
          "[cli][plan]") {
  const std::string scenario = "--hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 65536 --layout zigzag --impl ring-flash-attn ";
  for (const std::string options : {"--dp 2 --zero 1 --recompute full", "--dp 4 --zero 3 --recompute selective",
                                    "--dp 1 --zero 0 --recompute none", "--zero 3 --recompute selective --topology nodes:2x4",
                                    "--dp 2 --zero 2 --recompute full --topology nodes:4x4 --engine des",
                                    "--zero 3 --recompute attention", "--zero 1 --offload-optimizer --headroom 0",
                                    "--dp 2 --no-sequence-parallel --headroom 6 --precision bf16"}) {
    INFO(options);
    const auto p = run("predict " + scenario + options + " --format csv");
    REQUIRE(p.code == 0);
    const auto s = run("sweep " + scenario + options);
    REQUIRE(s.code == 0);
    const auto a = first_row(p.out), b = first_row(s.out);
    REQUIRE(b.at("status") == "ok");
    for (const char* k : {"step_s", "step_s_lo", "step_s_hi", "tokens_per_s", "mfu", "memory_bytes", "fits_memory"}) {
      INFO(k);
      CHECK(a.at(k) == b.at(k));
    }
  }
  expect_bad("predict " + scenario + "--zero 4", "zero");
  expect_bad("predict " + scenario + "--recompute some", "recompute");
  expect_bad("predict " + scenario + "--dp 0", "dp");
  expect_bad("predict " + scenario + "--topology nodes:3x3", "topology");
  // Nodes smaller than the machine's keep the NICs beside their GPUs: tensor parallelism over eight
  // single-GPU nodes runs on one 50 GB/s NIC per GPU, not on NVLink's 450 GB/s.
  const std::string tp = "predict --hardware h100-sxm --model llama3-8b --mesh 8x1 --seq 32768 --layout zigzag --format csv ";
  const auto inside = first_row(run(tp + "--topology nodes:1x8").out), apart = first_row(run(tp + "--topology nodes:8x1").out);
  CHECK(std::stod(apart.at("part_tp_comm_s")) > 5 * std::stod(inside.at("part_tp_comm_s")));
  // A PCIe tree cannot hold more GPUs than it has.
  expect_bad("predict --hardware rtx-4090 --model llama2-7b --mesh 1x16 --seq 65536 --layout zigzag --topology nodes:1x16",
             "PCIe tree of 8 GPUs per node");
}

TEST_CASE("cli sweep --phase: each row is what predict --phase prints for that point", "[cli][sweep][inference]") {
  const TempDir dir;
  REQUIRE(run("sweep --phase prefill,decode --hardware h100-sxm --model llama3-8b --mesh 1x8,2x16 --seq 8192 "
              "--cached-tokens 65536,1048576 --layout zigzag --no-intervals -o " + dir.file("rows.csv"))
              .code == 0);
  const auto rows = split_lines(read_file(dir.file("rows.csv")));
  const auto header = fields(rows.at(1));
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  REQUIRE(col.count("ttft_s") == 1);
  REQUIRE(rows.size() == 2 + 2 * 2 * 2);
  for (std::size_t i = 2; i < rows.size(); ++i) {
    const auto f = fields(rows[i]);
    INFO(rows[i]);
    REQUIRE(f[col["status"]] == "ok");
    const std::string phase = f[col["phase"]];
    const auto j = nlohmann::json::parse(
        run("predict --phase " + phase + " --hardware h100-sxm --model llama3-8b --mesh " + f[col["mp"]] + "x" +
            f[col["sp"]] + " --seq 8192 --cached-tokens " + f[col["cached_tokens"]] + " --format json")
            .out);
    // The CSV's %.6g of the same doubles; the same implementation and kernel.
    const auto same = [](const std::string& cell, double v) { return std::abs(std::stod(cell) / v - 1) < 1e-5; };
    CHECK(f[col["impl"]] == j["impl"].get<std::string>());
    CHECK(f[col["kernel"]] == j["kernel"].get<std::string>());
    CHECK(f[col["kernel"]] == "flash-attn-3");  // the serving stack on Hopper
    if (phase == "prefill") {
      CHECK(same(f[col["pass_kv_ttft_s"]], j["variants"][0]["ttft_s"].get<double>()));
      CHECK(same(f[col["pass_q_ttft_s"]], j["variants"][1]["ttft_s"].get<double>()));
      CHECK(f[col["variant"]] == j["best"].get<std::string>());
    } else {
      CHECK(same(f[col["tpot_s"]], j["rows"][0]["tpot_s"].get<double>()));
      CHECK(same(f[col["memory_bytes"]], j["rows"][0]["memory_bytes"].get<double>()));
    }
  }
}

TEST_CASE("cli predict --phase prefill and decode place the devices by --topology, as sweep does", "[cli][sweep][inference]") {
  const TempDir dir;
  const auto same = [](const std::string& cell, double v) { return std::abs(std::stod(cell) / v - 1) < 1e-5; };
  const auto sweep_row = [&](const std::string& args, const std::string& name) {
    REQUIRE(run("sweep " + args + " --layout zigzag --no-intervals -o " + dir.file(name)).code == 0);
    const auto rows = split_lines(read_file(dir.file(name)));
    REQUIRE(rows.size() == 3);
    const auto header = fields(rows.at(1));
    const auto f = fields(rows.at(2));
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size(); ++i) row[header[i]] = f.at(i);
    return row;
  };
  // A pass-KV ring over a 1M-token cache: across four nodes of 8 its hops wait on the NICs; inside one
  // 32-GPU NVLink domain they hide behind the compute.
  const std::string prefill = "--phase prefill --hardware h100-sxm --model llama3-8b --mesh 1x32 --seq 32768 --cached-tokens 1000000 ";
  std::vector<double> pass_kv;
  for (const std::string topology : {"nodes:4x8", "nodes:1x32"}) {
    INFO(topology);
    const auto j = nlohmann::json::parse(run("predict " + prefill + "--topology " + topology + " --format json").out);
    CHECK(j["topology"] == topology);
    const auto row = sweep_row(prefill + "--topology " + topology, "prefill.csv");
    CHECK(row.at("topology") == topology);
    CHECK(same(row.at("pass_kv_ttft_s"), j["variants"][0]["ttft_s"].get<double>()));
    CHECK(same(row.at("pass_q_ttft_s"), j["variants"][1]["ttft_s"].get<double>()));
    pass_kv.push_back(j["variants"][0]["ttft_s"].get<double>());
  }
  CHECK(pass_kv[1] < 0.8 * pass_kv[0]);
  CHECK(run("predict " + prefill).out.find("the ring crosses nodes") != std::string::npos);
  CHECK(run("predict " + prefill + "--topology nodes:1x32").out.find("the ring stays inside a node") != std::string::npos);
  // Decode: one GPU per node sends the query and gathers the outputs over the NICs.
  const std::string decode = "--phase decode --hardware h100-sxm --model llama3-8b --mesh 1x8 --cached-tokens 131072 ";
  std::vector<double> tpot;
  for (const std::string topology : {"nodes:1x8", "nodes:8x1"}) {
    INFO(topology);
    const auto j = nlohmann::json::parse(run("predict " + decode + "--topology " + topology + " --format json").out);
    CHECK(same(sweep_row(decode + "--topology " + topology, "decode.csv").at("tpot_s"), j["rows"][0]["tpot_s"].get<double>()));
    tpot.push_back(j["rows"][0]["tpot_s"].get<double>());
  }
  CHECK(tpot[1] > tpot[0]);
  // The one-device row beside the ring sits in the same nodes: with tensor parallelism over eight
  // single-GPU nodes its all-reduces cross nodes as the ring row's do.
  const auto apart = nlohmann::json::parse(run("predict --phase decode --hardware h100-sxm --model llama3-8b --mesh 8x2 "
                                               "--cached-tokens 131072 --topology nodes:16x1 --format json")
                                               .out);
  REQUIRE(apart["rows"].size() == 2);
  CHECK(apart["rows"][1]["sp"] == 1);
  CHECK(apart["rows"][1]["tp_communication_s"].get<double>() ==
        Approx(apart["rows"][0]["tp_communication_s"].get<double>()));
  expect_bad("predict " + decode + "--topology nodes:2x2", "topology");
  // TransformerEngine's ring shards a causal cache in zigzag only; decode takes that layout.
  const auto te = run("predict " + decode + "--impl te-p2p");
  REQUIRE(te.code == 0);
  CHECK(te.out.find("te-p2p") != std::string::npos);
}

TEST_CASE("cli --weights fp8-ffn and --kv-cache fp8: predict, sweep and plan agree, and a 405B decode fits on 16 H100s",
          "[cli][inference][formats]") {
  const TempDir dir;
  const std::string decode = "--phase decode --hardware h100-sxm --model llama3-405b --mesh 8x2 --cached-tokens 131072 ";
  const auto bf = nlohmann::json::parse(run("predict " + decode + "--format json").out);
  const auto f8 = nlohmann::json::parse(run("predict " + decode + "--weights fp8-ffn --kv-cache fp8 --format json").out);
  CHECK(bf["weights"] == "bf16");
  CHECK(f8["weights"] == "fp8-ffn");
  CHECK(f8["kv_cache"] == "fp8");
  // Llama 3 405B's bf16 weights over 8-way tensor parallelism (~101 GB per GPU) leave no room on an
  // 80 GB H100; with the feed-forward matrices in FP8 they take ~61 GB.
  CHECK_FALSE(bf["rows"][0]["fits_memory"].get<bool>());
  CHECK(f8["rows"][0]["fits_memory"].get<bool>());
  CHECK(f8["rows"][0]["tpot_s"].get<double>() < bf["rows"][0]["tpot_s"].get<double>());
  CHECK(f8["rows"][0]["kv_cache_bytes"].get<double>() == Approx(bf["rows"][0]["kv_cache_bytes"].get<double>() / 2));
  // The sweep row of the same point: the same TPOT.
  REQUIRE(run("sweep " + decode + "--weights fp8-ffn --kv-cache fp8 --layout contiguous --no-intervals -o " + dir.file("d.csv")).code == 0);
  const auto rows = split_lines(read_file(dir.file("d.csv")));
  REQUIRE(rows.size() == 3);
  const auto header = fields(rows.at(1)), f = fields(rows.at(2));
  const auto col = std::find(header.begin(), header.end(), "tpot_s") - header.begin();
  CHECK(std::stod(f.at(static_cast<std::size_t>(col))) == Approx(f8["rows"][0]["tpot_s"].get<double>()).epsilon(1e-5));
  // plan: the 16-GPU decode meshes that fit are the FP8 ones.
  const std::string plan = "plan --phase decode --hardware h100-sxm --model llama3-405b --cached-tokens 131072 --devices 16 "
                           "--impl ring-flash-attn --format json ";
  const auto p_bf = nlohmann::json::parse(run(plan).out);
  const auto p_f8 = nlohmann::json::parse(run(plan + "--weights fp8-ffn").out);
  CHECK(p_f8["weights"] == "fp8-ffn");
  CHECK(p_f8["fit_memory"].get<std::int64_t>() > p_bf["fit_memory"].get<std::int64_t>());
  // Refused where they do not apply, or with a bad name.
  expect_bad("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 65536 --weights fp8-ffn", "weights");
  expect_bad("predict " + decode + "--weights int4", "weights");
  expect_bad("predict " + decode + "--kv-cache fp16", "kv-cache");
  expect_bad("predict --phase decode --hardware a100-80gb --model llama3-8b --mesh 1x8 --cached-tokens 131072 --weights fp8-ffn",
             "FP8");
  expect_bad("plan --hardware h100-sxm --model llama3-8b --weights fp8-ffn", "weights");
}

TEST_CASE("cli plan --emit megatron prints the first plan's Megatron-LM flags", "[cli][plan][emit]") {
  const std::string ask = "plan --hardware h100-sxm --model llama3-8b --devices 16 --impl te-p2p,te-a2a-p2p ";
  const auto emitted = run(ask + "--emit megatron");
  REQUIRE(emitted.code == 0);
  const auto json = nlohmann::json::parse(run(ask + "--format json").out);
  const auto& first = json.at("plans").at(0);
  CHECK(emitted.out.find("--context-parallel-size " + std::to_string(first.at("sp").get<std::int64_t>())) != std::string::npos);
  CHECK(emitted.out.find("--tensor-model-parallel-size " + std::to_string(first.at("mp").get<std::int64_t>())) != std::string::npos);
  CHECK(emitted.out.find("--seq-length 131072") != std::string::npos);
  const auto titan = run("plan --hardware h100-sxm --model llama3-8b --devices 16 --impl torch-cp --emit torchtitan");
  REQUIRE(titan.code == 0);
  CHECK(titan.out.find("def ringsim_plan(config):") != std::string::npos);
  CHECK(titan.out.find("config.parallelism.context_parallel_degree") != std::string::npos);
  const auto ds = run("plan --hardware h100-sxm --model llama3-8b --devices 16 --cp ulysses --mp 1 --emit deepspeed");
  REQUIRE(ds.code == 0);
  CHECK(ds.out.find("\"sequence_parallel_size\": 8") != std::string::npos);
  expect_bad(ask + "--emit nemo", "emit");
  expect_bad(ask + "--emit megatron --format json", "emit");
  expect_bad("plan --hardware h100-sxm --model llama3-8b --devices 16 --impl ring-flash-attn --cp ring --emit megatron", "te-p2p");
}

TEST_CASE("cli plan --ttft / --tpot: the fewest devices, and why fewer fail", "[cli][plan][inference]") {
  const TempDir dir;
  const std::string common = "plan --hardware h100-sxm --model llama3-8b --impl ring-flash-attn --devices 64 ";
  const auto table = run(common + "--phase prefill --seq 131072 --ttft 1s");
  REQUIRE(table.code == 0);
  CHECK(table.out.find("TTFT at most 1 s") != std::string::npos);
  CHECK(table.out.find("fewer devices:") != std::string::npos);
  CHECK(table.out.find("too slow: TTFT") != std::string::npos);
  // The same request as a plan file, answered as JSON: the first plan meets the target, each smaller one says why not.
  write_file(dir.file("p.json"), R"({"phase": "prefill", "n_seq": 131072, "ttft": "1s", "devices": 64, "impl": ["ring-flash-attn"]})");
  const auto json = run("plan " + dir.file("p.json") + " --format json");
  REQUIRE(json.code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["goal"] == "min-devices");
  CHECK(j["plans"][0]["ttft_s"].get<double>() <= 1.0);
  REQUIRE_FALSE(j["smaller"].empty());
  for (const auto& s : j["smaller"]) CHECK(s["devices"].get<std::int64_t>() < j["plans"][0]["devices"].get<std::int64_t>());
  const auto decode = run(common + "--phase decode --cached-tokens 1048576 --tpot 50ms --mp 1");
  REQUIRE(decode.code == 0);
  CHECK(decode.out.find("does not fit") != std::string::npos);
  expect_bad(common + "--phase prefill --ttft 5", "ttft");
  expect_bad(common + "--phase decode --ttft 5s", "ttft");
  expect_bad(common + "--phase prefill --tpot 50ms", "tpot");
  expect_bad(common + "--phase decode --tpot 50ms", "cached");
  expect_bad("sweep --phase warm", "phase");
  expect_bad("sweep --phase prefill --cached-tokens -1", "cached-tokens");
}

TEST_CASE("cli plan-docs: when nothing fits it suggests only what is not in use", "[cli][plan-docs]") {
  const std::string base = "plan-docs lognormal:2000:1.5:3:300 --seq 1M --mesh 1x2 --model llama3-70b --hardware a100-80gb";
  const auto z3 = run(base + " --zero 3 --recompute full");
  REQUIRE(z3.code == 0);
  REQUIRE(z3.out.find("no candidate fits in memory: try ") != std::string::npos);
  CHECK(z3.out.find("--zero 3") == std::string::npos);
  CHECK(z3.out.find("try --recompute full") == std::string::npos);
  const auto z0 = run(base + " --zero 0 --recompute selective");
  REQUIRE(z0.code == 0);
  CHECK(z0.out.find("try --zero 3, --recompute full") != std::string::npos);
}

TEST_CASE("cli plan-docs and predict --docs price the same packed sequence across two nodes alike, part by part",
          "[cli][plan-docs]") {
  // One packed sequence of four documents on 16 H100s (two nodes): plan-docs' step must be
  // predict's, gradient synchronisation included (ZeRO-3 over the 16 ranks, mostly not hidden by
  // this short sequence's backward), and so must every part.
  const TempDir dir;
  write_file(dir.file("docs.txt"), "8192\n4096\n2048\n2048\n");
  const std::string common = " --hardware h100-sxm --model llama3-8b --seq 16384 --mesh 1x16";
  const auto plan = run("plan-docs " + dir.file("docs.txt") + common + " --cp ulysses,allgather --format json");
  REQUIRE(plan.code == 0);
  const auto rows = nlohmann::json::parse(plan.out)["buckets"].back()["ranking"];
  REQUIRE(rows.size() >= 2);
  int compared = 0;
  for (const auto& row : rows) {
    const std::string cp = row["cp"], layout = row["layout"], impl = row["impl"];
    INFO(cp << " " << layout << " " << impl);
    REQUIRE(row["sequences"] == 1);
    const auto p = run("predict --docs " + dir.file("docs.txt") + common + " --cp " + cp + " --layout " + layout +
                       " --impl " + impl + " --format json");
    REQUIRE(p.code == 0);
    const auto r = nlohmann::json::parse(p.out)["results"][0];
    CHECK(row["mean_step_s"].get<double>() == Approx(r["step_s"].get<double>()).epsilon(1e-9));
    double sum = 0;
    for (const auto& [key, value] : r.items()) {
      if (!key.starts_with("part_")) continue;
      INFO(key);
      CHECK(row[key].get<double>() == Approx(value.get<double>()).epsilon(1e-9).margin(1e-15));
      sum += value.get<double>();
    }
    CHECK(sum == Approx(r["step_s"].get<double>()).epsilon(1e-9));
    CHECK(r["part_grad_sync_s"].get<double>() > 0.1 * r["step_s"].get<double>());
    ++compared;
  }
  CHECK(compared >= 2);
}

TEST_CASE("cli sweep and plan: every row's parts add up to its step, in CSV and JSON, either engine", "[cli][sweep][plan]") {
  // Strategies, tensor parallelism, data parallelism, pipelines and micro-batches across nodes,
  // and the simulator (whose difference from the lock-step parts is a part of its own).
  const auto part_sum_ok = [](const std::vector<std::string>& header, const std::vector<std::string>& row) {
    double sum = 0, step = -1;
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i].starts_with("part_")) sum += std::stod(row.at(i));
      if (header[i] == "step_s") step = std::stod(row.at(i));
    }
    INFO("sum " << sum << " step " << step);
    return std::abs(sum - step) <= 1e-5 * step;
  };
  for (const char* engine : {"analytic", "des"}) {
    INFO(engine);
    const std::string des = std::string(engine) == "des" ? " --seq 16384 --pp 1 --micro-batches 1,2" : " --seq 16384,65536 --pp 1,2 --micro-batches 1,4";
    const auto s = run(std::string("sweep --hardware h100-sxm --model llama2-7b --cp ring,ulysses,allgather --mesh 1x8,2x8 --dp 1,2 --zero 1,3 "
                                   "--topology nodes:4x8 --engine ") + engine + des);
    REQUIRE(s.code == 0);
    auto rows = split_lines(s.out);
    while (!rows.empty() && rows.front().starts_with("#")) rows.erase(rows.begin());
    REQUIRE(rows.size() > 8);
    const auto header = fields(rows.front());
    const auto status = std::find(header.begin(), header.end(), "status") - header.begin();
    int ok = 0;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const auto f = fields(rows[i]);
      REQUIRE(f.size() == header.size());
      if (f[static_cast<std::size_t>(status)] != "ok") continue;
      INFO(rows[i]);
      CHECK(part_sum_ok(header, f));
      ++ok;
    }
    CHECK(ok > 8);
  }
  const auto p = run("plan --hardware h100-sxm --model llama2-7b --seq 32768 --devices 32 --global-batch 64 --format json");
  REQUIRE(p.code == 0);
  const auto j = nlohmann::json::parse(p.out);
  int plans = 0;
  for (const auto& section : {j["plans"], j["best_per_strategy"]}) {
    for (const auto& x : section) {
      double sum = 0;
      for (const auto& [key, value] : x.items())
        if (key.starts_with("part_")) sum += value.get<double>();
      CHECK(sum == Approx(x["step_s"].get<double>()).epsilon(1e-9));
      ++plans;
    }
  }
  CHECK(plans > 2);
}

TEST_CASE("cli plan: folded plans say so in the table, the CSV and the JSON, and --no-fold ranks by the goal alone",
          "[cli][plan]") {
  // TransformerEngine's libraries on H100 share one cuDNN fit: their plans within a few per cent
  // fold (the paired 90 % interval of their ratio is about +-23 %).
  const std::string common = "plan --hardware h100-sxm --model llama2-7b --seq 131072 --devices 16 --impl te-a2a,te-p2p,te-a2a-p2p "
                             "--zero 3 --recompute selective --tile default --top 3";
  const auto table = run(common);
  INFO(table.err);
  REQUIRE(table.code == 0);
  CHECK(table.out.find("ranks 1-") != std::string::npos);
  CHECK(table.out.find("(paired: one fit); ranked by memory spare") != std::string::npos);
  const auto csv = run(common + " --format csv");
  REQUIRE(csv.code == 0);
  const auto lines = split_lines(csv.out);
  REQUIRE(lines.size() >= 3);
  const auto header = fields(lines[0]);
  REQUIRE(header.back() == "fold");
  std::size_t folded = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) folded += lines[i].find("fold: ") != std::string::npos;
  CHECK(folded >= 2);
  const auto json = nlohmann::json::parse(run(common + " --format json").out);
  REQUIRE(json["plans"].size() >= 2);
  CHECK(json["plans"][0]["fold"].is_object());
  CHECK(json["plans"][0]["memory_spare_bytes"].get<double>() >= json["plans"][1]["memory_spare_bytes"].get<double>());
  // --no-fold: no fold anywhere, and the plans by tokens/s.
  const auto plain = nlohmann::json::parse(run(common + " --no-fold --format json").out);
  REQUIRE(plain["plans"].size() == json["plans"].size());
  for (std::size_t i = 0; i < plain["plans"].size(); ++i) {
    CHECK(plain["plans"][i]["fold"].is_null());
    if (i > 0) CHECK(plain["plans"][i]["tokens_per_s"].get<double>() <= plain["plans"][i - 1]["tokens_per_s"].get<double>());
  }
}
