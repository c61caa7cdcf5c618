// `ringsim trace summarize`'s library: Kineto traces (plain and gzip, both timestamp schemas) read
// into GPU ops, steps and launches; ops classed by configs/trace/kernel_classes.json; per step the
// class times, exposed communication and idle time. Oracles: a synthetic ring step with known
// durations; an event sweep (a different algorithm from the summary's merge and two-pointer
// overlap) on random streams and on two real traces from HolisticTraceAnalysis.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "calibration/trace/kineto.hpp"
#include "calibration/trace/step_summary.hpp"
#include "calibration/trace/trace_text.hpp"
#include "models/catalog/catalog.hpp"
#include "models/io/error.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trace_support.hpp"

using namespace ringsim;
using calibration::OpClass;

namespace {

std::string repo_file(const std::string& rel) { return models::Catalog::default_root() + "/" + rel; }

// One op of a synthetic trace: a kernel launched at `launch` on the CPU, run on `stream`.
struct Op {
  std::string name;
  int stream;
  double launch, start, dur;
  std::string extra_args;  // appended to args
};

// A Kineto-shaped trace: CPU steps, one cudaLaunchKernel per op (correlation = index + 1).
std::string kineto_json(const std::vector<std::pair<double, double>>& steps, const std::vector<Op>& ops,
                        bool integer_ts = false, std::int64_t base = 1700000000000000) {
  const auto ts = [&](double t) {
    return integer_ts ? fmt::format("{}", base + static_cast<std::int64_t>(t)) : fmt::format("{:.3f}", static_cast<double>(base) + t);
  };
  std::string s = R"({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "deviceProperties": [{"id": 0, "name": "Test GPU"}], "traceEvents": [)";
  std::vector<std::string> ev;
  for (std::size_t i = 0; i < steps.size(); ++i)
    ev.push_back(fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "pid": 1, "tid": 1, "ts": {}, "dur": {}}})",
                             10 + i, ts(steps[i].first), steps[i].second - steps[i].first));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& o = ops[i];
    ev.push_back(fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 2, "args": {{"correlation": {}}}}})",
                             ts(o.launch), i + 1));
    ev.push_back(fmt::format(R"({{"ph": "X", "cat": "kernel", "name": "{}", "pid": 0, "tid": {}, "ts": {}, "dur": {}, "args": {{"device": 0, "stream": {}, "correlation": {}{}}}}})",
                             o.name, o.stream, ts(o.start), o.dur, o.stream, i + 1, o.extra_args));
  }
  ev.push_back(R"({"ph": "i", "cat": "cpu_instant_event", "name": "noise", "ts": 5, "pid": 1, "tid": 1})");
  for (std::size_t i = 0; i < ev.size(); ++i) s += (i ? ",\n" : "\n") + ev[i];
  return s + "\n]}\n";
}

// Oracle: sweep the ops' endpoints, counting how many communication and compute ops are active.
struct Expected {
  double comm = 0, exposed = 0, busy = 0;
};
Expected sweep(const std::vector<std::pair<calibration::Interval, OpClass>>& ops) {
  std::vector<std::tuple<double, int, int>> pts;  // time, +1/-1, class
  for (const auto& [iv, c] : ops) {
    if (!(iv.end > iv.start)) continue;
    pts.emplace_back(iv.start, +1, static_cast<int>(c));
    pts.emplace_back(iv.end, -1, static_cast<int>(c));
  }
  std::sort(pts.begin(), pts.end());
  int comm = 0, compute = 0, any = 0;
  double last = 0;
  Expected e;
  for (const auto& [t, d, c] : pts) {
    if (comm > 0) e.comm += t - last;
    if (comm > 0 && compute == 0) e.exposed += t - last;
    if (any > 0) e.busy += t - last;
    const auto cls = static_cast<OpClass>(c);
    if (calibration::is_communication(cls)) comm += d;
    if (calibration::is_compute(cls)) compute += d;
    any += d;
    last = t;
  }
  return e;
}

}  // namespace

