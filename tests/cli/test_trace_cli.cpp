// The trace commands end to end: a synthetic ring run (calibration/trace/synthetic.hpp, written
// from the model with planted efficiencies and link) through `ringsim calibrate --from-trace` and
// `ringsim check --trace`, and their refusals; `ringsim trace summarize` on the kernels of real
// runs (DeepEP, multimem, custom all-reduce, Blackwell attention, MoE GEMMs).
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/cost/cost.hpp"
#include "models/hardware/point_to_point.hpp"
#include "tests/support/cli_run.hpp"
#include "tests/support/scenario.hpp"
#include "calibration/trace/synthetic.hpp"
#include "tests/support/kineto_builder.hpp"

using namespace ringsim;

namespace {

const char* kScenario = "--hardware a100-80gb --model attn:32:8:128 --mesh 1x4 --seq 32768 --impl ring-flash-attn --cp ring --layout zigzag";

// The synthetic traces of kScenario's ring, one file per rank; `edit` rewrites each file's text.
std::vector<std::string> write_run(const test::TempDir& dir, const calibration::SyntheticRun& run,
                                   const std::function<std::string(std::string)>& edit = nullptr) {
  std::vector<std::string> files;
  for (std::size_t r = 0; r < run.traces.size(); ++r)
    files.push_back(dir.write("rank" + std::to_string(r) + ".json", edit ? edit(run.traces[r]) : run.traces[r]));
  return files;
}

std::string joined(const std::vector<std::string>& files) {
  std::string out;
  for (const auto& f : files) out += (out.empty() ? "" : ",") + f;
  return out;
}

// A trace without its backward attention kernels (a forward-only run): each event is one line.
std::string forward_only(const std::string& trace) {
  std::string out;
  std::size_t at = 0;
  while (at < trace.size()) {
    std::size_t end = trace.find('\n', at);
    end = end == std::string::npos ? trace.size() : end + 1;
    const std::string line = trace.substr(at, end - at);
    if (line.find("flash_bwd") == std::string::npos) out += line;
    at = end;
  }
  return out;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

auto scenario() {
  return test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 4, 32768, "zigzag", "causal", std::nullopt, "ring-flash-attn");
}

}  // namespace

