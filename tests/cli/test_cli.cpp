// The `ringsim` command as a user meets it: outputs, and bad input answered with exactly one
// line on stderr and exit code 2, leaving no output file behind.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "planning/parts_io.hpp"
#include "models/io/parse.hpp"
#include "tests/support/cli_run.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim::test;

TEST_CASE("the quick-start prediction compares ring and striped side by side", "[cli]") {
  const auto r = run("predict --hardware a100-80gb --model ringattn-3b --mesh 2x4 --seq 262144 --recompute full");
  REQUIRE(r.code == 0);
  // The README's first example is a configuration that fits, and says what it assumed.
  CHECK(r.out.find("(fits with ") != std::string::npos);
  CHECK(r.out.find("GiB spare; contiguous; dp 1, ZeRO-3 over dp x sp, full recomputation, bf16, sequence parallel, 2.0 GiB "
                   "headroom") != std::string::npos);
  CHECK(r.out.find("contiguous") != std::string::npos);
  CHECK(r.out.find("striped") != std::string::npos);
  CHECK(r.out.find("Theoretical maximum speedup") != std::string::npos);
  CHECK(r.out.find("profile") != std::string::npos);
  CHECK(r.out.find("nan") == std::string::npos);
}

TEST_CASE("batch prediction passes input columns through and adds pred_tms and pred_speedup", "[cli]") {
  const TempDir tmp;
  const std::string out = tmp.file("batch.csv");
  const auto r = run(std::string("predict --scenarios ") + RINGSIM_TEST_DATA + "/striped_paper_calibration.csv --format csv -o " + out);
  REQUIRE(r.code == 0);
  std::ifstream f(out);
  std::string header;
  std::getline(f, header);
  CHECK(header.rfind("hardware,model,mp,sp,n_seq,tms,speedup,impl,pred_tms,pred_speedup", 0) == 0);
  std::string line;
  int rows = 0;
  while (std::getline(f, line)) ++rows;
  CHECK(rows == 45);
  // JSON is one document.
  const auto j = run(std::string("predict --scenarios ") + RINGSIM_TEST_DATA + "/striped_paper_calibration.csv --format json");
  REQUIRE(j.code == 0);
  CHECK(j.out.front() == '[');
}

TEST_CASE("predict --engine des times the step with the simulator and says so", "[cli]") {
  const std::string scenario = "predict --hardware a100-80gb --model ringattn-1b --mesh 1x4 --seq 16384";
  const auto a = run(scenario);
  const auto d = run(scenario + " --engine des");
  REQUIRE(a.code == 0);
  REQUIRE(d.code == 0);
  CHECK(a.out.find("engine analytic") != std::string::npos);
  CHECK(d.out.find("engine des") != std::string::npos);
  CHECK(d.out.find("nan") == std::string::npos);
  // Batch mode: pred_engine and pred_impl close the pred_ columns, so earlier positions stay where they were.
  const TempDir tmp;
  const auto batch = tmp.write("engine_batch.csv", "hardware,model,mp,sp,n_seq\na100-80gb,ringattn-1b,1,4,16384\n");
  const auto b = run("predict --scenarios " + batch + " --format csv --engine des");
  REQUIRE(b.code == 0);
  CHECK(b.out.rfind("hardware,model,mp,sp,n_seq,pred_tms,pred_speedup,", 0) == 0);
  const auto header_end = b.out.find('\n');
  CHECK(b.out.substr(0, header_end).ends_with(",pred_profile_calibrated,pred_engine,pred_impl"));
  CHECK(b.out.substr(header_end + 1).ends_with(",des,ring-flash-attn\n"));
  const auto ba = run("predict --scenarios " + batch + " --format csv");
  REQUIRE(ba.code == 0);
  CHECK(ba.out.substr(ba.out.find('\n') + 1).ends_with(",analytic,ring-flash-attn\n"));
  CHECK(b.out.find("nan") == std::string::npos);
}

TEST_CASE("predict --pp and --micro-batches: the step is the micro-batches' passes through the stages, the columns one micro-batch's", "[cli]") {
  const std::string base = "predict --hardware h100-sxm --model llama2-7b --mesh 1x2 --seq 16k --layout zigzag --dp 2 "
                           "--zero 1 --recompute none --format csv";
  const auto col = [](const std::string& csv, const std::string& name) {
    std::istringstream in(csv);
    std::string header, row;
    std::getline(in, header);
    std::getline(in, row);
    const auto h = ringsim::models::split(header, ','), r = ringsim::models::split(row, ',');
    const auto it = std::find(h.begin(), h.end(), name);
    REQUIRE(it != h.end());
    return std::stod(r.at(static_cast<std::size_t>(it - h.begin())));
  };
  const auto one = run(base);
  const auto eight = run(base + " --micro-batches 8");
  const auto global = run(base + " --global-batch 16");  // 16 = dp 2 x 8 micro-batches x batch 1
  const auto piped = run(base + " --micro-batches 8 --pp 2 --topology nodes:1x8");
  REQUIRE(one.code == 0);
  REQUIRE(eight.code == 0);
  REQUIRE(piped.code == 0);
  CHECK(eight.out == global.out);
  // The columns are one micro-batch's; the step all of them, the tokens of all of them.
  CHECK(col(eight.out, "attention_fwd_s") == col(one.out, "attention_fwd_s"));
  CHECK(col(eight.out, "step_s") >= 7.99 * col(one.out, "step_s"));
  CHECK(col(eight.out, "tokens_per_s") >= 0.999 * col(one.out, "tokens_per_s"));
  // Two stages: each device runs half the layers, so the step is well under the unpiped one, but
  // not half of it (bubble, the LM head on the last stage), and each rank needs less memory.
  CHECK(col(piped.out, "step_s") < 0.6 * col(eight.out, "step_s"));
  CHECK(col(piped.out, "step_s") > 0.5 * col(eight.out, "step_s"));
  CHECK(col(piped.out, "memory_bytes") < col(eight.out, "memory_bytes"));
  const auto table = run("predict --hardware h100-sxm --model llama2-7b --mesh 1x2 --seq 16k --layout zigzag --dp 2 "
                         "--micro-batches 8 --pp 2 --topology nodes:1x8");
  REQUIRE(table.code == 0);
  CHECK_THAT(table.out, Catch::Contains("1F1B over 2 stages, 8 micro-batches"));
  CHECK_THAT(table.out, Catch::Contains("The parts are every micro-batch's on the busiest stage's rank"));
  CHECK_THAT(table.out, Catch::Contains("pp idle"));
  // The parts (CSV columns part_*_s) add up to the step, whatever the micro-batches and stages.
  for (const auto* out : {&one.out, &eight.out, &piped.out}) {
    double sum = 0;
    for (const auto& name : ringsim::planning::part_columns()) sum += col(*out, name);
    CHECK(sum == Approx(col(*out, "step_s")).epsilon(1e-5));
  }
  CHECK(col(piped.out, "part_pipeline_idle_s") > 0);
  CHECK(col(eight.out, "part_pipeline_idle_s") == 0);
  CHECK(col(eight.out, "part_attention_bwd_s") == Approx(8 * col(one.out, "part_attention_bwd_s")).epsilon(1e-5));
}