TEST_CASE("a synthetic ring step: attention, SendRecv on its own stream, exposed and idle time", "[trace]") {
  // Step 10 (CPU 0-1000 us): forward attention 100-400 and 420-700 on stream 7, the K/V transfer
  // 150-500 on stream 20: compute covers it but for 400-420, so 20 us are exposed; a GEMM
  // 800-850; busy 100-700 and 800-850 = 650 us of a 750 us GPU step (first op to last).
  // Step 11 (CPU 1000-2000): a backward 1100-1600 and an all-reduce 1650-1750 (fully exposed).
  // A kernel launched at 1990 (step 11) that runs 2050-2060 still counts in step 11.
  const std::vector<Op> ops{
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>", 7, 10, 100, 300, ""},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20, 12, 150, 350,
       R"(, "Collective name": "send", "In msg nelems": 4194304, "Out msg nelems": 4194304, "dtype": "BFloat16", "Group size": 8)"},
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>", 7, 20, 420, 280, ""},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 7, 30, 800, 50, ""},
      {"void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128>>", 7, 1010, 1100, 500, ""},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 21, 1020, 1650, 100,
       R"(, "Collective name": "allreduce", "In msg nelems": 1000, "Out msg nelems": 1000, "dtype": "Float")"},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 7, 1990, 2050, 10, ""},
      {"launched_outside", 7, 2500, 2600, 5, ""},
  };
  const std::string text = kineto_json({{0, 1000}, {1000, 2000}}, ops);
  test::TempDir dir;
  for (const auto& path : {dir.write("rank3.json", text), dir.write("rank3.json.gz", test::gzip(text))}) {
    const auto t = calibration::read_kineto_trace(path);
    CHECK(t.rank == 3);
    CHECK(t.world_size == 8);
    CHECK(t.device_name == "Test GPU");
    const auto s = calibration::summarize(t, test::trace_classes());
    REQUIRE(s.steps.size() == 2);
    CHECK(s.ops_outside_steps == 1);
    CHECK(s.outside_steps_us == Approx(5));
    const auto& a = s.steps[0];
    CHECK(a.step == 10);
    CHECK(a.class_us[index(OpClass::AttentionFwd)] == Approx(580));
    CHECK(a.class_ops[index(OpClass::AttentionFwd)] == 2);
    CHECK(a.class_us[index(OpClass::P2p)] == Approx(350));
    CHECK(a.class_us[index(OpClass::Gemm)] == Approx(50));
    CHECK(a.communication_us == Approx(350));
    CHECK(a.exposed_communication_us == Approx(20));
    CHECK(a.busy_us == Approx(650));
    CHECK(a.wall_us == Approx(750));  // no GPU step range: first op 100 to last 850
    CHECK(a.idle_us == Approx(100));
    CHECK(a.p2p_bytes == Approx(4194304.0 * 2));
    const auto& b = s.steps[1];
    CHECK(b.step == 11);
    CHECK(b.class_us[index(OpClass::AttentionBwd)] == Approx(500));
    CHECK(b.class_us[index(OpClass::Collective)] == Approx(100));
    CHECK(b.class_us[index(OpClass::Other)] == Approx(10));
    CHECK(b.exposed_communication_us == Approx(100));
    CHECK(b.collective_bytes == Approx(4000));
    CHECK(b.wall_us == Approx(2060 - 1100));
    CHECK(s.unclassified.count("launched_outside") == 0);  // outside every step: counted apart
    CHECK(s.unclassified.at("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>").first == 1);
  }
}

TEST_CASE("integer and fractional timestamps read alike, GPU step ranges set the wall", "[trace]") {
  const std::vector<Op> ops{{"void flash_fwd_kernel<x>", 7, 10, 100, 300, ""}, {"ncclKernel_SendRecv_RING", 9, 11, 350, 100, ""}};
  const auto a = calibration::summarize(calibration::parse_kineto_trace(kineto_json({{0, 1000}}, ops, true), "int"), test::trace_classes());
  const auto b = calibration::summarize(calibration::parse_kineto_trace(kineto_json({{0, 1000}}, ops, false), "float"), test::trace_classes());
  REQUIRE(a.steps.size() == 1);
  REQUIRE(b.steps.size() == 1);
  CHECK(a.steps[0].exposed_communication_us == Approx(50));
  CHECK(b.steps[0].exposed_communication_us == Approx(50));
  CHECK(a.steps[0].wall_us == Approx(b.steps[0].wall_us));
  CHECK(a.steps[0].unsized_communication_ops == 1);
  // With the GPU-side copy of the step (newer PyTorch), the wall is that range: 50-1050.
  std::string text = kineto_json({{0, 1000}}, ops);
  const auto at = text.find("\"traceEvents\": [") + 16;
  text.insert(at, R"({"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#10", "pid": 0, "tid": 7, "ts": 1700000000000050.0, "dur": 1000},)");
  const auto c = calibration::summarize(calibration::parse_kineto_trace(text, "gpu-steps"), test::trace_classes());
  REQUIRE(c.steps.size() == 1);
  CHECK(c.steps[0].wall_us == Approx(1000));
  CHECK(c.steps[0].idle_us == Approx(1000 - 350));
}

TEST_CASE("random streams: exposed communication and busy time equal an event sweep", "[trace]") {
  std::mt19937_64 rng(20261127);
  const std::vector<std::string> names{"flash_fwd_kernel", "flash_bwd_dq_dk_dv", "ncclDevKernel_SendRecv", "ncclKernel_AllGather",
                                       "ampere_bf16_s16816gemm", "elementwise_kernel"};
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<Op> ops;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const double start = static_cast<double>(rng() % 5000) / 4.0, dur = static_cast<double>(rng() % 800) / 8.0;
      ops.push_back({names[rng() % names.size()], static_cast<int>(rng() % 4), 1, start + 10, dur, ""});
    }
    const auto t = calibration::parse_kineto_trace(kineto_json({{0, 100}}, ops), "random");
    const auto s = calibration::summarize(t, test::trace_classes());
    std::vector<std::pair<calibration::Interval, OpClass>> classed;
    for (const auto& op : t.ops) classed.push_back({{op.start_us, op.end_us}, test::trace_classes().classify(op)});
    const auto e = sweep(classed);
    REQUIRE(s.steps.size() == 1);
    CHECK(s.steps[0].communication_us == Approx(e.comm).margin(1e-6));
    CHECK(s.steps[0].exposed_communication_us == Approx(e.exposed).margin(1e-6));
    CHECK(s.steps[0].busy_us == Approx(e.busy).margin(1e-6));
    CHECK(s.steps[0].idle_us >= 0);
  }
}