TEST_CASE("calibrate --from-trace writes the planted profile and hop, check --trace shows the planted exposure",
          "[cli][trace]") {
  auto s = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 4, 32768, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  const double fwd = s.profile.attention_efficiency * 0.8;
  const double bwd = (s.profile.attention_bwd_efficiency > 0 ? s.profile.attention_bwd_efficiency : s.profile.attention_efficiency) * 0.75;
  s.profile.attention_efficiency = fwd;
  s.profile.attention_bwd_efficiency = bwd;
  s.rebuild_cost();
  const calibration::PlantedLink link{25e-6, 12e9};
  const auto run = calibration::synthetic_ring_run(s, link);
  test::TempDir dir;
  std::string files;
  for (std::size_t r = 0; r < run.traces.size(); ++r)
    files += (r ? "," : "") + dir.write("rank" + std::to_string(r) + ".json", run.traces[r]);

  const auto c = test::run(std::string("calibrate --from-trace ") + files + " " + kScenario + " --output " + dir.file("p.json") +
                           " --links-dir " + dir.dir() + " --report " + dir.file("r.csv"));
  INFO(c.err);
  REQUIRE(c.code == 0);
  CHECK_THAT(c.out, Catch::Contains("attention_efficiency"));
  const auto p = nlohmann::json::parse(test::read_file(dir.file("p.json")));
  CHECK(p["attention_efficiency"].get<double>() == Approx(fwd).epsilon(0.02));
  CHECK(p["attention_bwd_efficiency"].get<double>() == Approx(bwd).epsilon(0.02));
  const auto links = models::PointToPoint::load_file(dir.file("a100-80gb.json"));
  REQUIRE(links.intra_node);
  CHECK(links.intra_node->bandwidth_bytes_per_s == Approx(link.bandwidth_bytes_per_s).epsilon(0.02));
  CHECK(links.intra_node->latency_s == Approx(link.latency_s).epsilon(0.02));
  CHECK(test::lines(test::read_file(dir.file("r.csv"))) == 1 + 2 * 3);  // header, (fwd, bwd) x zigzag's three shapes

  // Glob style: the first file after the flag, the others positional.
  std::string spaced = run.traces.empty() ? "" : dir.file("rank0.json");
  for (std::size_t r = 1; r < run.traces.size(); ++r) spaced += " " + dir.file("rank" + std::to_string(r) + ".json");
  const auto j = test::run(std::string("check --trace ") + spaced + " " + kScenario + " --format json");
  INFO(j.err);
  REQUIRE(j.code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  const auto crit = doc["critical_rank"].get<std::size_t>();
  bool seen = false;
  for (const auto& row : doc["components"])
    if (row["component"] == "exposed communication") {
      seen = true;
      CHECK(row["measured_s"].get<double>() == Approx(run.exposed_per_step[crit]).margin(1e-8));
      CHECK(row["predicted_s"].is_number());
    }
  CHECK(seen);
  const auto t = test::run(std::string("check --trace ") + files + " " + kScenario);
  REQUIRE(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("largest gap"));
}

TEST_CASE("trace commands refuse what they cannot match, with one line", "[cli][trace]") {
  auto s = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 4, 32768, "zigzag", "causal", std::nullopt, "ring-flash-attn");
  const auto run = calibration::synthetic_ring_run(s, {20e-6, 50e9}, 1);
  test::TempDir dir;
  std::string files;
  for (std::size_t r = 0; r < run.traces.size(); ++r)
    files += (r ? "," : "") + dir.write("rank" + std::to_string(r) + ".json", run.traces[r]);
  test::expect_bad("calibrate --from-trace " + files + " --hardware a100-80gb --model attn:32:8:128 --mesh 1x8 --seq 65536 "
                   "--impl ring-flash-attn --layout zigzag", "attention forward calls");
  test::expect_bad("calibrate --from-trace " + files + " " + kScenario + " --cp ulysses", "ulysses");
  test::expect_bad("calibrate --from-trace " + files + " --hardware a100-80gb --model attn:32:8:128 --mesh 1x4 --seq 32768 "
                   "--impl jax-blockwise --layout contiguous", "kernel shapes");
  test::expect_bad(std::string("calibrate --from-trace ") + kScenario, "expected trace files");
  test::expect_bad("calibrate --from-trace " + files + " " + kScenario + " --layout zigzag,contiguous", "one --layout");
  test::expect_bad("calibrate --from-trace " + files + " " + kScenario + " --free bogus", "bogus");
  test::expect_bad("check --trace " + dir.file("missing.json") + " " + kScenario, "missing.json");
  test::expect_bad("check --trace " + files + " " + kScenario + " --format xml", "format");
}

TEST_CASE("trace commands name the scenario flags they miss, and --help lists the trace modes", "[cli][trace]") {
  const auto run = calibration::synthetic_ring_run(scenario(), {20e-6, 50e9}, 1);
  test::TempDir dir;
  const auto files = joined(write_run(dir, run));
  // Without them, predict's defaults (a100-80gb, ringattn-1b, 1x8, 131072 tokens) were compared.
  test::expect_bad("check --trace " + files,
                   "missing --hardware (or --hardware-file), --model (or --model-file), --mesh, --seq, --impl, --layout");
  test::expect_bad("calibrate --from-trace " + files + " --hardware a100-80gb --model attn:32:8:128", "missing --mesh, --seq, --impl, --layout");
  test::expect_bad("check --trace " + files + " --hardware a100-80gb --model attn:32:8:128 --mesh 1x4 --seq 32768 --layout zigzag",
                   "missing --impl");
  const auto check_help = test::run("check --help");
  CHECK(check_help.code == 0);
  CHECK_THAT(check_help.out, Catch::Contains("--trace"));
  const auto calibrate_help = test::run("calibrate --help");
  CHECK(calibrate_help.code == 0);
  CHECK_THAT(calibrate_help.out, Catch::Contains("--from-trace"));
}