TEST_CASE("workload prints one row per (round, device)", "[cli]") {
  const auto r = run("workload --mesh 1x4 --seq 4096 --layout striped --tile 256x256 --impl jax-blockwise");
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("round,device,kv_block,tiles_total,tiles_computed,allowed_pairs,kv_bytes,tiles_visited,"
                    "visited_area,masked_area\n",
                    0) == 0);
  CHECK(lines(r.out) == 1 + 16);
  // 1024*1025/2 pairs; causal tiles are visited iff they hold a pair, and the 4 diagonal ones
  // are partly masked.
  CHECK(r.out.find("\n0,0,0,16,10,524800,") != std::string::npos);
  CHECK(r.out.find("\n0,0,0,16,10,524800,16777216,10,655360,262144\n") != std::string::npos);
}

TEST_CASE("bucket-striped is a layout of predict and workload for sparse masks", "[cli]") {
  const auto p = run("predict --mesh 1x4 --seq 8192 --model attn:4:4:64 --mask hash:4 --layout striped,bucket-striped "
                     "--format csv");
  REQUIRE(p.code == 0);
  CHECK(lines(p.out) == 3);
  CHECK(p.out.find("\nbucket-striped,") != std::string::npos);
  // The causal baseline of --compare-mask keeps the permutation built from the hash buckets.
  const auto c = run("predict --mesh 1x4 --seq 8192 --model attn:4:4:64 --mask hash:4 --layout bucket-rotated "
                     "--compare-mask causal");
  REQUIRE(c.code == 0);
  CHECK(c.out.find("\nbucket-rotated ") != std::string::npos);
  const auto w = run("workload --mesh 1x4 --seq 8192 --model attn:4:4:64 --mask qkdrop:0.5 --layout bucket-striped");
  REQUIRE(w.code == 0);
  CHECK(lines(w.out) == 1 + 16);
}

TEST_CASE("show draws plain heatmaps and attention matrices when not on a terminal", "[cli]") {
  const auto r = run("show --mesh 1x4 --seq 16 --tile 2x2");
  REQUIRE(r.code == 0);
  CHECK(r.out.find('\033') == std::string::npos);
  CHECK(r.out.find("attention matrix") != std::string::npos);
  // The legend speaks of the glyphs the plain heatmap draws, not of the terminal's numbers.
  CHECK(r.out.find("cells: ' .:-=+*#%@' from no work to a full block") != std::string::npos);
  CHECK(r.out.find("99 = a full block") == std::string::npos);
  CHECK(r.out.find("striped") != std::string::npos);
}