TEST_CASE("real traces (HolisticTraceAnalysis): steps by launch, NCCL kernels, sizes, against a sweep", "[trace]") {
  struct Case {
    const char* file;
    std::int64_t rank, world, steps, nccl_ops;
    const char* device;
  };
  for (const Case c : {Case{"data/traces/hta/nccl_data.json.gz", 0, 2, 3, 21, "NVIDIA A100-PG509-200"},
                       Case{"data/traces/hta/sampled_rank-0.json.gz", 0, 128, 2, 10, ""}}) {
    INFO(c.file);
    const auto t = calibration::read_kineto_trace(repo_file(c.file));
    CHECK(t.rank == c.rank);
    CHECK(t.world_size == c.world);
    CHECK(t.device_name == c.device);
    const auto s = calibration::summarize(t, test::trace_classes());
    REQUIRE(static_cast<std::int64_t>(s.steps.size()) == c.steps);
    // The oracle assigns each op by a linear scan of the CPU steps and sweeps its endpoints.
    std::map<std::int64_t, std::vector<std::pair<calibration::Interval, OpClass>>> by_step;
    std::int64_t nccl = 0;
    double bytes = 0;
    for (const auto& op : t.ops) {
      const auto launch = t.launch_us.find(op.correlation);
      if (launch == t.launch_us.end()) continue;
      for (const auto& st : t.cpu_steps)
        if (launch->second >= st.start_us && launch->second <= st.end_us) {
          const auto cls = test::trace_classes().classify(op);
          by_step[st.number].push_back({{op.start_us, op.end_us}, cls});
          if (op.name.str().find("ncclKernel_") != std::string::npos) ++nccl;
          if (calibration::is_communication(cls) && op.message_bytes > 0) bytes += op.message_bytes;
          break;
        }
    }
    CHECK(nccl == c.nccl_ops);
    double summed_bytes = 0;
    for (const auto& st : s.steps) {
      const auto e = sweep(by_step.at(st.step));
      CHECK(st.communication_us == Approx(e.comm).epsilon(1e-9));
      CHECK(st.exposed_communication_us == Approx(e.exposed).epsilon(1e-9));
      CHECK(st.busy_us == Approx(e.busy).epsilon(1e-9));
      CHECK(st.busy_us + st.idle_us == Approx(st.wall_us).epsilon(1e-9));
      summed_bytes += st.p2p_bytes + st.collective_bytes;
    }
    CHECK(summed_bytes == Approx(bytes));
  }
  // The newer trace's all-reduces carry their sizes (fp32 elements): every one is sized.
  const auto s = calibration::summarize(calibration::read_kineto_trace(repo_file("data/traces/hta/nccl_data.json.gz")), test::trace_classes());
  for (const auto& st : s.steps) {
    CHECK(st.unsized_communication_ops == 0);
    CHECK(st.collective_bytes > 0);
    CHECK(st.class_ops[index(OpClass::Collective)] == 7);
  }
}