TEST_CASE("a forward-only trace is checked against a prefill, and has no backward to fit", "[cli][trace]") {
  const auto run = calibration::synthetic_ring_run(scenario(), {20e-6, 50e9}, 1);
  test::TempDir dir;
  const auto files = write_run(dir, run, forward_only);
  const auto j = test::run("check --trace " + joined(files) + " " + kScenario + " --format json");
  INFO(j.err);
  REQUIRE(j.code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["phase"] == "prefill");
  double predicted_step = 0;
  for (const auto& row : doc["components"]) {
    CHECK(row["component"] != "attention backward");
    if (row["component"] == "step (TTFT)") predicted_step = row["predicted_s"].get<double>();
  }
  // The prediction is `predict --phase prefill`'s for the same flags (its faster variant).
  const auto p = test::run(std::string("predict --phase prefill --format json ") + kScenario);
  REQUIRE(p.code == 0);
  const auto prefill = nlohmann::json::parse(p.out);
  double ttft = 0;
  for (const auto& v : prefill["variants"])
    if (v["variant"] == prefill["best"]) ttft = v["ttft_s"].get<double>();
  CHECK(ttft > 0);
  CHECK(predicted_step == Approx(ttft).epsilon(1e-12));
  const auto table = test::run("check --trace " + joined(files) + " " + kScenario);
  REQUIRE(table.code == 0);
  CHECK_THAT(table.out, Catch::Contains("forward only"));
  // Fitting it: the backward efficiency has nothing to fit; the forward alone does.
  test::expect_bad("calibrate --from-trace " + joined(files) + " " + kScenario, "hold no backward attention kernels");
  test::expect_bad("calibrate --from-trace " + joined(files) + " " + kScenario, "rank0.json");
  const auto fwd = test::run("calibrate --from-trace " + joined(files) + " " + kScenario + " --free attention_efficiency");
  INFO(fwd.err);
  CHECK(fwd.code == 0);
}