TEST_CASE("bad input: one line on stderr, exit code 2", "[cli][errors]") {
  expect_bad("predict --hardware z80", "unknown hardware");
  expect_bad("predict --model gpt-9", "unknown model");
  expect_bad("predict --mesh 1x3 --seq 8192", "not divisible");
  expect_bad("predict --mesh 1x8 --seq 8192 --tile 2048x2048", "larger than the per-device block");
  expect_bad("predict --seq 0", "seq");
  expect_bad("predict --seq -4096", "seq");
  expect_bad("predict --mesh 0x4", "mesh");
  expect_bad("predict --mesh 4", "mesh");
  expect_bad("predict --layout spiral", "unknown layout");
  expect_bad("predict --impl no-such-impl", "unknown implementation");
  expect_bad("predict --impl jax-blockwise --layout zigzag", "offers contiguous, striped");
  expect_bad("predict --impl jax-blockwise --mask window:64", "does not offer mask");
  expect_bad("predict --hardware tpu-v4 --impl scfa", "does not run on tpu");
  expect_bad("predict --cp spiral", "unknown context-parallel strategy");
  expect_bad("predict --impl scfa --profile jax-blockwise/a100-80gb", "is for implementation jax-blockwise");
  expect_bad("predict --layout bucket-striped --mask causal", "field 'layout'");
  expect_bad("predict --model attn:2:2:64 --layout bucket-rotated --mask qkdrop:0.5", "bucket-rotated arranges hash");
  expect_bad("predict --mask window:0", "window");
  expect_bad("predict --format xml", "format");
  expect_bad("predict --engine quantum", "engine");
  expect_bad("predict --no-such-flag", "no-such-flag");
  expect_bad("predict --hardware-file /nonexistent.json", "cannot open");
  expect_bad("frobnicate", "unknown command");
  // Pipelines and micro-batches (docs/pipeline.md): what Megatron refuses, named by flag.
  expect_bad("predict --model llama2-7b --pp 3", "field 'pp'");  // 32 layers over 3 stages
  expect_bad("predict --model llama2-7b --pp 0", "pp");
  expect_bad("predict --model llama2-7b --pp 4 --pp-schedule interleaved:2 --micro-batches 6", "field 'micro-batches'");
  expect_bad("predict --model llama2-7b --pp 2 --pp-schedule gpipe", "field 'pp-schedule'");
  expect_bad("predict --model llama2-7b --pp 2 --pp-schedule interleaved:1", "field 'pp-schedule'");
  expect_bad("predict --model llama2-7b --dp 4 --global-batch 30", "field 'global-batch'");
  expect_bad("predict --model llama2-7b --micro-batches 4 --global-batch 16", "not both");
  expect_bad("predict --model attn:8:8:64 --pp 2", "field 'pp'");

  const TempDir tmp;
  const auto bad_fields =
      tmp.write("bad_fields.csv", "hardware,model,mp,sp,n_seq\na100-80gb,ringattn-1b,1,2,8192\na100-80gb,ringattn-1b,1,2\n");
  expect_bad("predict --scenarios " + bad_fields + " --format csv", "bad_fields.csv:3");
  const auto bad_column = tmp.write("bad_column.csv", "hardware,model,mp,n_seq\na100-80gb,ringattn-1b,1,8192\n");
  expect_bad("predict --scenarios " + bad_column + " --format csv", "'sp'");
  const auto bad_value = tmp.write("bad_value.csv", "hardware,model,mp,sp,n_seq\na100-80gb,ringattn-1b,1,2,lots\n");
  expect_bad("predict --scenarios " + bad_value + " --format csv", "bad_value.csv:2: field 'n_seq'");
  const auto bad_divisible = tmp.write(
      "bad_divisible.csv", "hardware,model,mp,sp,n_seq\na100-80gb,ringattn-1b,1,2,8192\na100-80gb,ringattn-1b,1,3,8192\n");
  expect_bad("predict --scenarios " + bad_divisible + " --format csv", "bad_divisible.csv:3");
  const auto bad_hw = tmp.write("bad_hw.json", "{\"name\": \"x\",\n \"peak_flops_per_s\": {\"bf16\": {\"value\": 1e15}}}\n");
  expect_bad("predict --hardware-file " + bad_hw, "source");
  {
    // A hardware file without the bf16 rate the default precision runs at: the error names the
    // file, the modes it has and the key to add.
    std::ifstream in(std::string(RINGSIM_TEST_DATA) + "/../configs/hardware/h100-sxm.json");
    auto hw = nlohmann::json::parse(in);
    hw.at("peak_flops_per_s").erase("bf16");
    hw.at("peak_flops_per_s").erase("fp16");
    const auto no_bf16 = tmp.write("no_bf16.json", hw.dump(1));
    expect_bad("predict --hardware-file " + no_bf16 + " --mesh 1x8 --seq 65536", "no_bf16.json) has no bf16");
    expect_bad("predict --hardware-file " + no_bf16 + " --mesh 1x8 --seq 65536", "gives tf32, fp32, fp8");
    expect_bad("predict --hardware-file " + no_bf16 + " --mesh 1x8 --seq 65536", "peak_flops_per_s.bf16");
  }

  // A failing batch leaves no output file, not even a partial one, and no temporary.
  const std::string out = tmp.file("partial.csv");
  const auto r = run("predict --scenarios " + bad_divisible + " --format csv -o " + out);
  CHECK(r.code == 2);
  CHECK_FALSE(std::filesystem::exists(out));
  std::size_t left = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(tmp.dir())) ++left;
  CHECK(left == 6);  // the six input files above
}

TEST_CASE("measure and validate without a usable GPU: one line on stderr, exit code 1", "[cli][gpu]") {
  // CUDA_VISIBLE_DEVICES= hides any GPU, so this checks the failure path on every machine; a
  // build without CUDA fails the same way for a different reason.
  const TempDir tmp;
  const std::string out = tmp.file("measure_out.csv");
  setenv("CUDA_VISIBLE_DEVICES", "", 1);  // inherited by popen's shell
  for (const std::string& args : {"measure --quick -o " + out, std::string("validate --model attn:4:4:64 --mesh 1x4 --seq 1024")}) {
    INFO("ringsim " << args);
    const auto r = run(args);
    INFO("stderr: " << r.err);
    CHECK(r.code == 1);
    CHECK(lines(r.err) == 1);
    CHECK((r.err.find("no CUDA device") != std::string::npos || r.err.find("built without CUDA") != std::string::npos));
    CHECK(r.out.empty());
  }
  unsetenv("CUDA_VISIBLE_DEVICES");
  CHECK_FALSE(std::filesystem::exists(out));
  // Bad input is still bad input (exit 2), GPU or not, in CUDA builds; stubs answer 1 to anything.
  const auto bad = run("validate --layout nonsense --model attn:4:4:64 --mesh 1x4 --seq 1024");
  CHECK((bad.code == 2 || bad.code == 1));
  CHECK(lines(bad.err) == 1);
}

TEST_CASE("show accepts sparse (per-head) masks", "[cli]") {
  const auto r = run("show --model attn:2:2:16 --mesh 1x4 --seq 32 --tile 2x2 --mask hash:2 --matrix always");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("head 0 of 2") != std::string::npos);
  // Cells stay on the one-full-block scale (99 at most).
  CHECK(r.out.find("nan") == std::string::npos);
}