TEST_CASE("hostile traces: one InputError naming the file and what was expected", "[trace][hostile]") {
  test::TempDir dir;
  const std::string good = kineto_json({{0, 1000}}, {{"flash_fwd_kernel", 7, 1, 10, 5, ""}});
  const auto fails = [&](const std::string& name, const std::string& bytes, const std::string& needle) {
    INFO(name);
    const auto path = dir.write(name, bytes);
    try {
      (void)calibration::read_kineto_trace(path);
      FAIL("accepted");
    } catch (const models::InputError& e) {
      CHECK(e.file() == path);
      CHECK_THAT(std::string(e.what()), Catch::Contains(needle));
    }
  };
  const std::string gz = test::gzip(good);
  fails("truncated.json.gz", gz.substr(0, gz.size() / 2), "truncated gzip");
  std::string damaged = gz;
  damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0x5a);
  damaged[damaged.size() / 2 + 1] = static_cast<char>(damaged[damaged.size() / 2 + 1] ^ 0x5a);
  fails("damaged.json.gz", damaged, "gzip");
  fails("cut.json", good.substr(0, good.size() / 2), "malformed JSON");
  fails("empty.json", "", "malformed JSON");
  fails("no_events.json", R"({"schemaVersion": 1})", "traceEvents");
  fails("scalar.json", "42", "traceEvents");
  fails("cpu_only.json", R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1, "dur": 3}]})",
        "no GPU operations");
  fails("numbers.json", "[1234567, 1234567, 0]", "expected trace events");
  fails("nested.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 3}, [1]]})",
        "expected trace events");
  fails("negative.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -3}]})", "dur");
  fails("string_dur.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": "3"}]})", "dur");
  fails("no_ts.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "dur": 3}]})", "ts");
  fails("huge.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e400, "dur": 3}]})", "malformed JSON");
  fails("deep.json", R"({"traceEvents": [{"ph": "X", "args": )" + std::string(100, '[') + std::string(100, ']') + "}]}",
        "deeper than 64");
  fails("deep_array.json", std::string(100, '[') + std::string(100, ']'), "expected trace events");
  // A small archive that inflates past the limit stops at the limit.
  const auto bomb = dir.write("bomb.json.gz", test::gzip(std::string(1 << 20, ' ') + good));
  CHECK_THROWS_WITH(calibration::read_trace_text(bomb, 1 << 16), Catch::Contains("decompresses to more than"));
  // The error of a malformed line names the line.
  try {
    (void)calibration::parse_kineto_trace("{\"traceEvents\": [\n{\"ph\": \"X\",\n oops}\n]}", "t.json");
    FAIL("accepted");
  } catch (const models::InputError& e) {
    CHECK(e.line() == 3);
  }
}

TEST_CASE("kernel class rules: order, kinds, collectives, bad rules are InputErrors", "[trace]") {
  calibration::GpuOp op;
  op.name = "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t>>";
  CHECK(test::trace_classes().classify(op) == OpClass::AttentionFwd);  // before the GEMM rule's "cutlass"
  op.name = "cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnBwdSm90<Mainloop, Epilogue, Scheduler>>>";
  CHECK(test::trace_classes().classify(op) == OpClass::AttentionBwd);
  op.name = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_kernel0_0";
  CHECK(test::trace_classes().classify(op) == OpClass::AttentionFwd);
  op.name = "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x128_1x";
  CHECK(test::trace_classes().classify(op) == OpClass::AttentionBwd);
  op.name = "nvjet_tst_128x96_64x7_4x1_v_bz_TNN";
  CHECK(test::trace_classes().classify(op) == OpClass::Gemm);
  op.name = "some_custom_kernel";
  CHECK(test::trace_classes().classify(op) == OpClass::Other);
  op.collective = "recv";
  CHECK(test::trace_classes().classify(op) == OpClass::P2p);
  op.kind = calibration::GpuOp::Kind::Memcpy;
  op.collective.clear();
  CHECK(test::trace_classes().classify(op) == OpClass::Memory);

  test::TempDir dir;
  const auto bad = [&](const std::string& body, const std::string& field) {
    INFO(body);
    try {
      (void)calibration::KernelClasses::load(dir.write("c.json", body));
      FAIL("accepted");
    } catch (const models::InputError& e) {
      CHECK(e.field() == field);
    }
  };
  bad(R"({"rules": []})", "rules");
  bad(R"({"rules": [{"class": "attention", "patterns": ["x"]}]})", "rules[0].class");
  bad(R"({"rules": [{"class": "gemm", "patterns": ["(unclosed"]}]})", "rules[0].patterns");
  bad(R"({"rules": [{"class": "gemm"}]})", "rules[0]");
  bad(R"({"rules": [{"class": "gemm", "kinds": ["dma"]}]})", "rules[0].kinds");
  bad(R"({"rules": [{"class": "gemm", "pattern": ["x"]}]})", "rules[0].pattern");
  bad(R"({"rules": [{"class": "gemm", "patterns": ["x"]}], "extra": 1})", "extra");
}