TEST_CASE("calibrate --from-trace on one call shape says what the trace lacks, naming it", "[cli][trace]") {
  // A ring of one device: one causal call per layer and pass, one shape group.
  const auto one = test::resolve_scenario("a100-80gb", "attn:32:8:128", 1, 1, 8192, "contiguous", "causal", std::nullopt, "ring-flash-attn");
  const auto run = calibration::synthetic_ring_run(one, {20e-6, 50e9}, 1);
  test::TempDir dir;
  const auto files = write_run(dir, run);
  const std::string flags = " --hardware a100-80gb --model attn:32:8:128 --mesh 1x1 --seq 8192 --impl ring-flash-attn --layout contiguous";
  const auto r = test::run("calibrate --from-trace " + joined(files) + flags);
  INFO(r.err);
  CHECK(r.code == 2);
  CHECK(test::lines(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains(files.front()) && Catch::Contains("1 shape group") && Catch::Contains("one device") &&
                        Catch::Contains("attention_efficiency, attention_bwd_efficiency"));
}

TEST_CASE("a rank given twice, another missing, or a rank outside the ring is refused, naming the files", "[cli][trace]") {
  const auto run = calibration::synthetic_ring_run(scenario(), {20e-6, 50e9}, 1);
  test::TempDir dir;
  const auto files = write_run(dir, run);
  const std::string twice = files[0] + "," + files[1] + "," + files[1] + "," + files[3];
  for (const char* command : {"calibrate --from-trace ", "check --trace "}) {
    test::expect_bad(command + twice + " " + kScenario, "rank 1 (its recorded rank) is also the rank of " + files[1]);
    test::expect_bad(command + twice + " " + kScenario, "no trace holds rank 2");
  }
  // The traces of a ring of four, checked as a ring of two.
  test::expect_bad("check --trace " + joined(files) +
                       " --hardware a100-80gb --model attn:32:8:128 --mesh 1x2 --seq 16384 --impl ring-flash-attn --layout zigzag",
                   "rank 2 (its recorded rank) is outside the scenario's ring of 2 devices");
  // Some ranks only: accepted.
  const auto some = test::run("check --trace " + files[0] + "," + files[2] + " " + kScenario);
  INFO(some.err);
  CHECK(some.code == 0);
}

TEST_CASE("trace summarize: the kernels of real runs in their class, the unknown with their share and a hint", "[cli][trace]") {
  const std::string combine = "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, int const*)";
  const std::vector<test::KernelEvent> ops{
      {"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvSlidingOrChunkedCausalP16VarSeqQ128Kv128PersistentContext", 7, 0, 100},
      {"void flash::prepare_varlen_num_blocks_kernel<1, true>(int, int, cutlass::FastDivmod, cutlass::FastDivmod, int*)", 7, 100, 10},
      {"bmm_MxE4m3_MxE2m1MxE4m3_Fp32_Ab32_Bb32_Cb32_t128x8x512_s3_et128x8", 7, 110, 90},
      {"bmm_Bfloat16_MxE2m1MxE4m3_Fp32_Ab32_Bb32_t128x8x512_s3_et128x8", 7, 200, 100},
      {combine, 20, 250, 150},
      {"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)", 20, 400, 50},
      {"void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*)", 20, 450, 100},
      {"my_own_fused_kernel", 7, 960, 40},  // ends the step: wall 1000 us
  };
  test::TempDir dir;
  const auto file = dir.write("b200.json", test::kineto_trace(ops, 1000));
  const auto j = test::run("trace summarize " + file + " --format json");
  INFO(j.err);
  REQUIRE(j.code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  const auto& step = doc[0]["steps"][0];
  CHECK(step["classes"]["attention_fwd"]["ms"].get<double>() == Approx(0.110));
  CHECK(step["classes"]["gemm"]["ms"].get<double>() == Approx(0.190));
  CHECK(step["classes"]["collective"]["ms"].get<double>() == Approx(0.300));
  CHECK(step["classes"]["other"]["ms"].get<double>() == Approx(0.040));
  CHECK(step["communication_ms"].get<double>() == Approx(0.300));
  CHECK(step["exposed_communication_ms"].get<double>() == Approx(0.250));
  REQUIRE(doc[0]["unclassified"].size() == 1);
  CHECK(doc[0]["unclassified"][0]["name"] == "my_own_fused_kernel");
  CHECK(doc[0]["unclassified"][0]["share_of_steps"].get<double>() == Approx(0.04));
  const auto t = test::run("trace summarize " + file);
  REQUIRE(t.code == 0);
  CHECK_THAT(t.out, Catch::Contains("attn dec") && Catch::Contains("4.0 % of the steps' GPU time") &&
                        Catch::Contains("--classes FILE") && Catch::Contains("my_own_fused_kernel"));
  CHECK_THAT(t.out, !Catch::Contains("multimem") && !Catch::Contains("dpsk") && !Catch::Contains("bmm_"));
}

TEST_CASE("a kernel name of 100k characters goes through every trace command", "[cli][trace][hostile]") {
  // std::regex recursed per character on `sdpa.*fprop` over such a name: a crash in trace
  // summarize, calibrate --from-trace and check --trace alike.
  const std::string huge = "cudnn_generated_fort_native_sdpa_sm80_" + std::string(100000, 'x') + "_flash_fprop_kernel";
  const auto run = calibration::synthetic_ring_run(scenario(), {20e-6, 50e9}, 1);
  test::TempDir dir;
  const auto files = write_run(dir, run, [&](std::string text) {
    return replace_all(std::move(text), "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>", huge);
  });
  const auto s = test::run("trace summarize " + files[0] + " --format json");
  INFO(s.err);
  REQUIRE(s.code == 0);
  CHECK(nlohmann::json::parse(s.out)[0]["unclassified"].empty());
  const auto c = test::run("check --trace " + joined(files) + " " + kScenario);
  INFO(c.err);
  CHECK(c.code == 0);
  const auto f = test::run("calibrate --from-trace " + joined(files) + " " + kScenario);
  INFO(f.err);
  CHECK(f.code == 0);
}