TEST_CASE("strategies compared side by side, each row with its why, bad splits exit 2", "[cli][strategy]") {
  const auto table = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 65536 --layout zigzag "
                         "--cp ring,allgather,ulysses,usp:2x4,double-ring:4");
  REQUIRE(table.code == 0);
  for (const char* row : {"ring zigzag", "allgather zigzag", "ulysses zigzag", "usp:2x4 zigzag", "double-ring:4 zigzag"})
    CHECK(table.out.find(row) != std::string::npos);
  CHECK(table.out.find("why:") != std::string::npos);
  // One kernel runs all five (InternEvo's double ring calls FlashAttention-2 only): every row on it.
  CHECK(table.out.find("ulysses = usp (flash-attn-2)") != std::string::npos);
  CHECK(table.out.find("one attention kernel for every row") != std::string::npos);
  // The all-gather holds the whole sequence's K/V: its memory is its own line, not the first row's.
  CHECK(table.out.find("  other rows: allgather zigzag ~") != std::string::npos);
  const auto csv = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 65536 --layout zigzag "
                       "--cp ring,ulysses --format csv");
  REQUIRE(csv.code == 0);
  CHECK(lines(csv.out) == 3);
  // ring's default library calls FlashAttention-2: Ulysses on the library that calls it too.
  CHECK(csv.out.find(",usp,ulysses,") != std::string::npos);
  // Named, the implementation is the user's (TE's a2a on cuDNN), the ring's the default.
  const auto named = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 65536 --layout zigzag "
                         "--cp ulysses --impl te-a2a --format csv");
  REQUIRE(named.code == 0);
  CHECK(named.out.find(",te-a2a,ulysses,") != std::string::npos);
  // One implementation per strategy, in the order of --cp: each row runs the one named for it.
  const auto paired = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 65536 --layout zigzag "
                          "--cp ring,ulysses --impl ring-flash-attn,te-a2a");
  REQUIRE(paired.code == 0);
  CHECK(paired.out.find("ring = ring-flash-attn (flash-attn-2)") != std::string::npos);
  CHECK(paired.out.find("ulysses = te-a2a (") != std::string::npos);
  CHECK(paired.out.find("the kernels differ (the implementations named by --impl)") != std::string::npos);
  const auto paired_csv = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 65536 --layout zigzag "
                              "--cp ulysses,ring --impl te-a2a,ring-flash-attn --format csv");
  REQUIRE(paired_csv.code == 0);
  CHECK(paired_csv.out.find(",te-a2a,ulysses,") != std::string::npos);
  CHECK(paired_csv.out.find(",ring-flash-attn,ring,") != std::string::npos);
  expect_bad("predict --model llama3-8b --mesh 1x8 --seq 8192 --layout zigzag --cp ring,ulysses --impl ring-flash-attn,te-a2a,usp",
             "3 implementations for 2 strategies");
  expect_bad("predict --model llama3-8b --mesh 1x8 --seq 8192 --layout zigzag --cp ring,ulysses --impl ring-flash-attn,",
             "empty implementation name in the list");

  expect_bad("predict --model llama3-8b --mesh 1x8 --seq 8192 --cp usp:2x2 --layout zigzag",
             "U x R = 2 x 2 = 4 differs from the context-parallel size sp = 8");
  expect_bad("predict --model llama3-8b --mesh 1x16 --seq 16384 --cp ulysses --layout zigzag", "does not replicate KV heads");
  expect_bad("predict --model llama3-8b --mesh 1x8 --seq 8192 --cp ulysses --impl te-all-gather --layout zigzag",
             "does not offer strategy 'ulysses'");
  expect_bad("predict --cp double-ring:3 --layout zigzag --seq 8192", "does not divide the ring size sp = 8");
  const TempDir tmp;
  const auto docs_short = tmp.write("docs_short.csv", "length\n600\n400\n");
  expect_bad("predict --mesh 1x8 --seq 1024 --docs " + docs_short + " --layout contiguous",
             "document lengths sum to 1000, expected n_seq = 1024");
  expect_bad("predict --mesh 1x8 --seq 8192 --docs lognormal:1000:1:1 --mask full", "--docs sets the mask");
  expect_bad("predict --mesh 1x8 --seq 8192 --layout doc-zigzag --impl ringsim-tiles", "give them with --docs");
  expect_bad("show --cp ring,allgather", "show takes one strategy");
}

TEST_CASE("predict: a comparison shows a strategy that cannot run as not runnable and predicts the others",
          "[cli][errors]") {
  // llama3-8b's 8 KV heads: a Ulysses degree of 32 cannot split them under TE's a2a.
  const std::string base = "predict --hardware h100-sxm --model llama3-8b --mesh 1x32 --seq 131072 ";
  const auto t = run(base + "--cp ring,ulysses,usp:8x4");
  INFO(t.err);
  REQUIRE(t.code == 0);
  CHECK(t.out.find("not runnable here") != std::string::npos);
  CHECK(t.out.find("  ulysses contiguous: field 'cp'") != std::string::npos);
  CHECK(t.out.find("usp:8x4 zigzag ") != std::string::npos);  // the others are predicted
  const auto j = run(base + "--cp ring,ulysses --format json");
  REQUIRE(j.code == 0);
  CHECK(j.out.find("\"not_runnable\": [") != std::string::npos);
  CHECK(j.out.find("\"reason\": \"field 'cp'") != std::string::npos);
  const auto c = run(base + "--cp ring,ulysses --format csv");
  REQUIRE(c.code == 0);
  CHECK(c.out.substr(0, c.out.find('\n')).find(",not_runnable,part_attention_fwd_s,") != std::string::npos);
  CHECK(c.out.find("\nzigzag,") != std::string::npos);
  CHECK(c.out.find(",ulysses,") != std::string::npos);
  // One row that cannot run, or a comparison of which none runs, is the error itself.
  expect_bad(base + "--cp ulysses", "Ulysses degree 32");
  expect_bad(base + "--cp ulysses --layout zigzag,contiguous --impl te-a2a", "Ulysses degree 32");
}

TEST_CASE("simulate says which row its trace and matrices hold when several are compared", "[cli]") {
  const TempDir tmp;
  const std::string base = "simulate --hardware a100-80gb --model ringattn-1b --mesh 1x4 --seq 16384 --trace " +
                           tmp.file("t.json") + " --layout contiguous";
  const auto one = run(base);
  REQUIRE(one.code == 0);
  CHECK(one.out.find("first row only") == std::string::npos);
  const auto two = run(base + ",striped --matrix " + tmp.file("m.csv"));
  REQUIRE(two.code == 0);
  CHECK(two.out.find("--trace and --matrix hold the simulation of the first row only (contiguous)") != std::string::npos);
}

TEST_CASE("simulate places the devices in the nodes of --topology as predict does", "[cli]") {
  // On a PCIe machine the transport's rates depend on the GPUs per node: the simulation's
  // analytic column is predict's step less the gradient synchronisation (which predict adds).
  for (const std::string topology : {"nodes:8x2", "nodes:4x4"}) {
    const std::string scenario =
        "--hardware l20 --model llama3-8b --mesh 1x16 --seq 65536 --layout zigzag --format json --topology " + topology;
    const auto sim = run("simulate --sync barrier " + scenario), pred = run("predict " + scenario);
    INFO(topology << sim.err << pred.err);
    REQUIRE(sim.code == 0);
    REQUIRE(pred.code == 0);
    const auto sj = nlohmann::json::parse(sim.out), pj = nlohmann::json::parse(pred.out);
    const auto& row = pj.at("results").at(0);
    const double pass = row.at("step_s").get<double>() - row.at("part_grad_sync_s").get<double>();
    CHECK(sj.at(0).at("analytic_step_s").get<double>() == Approx(pass).epsilon(1e-12));
    CHECK(sj.at(0).at("step_s").get<double>() == Approx(pass).epsilon(1e-6));
  }
}

TEST_CASE("simulate --phase prefill: lock-step equals predict --phase prefill, async is never slower", "[cli][prefill]") {
  const std::string scenario = "--hardware a100-80gb --model llama3-8b --mesh 1x16 --seq 16384 --cached-tokens 65536 --format json";
  const auto barrier = run("simulate --phase prefill --sync barrier " + scenario);
  const auto async = run("simulate --phase prefill " + scenario);
  const auto predicted = run("predict --phase prefill " + scenario);
  INFO(barrier.err << async.err << predicted.err);
  REQUIRE(barrier.code == 0);
  REQUIRE(async.code == 0);
  REQUIRE(predicted.code == 0);
  const auto b = nlohmann::json::parse(barrier.out), a = nlohmann::json::parse(async.out), p = nlohmann::json::parse(predicted.out);
  REQUIRE(b.at("variants").size() == 2);
  CHECK(b.at("topology").get<std::string>() == "nodes:2x8");
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& v = b["variants"][i];
    INFO(v.at("variant").get<std::string>());
    CHECK(v.at("variant") == p["variants"][i].at("variant"));
    // Picosecond ticks: each round rounds to half a tick at most.
    CHECK(v.at("ttft_s").get<double>() == Approx(p["variants"][i].at("ttft_s").get<double>()).epsilon(1e-6));
    CHECK(v.at("analytic_ttft_s").get<double>() == p["variants"][i].at("ttft_s").get<double>());
    CHECK(v.at("layer_s").get<double>() == Approx(v.at("analytic_layer_s").get<double>()).epsilon(1e-6));
    CHECK(a["variants"][i].at("ttft_s").get<double>() <= v.at("ttft_s").get<double>() * (1 + 1e-9));
  }
  // The scenario is predict's in every flag it takes: the nodes of --topology (the transport's
  // rates differ by them on a PCIe machine), the weights' and the cache's formats.
  for (const std::string extra : {"--hardware l20 --topology nodes:8x2", "--hardware l20 --topology nodes:4x4",
                                  "--hardware h100-sxm --topology nodes:4x4 --weights fp8-ffn --kv-cache fp8"}) {
    const std::string other = "--model llama3-8b --mesh 1x16 --seq 32768 --cached-tokens 32768 --format json " + extra;
    const auto sim = run("simulate --phase prefill --sync barrier " + other), pred = run("predict --phase prefill " + other);
    INFO(extra << sim.err << pred.err);
    REQUIRE(sim.code == 0);
    REQUIRE(pred.code == 0);
    const auto sj = nlohmann::json::parse(sim.out), pj = nlohmann::json::parse(pred.out);
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(sj["variants"][i].at("analytic_ttft_s").get<double>() == pj["variants"][i].at("ttft_s").get<double>());
      CHECK(sj["variants"][i].at("ttft_s").get<double>() == Approx(pj["variants"][i].at("ttft_s").get<double>()).epsilon(1e-6));
    }
  }
  const auto table = run("simulate --phase prefill --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 16384");
  REQUIRE(table.code == 0);
  CHECK_THAT(table.out, Catch::Contains("pass-KV") && Catch::Contains("pass-Q") && Catch::Contains("analytic"));
  CHECK(table.out.find("nan") == std::string::npos);
  const std::string base = "simulate --phase prefill --hardware h100-sxm --model llama3-8b --mesh 1x4 --seq 16384 ";
  expect_bad(base + "--cached-tokens 12", "cached-tokens");
  expect_bad(base + "--cached-tokens -8", "cached-tokens");
  expect_bad(base + "--buffers 1", "buffers");
  expect_bad(base + "--trace t.json", "trace");
  expect_bad(base + "--sync sometimes", "sync");
  expect_bad(base + "--topology node:2", "topology");
  expect_bad("simulate --phase decode --hardware h100-sxm --model llama3-8b --mesh 1x4 --cached-tokens 4096", "phase");
  expect_bad("simulate --hardware h100-sxm --model llama3-8b --mesh 1x4 --seq 16384 --cached-tokens 8", "cached-tokens");
  expect_bad("simulate --hardware h100-sxm --model llama3-8b --mesh 1x4 --seq 16384 --weights fp8-ffn", "weights");
  expect_bad(base + "--kv-cache fp4", "kv-cache");
}

TEST_CASE("predict --phase prefill: pass-KV for a full prefill, pass-Q over a large cache across nodes", "[cli][prefill]") {
  const auto best = [](const std::string& args) {
    const auto r = run("predict --phase prefill --hardware h100-sxm --model llama3-8b --mesh 1x32 --format json " + args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    // Both variants are reported, and "best" is the one with the shorter time to first token.
    REQUIRE(j.at("variants").size() == 2);
    const double kv = j["variants"][0]["ttft_s"].get<double>(), q = j["variants"][1]["ttft_s"].get<double>();
    CHECK(j.at("best").get<std::string>() == (q < kv ? "pass-Q" : "pass-KV"));
    return j.at("best").get<std::string>();
  };
  CHECK(best("--seq 131072 --cached-tokens 0") == "pass-KV");
  CHECK(best("--seq 4096 --cached-tokens 1048576") == "pass-Q");
  const auto t = run("predict --phase prefill --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 131072");
  REQUIRE(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("pass-KV") && Catch::Contains("pass-Q") && Catch::Contains("why:"));
}

TEST_CASE("inference outputs say what sets the time and plans search every serving implementation", "[cli][inference]") {
  // A decode step whose batch's products outlast reading the weights is compute-bound, not
  // weight-bound; at batch 1 the weights' bytes set it.
  const auto big = run("predict --phase decode --hardware h100-sxm --model llama3-8b --mesh 1x8 --cached-tokens 4096 --batch 1024 --format json");
  REQUIRE(big.code == 0);
  const auto bj = nlohmann::json::parse(big.out);
  CHECK_THAT(bj.at("rows").at(0).at("why").get<std::string>(), Catch::StartsWith("compute-bound"));
  const auto one = run("predict --phase decode --hardware h100-sxm --model llama3-8b --mesh 1x8 --cached-tokens 4096 --format json");
  REQUIRE(one.code == 0);
  CHECK_THAT(nlohmann::json::parse(one.out).at("rows").at(0).at("why").get<std::string>(), Catch::StartsWith("weight-bound"));
  // The verdict names the exposed communication where pass-Q's all-to-all makes the difference.
  const auto v = run("predict --phase prefill --hardware h100-sxm --model llama3-8b --mesh 1x32 --seq 65536 --cached-tokens 131072");
  REQUIRE(v.code == 0);
  CHECK_THAT(v.out, Catch::Contains("pass-KV is faster by") && Catch::Contains("pass-Q exposes") &&
                        Catch::Contains("all-to-all returning partial outputs"));
  // cp-serve offers only zigzag; decode runs on its own layout, so a decode plan searches it.
  const auto plan = run("plan --phase decode --hardware h100-sxm --model llama3-8b --cached-tokens 1048576 --tpot 20ms "
                        "--devices 8 --impl cp-serve --threads 1 --format json");
  INFO(plan.err);
  REQUIRE(plan.code == 0);
  const auto pj = nlohmann::json::parse(plan.out);
  REQUIRE_FALSE(pj.at("plans").empty());
  CHECK(pj.at("plans").at(0).at("impl") == "cp-serve");
}

TEST_CASE("predict --phase prefill|decode name the serving stack and its kernel and a training step refuses it", "[cli][inference]") {
  // With no --impl the phases run the serving stack: FlashAttention-3 on Hopper, FlashAttention-2 on Ampere.
  for (const auto& [gpu, kernel] : {std::pair{"h100-sxm", "flash-attn-3"}, std::pair{"a100-80gb", "flash-attn-2"}}) {
    for (const char* phase : {"prefill --seq 16384", "decode --cached-tokens 65536"}) {
      const auto r = run(std::string("predict --phase ") + phase + " --hardware " + gpu + " --model llama3-8b --mesh 1x8 --format json");
      INFO(gpu << " " << phase << ": " << r.err);
      REQUIRE(r.code == 0);
      const auto j = nlohmann::json::parse(r.out);
      CHECK(j.at("impl").get<std::string>() == "cp-serve");
      if (j.contains("kernel")) CHECK(j.at("kernel").get<std::string>() == kernel);
    }
    const auto t = run(std::string("predict --phase prefill --hardware ") + gpu + " --model llama3-8b --mesh 1x8 --seq 16384");
    REQUIRE(t.code == 0);
    CHECK(t.out.find(std::string("(cp-serve, kernel ") + kernel + ")") != std::string::npos);
  }
  // A training library named for a prefill still runs (the header says which).
  const auto named = run("predict --phase prefill --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 16384 --impl ring-flash-attn");
  REQUIRE(named.code == 0);
  CHECK(named.out.find("(ring-flash-attn, kernel flash-attn-2)") != std::string::npos);
  // The serving stack has no training step: one line naming impl and what to do instead.
  expect_bad("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 16384 --impl cp-serve", "prefill and decode only");
  expect_bad("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 16384 --impl cp-serve --layout zigzag",
             "prefill and decode only");
  expect_bad("simulate --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 16384 --impl cp-serve", "prefill and decode only");
  expect_bad("plan --hardware h100-sxm --model llama3-8b --seq 131072 --devices 16 --impl cp-serve", "prefill and decode only");
  // A sweep lists such points as skipped, with the reason, as it does any point that cannot run.
  const auto sweep = run("sweep --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 16384 --impl cp-serve");
  REQUIRE(sweep.code == 0);
  CHECK(sweep.out.find(",skipped,") != std::string::npos);
  CHECK(sweep.out.find("prefill and decode only") != std::string::npos);
  const auto served = run("sweep --phase prefill --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 16384 --impl cp-serve");
  REQUIRE(served.code == 0);
  CHECK(served.out.find(",skipped,") == std::string::npos);
}

TEST_CASE("predict --memory-breakdown lists every part of the memory line with its source, in the table and in JSON",
          "[cli][memory]") {
  const std::string base = "predict --hardware h100-sxm --model llama3-8b --mesh 2x8 --seq 131072 --layout zigzag --zero 1 --recompute full";
  const auto t = run(base + " --memory-breakdown");
  INFO(t.err);
  REQUIRE(t.code == 0);
  for (const char* part : {"weights", "gradients", "optimizer state", "layers kept", "layer being recomputed", "logits (fp32)",
                           "attention workspace", "strategy buffers", "CUDA context", "NCCL buffers", "allocator fragmentation"})
    CHECK(t.out.find(part) != std::string::npos);
  CHECK(t.out.find("arXiv 1910.02054") != std::string::npos);
  // Without the flag the output is as it was: the breakdown only adds lines under the table.
  const auto plain = run(base);
  REQUIRE(plain.code == 0);
  CHECK(t.out.substr(0, plain.out.size()) == plain.out);
  // JSON: every row's parts add up to its memory_bytes.
  const auto j = run(base + " --memory-breakdown --format json");
  REQUIRE(j.code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  for (const auto& row : doc.at("results")) {
    double sum = 0;
    for (const auto& p : row.at("memory_breakdown")) sum += p.at("bytes").get<double>();
    CHECK(sum == Approx(row.at("memory_bytes").get<double>()).epsilon(1e-9));
  }
  expect_bad(base + " --memory-breakdown --format csv", "memory-breakdown");
}

TEST_CASE("sizes read as the outputs print them (--seq 1M and --target-tokens-per-s 200k) and --nodes points at --topology", "[cli]") {
  const auto a = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x16 --topology nodes:2x8 --seq 1M");
  const auto b = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x16 --topology nodes:2x8 --seq 1048576");
  REQUIRE(a.code == 0);
  CHECK(a.out == b.out);
  const auto p = run("plan --hardware h100-sxm --model llama3-8b --goal min-devices --seq 128k --target-tokens-per-s 20k "
                     "--devices 16 --format json");
  const auto q = run("plan --hardware h100-sxm --model llama3-8b --goal min-devices --seq 131072 --target-tokens-per-s 20000 "
                     "--devices 16 --format json");
  REQUIRE(p.code == q.code);
  CHECK(p.out == q.out);
  const auto n = run("predict --nodes 2");
  CHECK(n.code == 2);
  CHECK(n.err.find("--topology nodes:") != std::string::npos);
  const auto bad = run("predict --seq 1.5M1");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("128k") != std::string::npos);
}

TEST_CASE("a prefill whose weights fit no device says it does not run and equal variants are not 'faster by 1x'", "[cli][inference]") {
  const auto big = run("predict --phase prefill --hardware h100-sxm --model llama3-70b --mesh 1x2 --seq 131072");
  REQUIRE(big.code == 0);
  CHECK(big.out.find("this prefill does not run on this mesh: neither variant fits in memory") != std::string::npos);
  CHECK(big.out.find("faster by 1x") == std::string::npos);
  // A mesh that holds it prints no such line.
  const auto ok = run("predict --phase prefill --hardware h100-sxm --model llama3-8b --mesh 1x4 --seq 131072");
  REQUIRE(ok.code == 0);
  CHECK(ok.out.find("does not run on this mesh") == std::string::npos);
  CHECK((ok.out.find(" is faster by ") != std::string::npos || ok.out.find("take the same time") != std::string::npos));
}

TEST_CASE("predict and sweep --precision fp8 without --impl run a library that trains in fp8", "[cli]") {
  // ring-flash-attention (the GPU default) trains in bf16 only: the choice falls to the most
  // preferred library whose code trains in fp8 (TransformerEngine's), for every strategy compared.
  const std::string base = "predict --hardware h100-sxm --model llama2-7b --mesh 1x8 --seq 32k --precision fp8 ";
  const auto one = run(base + "--format csv");
  INFO(one.err);
  REQUIRE(one.code == 0);
  CHECK(one.out.find(",te-p2p,ring,") != std::string::npos);
  const auto two = run(base + "--cp ring,ulysses --format csv");
  REQUIRE(two.code == 0);
  CHECK(two.out.find(",te-a2a,ulysses,") != std::string::npos);
  // Named, the implementation is kept, and its refusal names the precision.
  expect_bad(base + "--impl ring-flash-attn", "does not train in fp8");
  // bf16 keeps the default library.
  const auto bf16 = run("predict --hardware h100-sxm --model llama2-7b --mesh 1x8 --seq 32k --layout zigzag --format csv");
  REQUIRE(bf16.code == 0);
  CHECK(bf16.out.find(",ring-flash-attn,ring,") != std::string::npos);
  // sweep chooses as predict does: the same library, the same step.
  const TempDir tmp;
  REQUIRE(run("sweep --hardware h100-sxm --model llama2-7b --mesh 1x8 --seq 32k --layout zigzag --precision fp8 --no-intervals -o " +
              tmp.file("fp8.csv"))
              .code == 0);
  const auto swept = read_file(tmp.file("fp8.csv"));
  CHECK(swept.find(",te-p2p,ring,") != std::string::npos);
  CHECK(swept.find(",ok,") != std::string::npos);
  const auto zig = run(base + "--layout zigzag --format json");
  REQUIRE(zig.code == 0);
  const auto step = nlohmann::json::parse(zig.out)["results"][0]["step_s"].get<double>();
  char cell[64];
  std::snprintf(cell, sizeof cell, ",ok,%.6g,", step);
  CHECK(swept.find(cell) != std::string::npos);
}

TEST_CASE("predict's hide line speaks of the first ring of more than one rank, per ring rank", "[cli]") {
  // usp:UxR: a ring rank holds n_seq / R tokens of heads / U heads; usp:8x1 has no ring to hide.
  const std::int64_t n_seq = 131072, heads = 32;  // llama3-8b
  const auto both = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 131072 --cp usp:8x1,usp:4x2,ring");
  REQUIRE(both.code == 0);
  const auto line = both.out.substr(both.out.find("K/V transfer hides"));
  CHECK(line.find("usp:4x2") != std::string::npos);
  CHECK(line.find(std::to_string(n_seq / 2) + " tokens of " + std::to_string(heads / 4) + " of the model's " +
                  std::to_string(heads) + " heads") != std::string::npos);
  CHECK(both.out.find(std::to_string(n_seq) + " tokens per device") == std::string::npos);
  const auto ring = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 131072 --cp ring");
  REQUIRE(ring.code == 0);
  CHECK(ring.out.find("per ring rank (contiguous: " + std::to_string(n_seq / 8) + " tokens now)") != std::string::npos);
  const auto alone = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 131072 --cp usp:8x1");
  REQUIRE(alone.code == 0);
  CHECK(alone.out.find("K/V transfer hides") == std::string::npos);
}

TEST_CASE("the KV cache's tokens read as --seq reads them (64k = 65536) in predict and simulate and plan", "[cli][prefill]") {
  const std::string base = "--hardware a100-80gb --model llama3-8b --seq 16384 --format json --phase prefill ";
  for (const std::string cmd : {"predict --mesh 1x16 ", "simulate --mesh 1x16 ", "plan --devices 16 --top 1 "}) {
    const auto k = run(cmd + base + "--cached-tokens 64k");
    const auto n = run(cmd + base + "--cached-tokens 65536");
    INFO(cmd << k.err << n.err);
    REQUIRE(k.code == 0);
    REQUIRE(n.code == 0);
    auto jk = nlohmann::json::parse(k.out), jn = nlohmann::json::parse(n.out);
    // Timings of the run itself (plan's search) differ; the answers do not.
    for (auto* j : {&jk, &jn}) j->erase("search_s");
    CHECK(jk == jn);
  }
}

TEST_CASE("predict names each row's profile when rows run on different libraries", "[cli]") {
  const auto r = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 131072 --cp ring,ulysses --impl "
                     "ring-flash-attn,verl-ulysses");
  REQUIRE(r.code == 0);
  const auto line = r.out.substr(r.out.find("\nprofiles "));
  const auto ring = line.find("ring-flash-attn/h100-sxm"), ulysses = line.find("verl-ulysses/h100-sxm");
  CHECK(ring != std::string::npos);
  CHECK(ulysses != std::string::npos);
  // Each with the rows it times.
  CHECK(line.find("for ring contiguous") != std::string::npos);
  CHECK(line.find("for ulysses contiguous") != std::string::npos);
  // One library: one profile, said once.
  const auto one = run("predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 131072 --cp ring,ulysses --impl te-a2a");
  REQUIRE(one.code == 0);
  CHECK(one.out.find("\nprofile te-a2a/h100-sxm") != std::string::npos);
  CHECK(one.out.find("\nprofiles ") == std::string::npos);
}

TEST_CASE("plan's ranked rows name the kernel each runs", "[cli][plan]") {
  // Training on Hopper: TransformerEngine calls cuDNN, ring-flash-attention FlashAttention-2;
  // prefill: the serving stack's FlashAttention-3.
  const auto train = run("plan --hardware h100-sxm --model llama3-8b --seq 131072 --devices 8 --impl te-p2p,ring-flash-attn "
                         "--cp ring --top 40");
  REQUIRE(train.code == 0);
  const auto ranked = train.out.substr(train.out.find("rank  devices"));
  CHECK(ranked.substr(0, ranked.find('\n')).find(" kernel ") != std::string::npos);
  std::istringstream rows(ranked);
  std::string row;
  int te = 0, rfa = 0;
  while (std::getline(rows, row)) {
    if (row.find(" te-p2p ") != std::string::npos && row.find(" ring ") != std::string::npos)
      te += row.find(" cudnn-fused ") != std::string::npos ? 1 : -1000;
    if (row.find(" ring-flash-attn ") != std::string::npos && row.find(" ring ") != std::string::npos)
      rfa += row.find(" flash-attn-2 ") != std::string::npos ? 1 : -1000;
  }
  CHECK(te > 0);
  CHECK(rfa > 0);
  const auto prefill = run("plan --phase prefill --hardware h100-sxm --model llama3-8b --seq 131072 --devices 8 --impl cp-serve --top 3");
  REQUIRE(prefill.code == 0);
  const auto p = prefill.out.substr(prefill.out.find("rank  devices"));
  CHECK(p.find(" cp-serve ") != std::string::npos);
  CHECK(p.find(" flash-attn-3 ") != std::string::npos);
}
