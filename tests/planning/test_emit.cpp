// `plan --emit megatron|torchtitan|ring-flash-attn|deepspeed`: every flag, field, function or key
// the emitter prints is one the stack defines at the cited commit (data/stacks/: megatron_flags.csv,
// torchtitan_fields.csv, ring_flash_attn_api.csv, deepspeed_config.csv), over plans that take every
// branch (context parallelism by each TE comm type, USP's hierarchy, tensor and sequence
// parallelism, 1F1B and interleaved pipelines, each recomputation and ZeRO stage, FP8, each load
// balancer and layout); the values are the plan's; a plan the stack cannot run is refused.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/catalog/catalog.hpp"
#include "models/io/error.hpp"
#include "planning/emit.hpp"
#include "planning/plan.hpp"

using namespace ringsim;

namespace {

// The first column of a data/stacks/ file: what it cites (comment lines and the header left out).
std::set<std::string> cited(const std::string& file) {
  std::ifstream in(std::string(RINGSIM_TEST_DATA) + "/stacks/" + file);
  REQUIRE(in);
  std::set<std::string> out;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (!std::exchange(header, false)) out.insert(line.substr(0, line.find(',')));
  }
  return out;
}

// flag -> its value ("" for a switch), from the emitted lines that are not comments.
std::map<std::string, std::string> flags_of(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    REQUIRE(line.rfind("--", 0) == 0);
    if (line.size() >= 2 && line.compare(line.size() - 2, 2, " \\") == 0) line.resize(line.size() - 2);
    const auto space = line.find(' ');
    out[line.substr(0, space)] = space == std::string::npos ? "" : line.substr(space + 1);
  }
  return out;
}

const models::ModelConfig& model() {
  static const models::ModelConfig m = models::Catalog().model("llama3-70b");
  return m;
}

planning::SweepResult plan(const std::string& impl, const std::string& cp, std::int64_t mp, std::int64_t sp, std::int64_t dp) {
  planning::SweepResult x;
  x.ok = true;
  x.hardware = "h100-sxm";
  x.model = "llama3-70b";
  x.impl = impl;
  x.point.spec.mp = mp;
  x.point.spec.sp = sp;
  x.point.spec.cp = models::Strategy::parse(cp);
  x.point.spec.n_seq = 131072;
  x.point.spec.batch = 1;
  x.point.spec.layout = models::LayoutSpec::parse("zigzag");
  x.point.dp = dp;
  x.step_s = 10;
  x.tokens_per_s = 1e4;
  return x;
}

}  // namespace

TEST_CASE("plan --emit megatron prints only cited flags, with the plan's values", "[plan][emit]") {
  const auto flags = cited("megatron_flags.csv");
  REQUIRE(flags.size() >= 15);
  planning::PlanRequest r;
  struct Case {
    planning::SweepResult x;
    models::TrainingPrecision precision;
  };
  std::vector<Case> cases;
  for (const auto& [impl, cp, comm] : {std::tuple{"te-p2p", "ring", "p2p"}, {"te-all-gather", "allgather", "all_gather"},
                                       {"te-a2a", "ulysses", "a2a"}, {"te-a2a-p2p", "usp:4x2", "a2a+p2p"}}) {
    auto x = plan(impl, cp, 2, 8, 4);
    cases.push_back({x, models::TrainingPrecision::Bf16});
    INFO(impl);
    const auto f = flags_of(planning::emit_launch(x, r, model(), planning::Stack::Megatron));
    CHECK(f.at("--cp-comm-type") == comm);
    CHECK(f.at("--context-parallel-size") == "8");
    CHECK(f.at("--tensor-model-parallel-size") == "2");
    CHECK(f.count("--sequence-parallel") == 1);
    CHECK(f.at("--seq-length") == "131072");
    CHECK(f.at("--global-batch-size") == "4");  // 1 sequence x 1 micro-batch x dp 4
    CHECK(f.count("--hierarchical-context-parallel-sizes") == (std::string(comm) == "a2a+p2p" ? 1u : 0u));
    if (std::string(comm) == "a2a+p2p") CHECK(f.at("--hierarchical-context-parallel-sizes") == "4 2");
  }
  // Pipelines, recomputation, ZeRO and FP8.
  auto piped = plan("te-p2p", "ring", 1, 4, 2);
  piped.point.pipeline = models::PipelineSchedule::parse("interleaved:2", 4, 8);
  piped.recompute = models::Recompute::Full;
  piped.point.zero = models::Sharding::Zero1;
  cases.push_back({piped, models::TrainingPrecision::Fp8});
  auto one_f = plan("te-p2p", "ring", 1, 4, 2);
  one_f.point.pipeline = models::PipelineSchedule::parse("1f1b", 2, 4);
  one_f.recompute = models::Recompute::Attention;
  one_f.point.zero = models::Sharding::Zero3;
  cases.push_back({one_f, models::TrainingPrecision::Bf16});
  auto no_cp = plan("ring-flash-attn", "ring", 8, 1, 1);  // no context parallelism: any library's attention
  no_cp.recompute = models::Recompute::Selective;
  cases.push_back({no_cp, models::TrainingPrecision::Bf16});
  for (const auto& c : cases) {
    r.memory.precision = c.precision;
    const auto text = planning::emit_launch(c.x, r, model(), planning::Stack::Megatron);
    INFO(text);
    for (const auto& [flag, value] : flags_of(text)) {
      INFO(flag);
      CHECK(flags.count(flag) == 1);
    }
  }
  r.memory.precision = models::TrainingPrecision::Fp8;
  const auto p = flags_of(planning::emit_launch(piped, r, model(), planning::Stack::Megatron));
  CHECK(p.at("--pipeline-model-parallel-size") == "4");
  CHECK(p.at("--num-virtual-stages-per-pipeline-rank") == "2");
  CHECK(p.at("--recompute-granularity") == "full");
  CHECK(p.at("--global-batch-size") == "16");  // 8 micro-batches x dp 2
  CHECK(p.at("--fp8-format") == "hybrid");
  CHECK(p.count("--use-distributed-optimizer") == 1);
  r.memory.precision = models::TrainingPrecision::Bf16;
  const auto o = flags_of(planning::emit_launch(one_f, r, model(), planning::Stack::Megatron));
  CHECK(o.at("--pipeline-model-parallel-size") == "2");
  CHECK(o.count("--num-virtual-stages-per-pipeline-rank") == 0);
  CHECK(o.at("--recompute-granularity") == "selective");
  CHECK(flags_of(planning::emit_launch(no_cp, r, model(), planning::Stack::Megatron)).count("--cp-comm-type") == 0);
}

TEST_CASE("plan --emit megatron refuses a ring Megatron does not run, and an unknown stack", "[plan][emit]") {
  const planning::PlanRequest r;
  try {
    (void)planning::emit_launch(plan("ring-flash-attn", "ring", 1, 8, 1), r, model(), planning::Stack::Megatron);
    FAIL("ring-flash-attn's ring emitted as Megatron flags");
  } catch (const models::InputError& e) {
    CHECK(e.field() == "emit");
    CHECK(std::string(e.what()).find("te-p2p") != std::string::npos);
  }
  CHECK_THROWS_AS(planning::parse_stack("nemo"), models::InputError);
  try {
    (void)planning::emit_launch(plan("te-p2p", "ring", 1, 8, 1), r, model(), planning::Stack::Torchtitan);
    FAIL("TransformerEngine's ring emitted as a torchtitan configuration");
  } catch (const models::InputError& e) {
    CHECK(std::string(e.what()).find("torch-cp") != std::string::npos);
  }
}

TEST_CASE("plan --emit torchtitan sets only cited fields, with the plan's values", "[plan][emit]") {
  const auto fields = cited("torchtitan_fields.csv");
  REQUIRE(fields.size() >= 12);
  // field -> value from the emitted "    config.FIELD = VALUE" lines.
  const auto fields_of = [](const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    std::string line;
    const std::string prefix = "    config.";
    while (std::getline(in, line))
      if (line.rfind(prefix, 0) == 0) {
        const auto eq = line.find(" = ");
        out[line.substr(prefix.size(), eq - prefix.size())] = line.substr(eq + 3);
      }
    return out;
  };
  planning::PlanRequest r;
  auto ring = plan("torch-cp", "ring", 2, 8, 4);
  ring.point.zero = models::Sharding::Zero3;
  ring.recompute = models::Recompute::Selective;
  auto piped = plan("torch-cp", "allgather", 1, 4, 2);
  piped.point.spec.layout = models::LayoutSpec::parse("ptrr");
  piped.point.pipeline = models::PipelineSchedule::parse("interleaved:2", 4, 8);
  piped.point.zero = models::Sharding::Zero2;
  piped.recompute = models::Recompute::Full;
  auto ddp = plan("ring-flash-attn", "ring", 1, 1, 8);  // no context parallelism: any library's attention
  for (const auto* x : {&ring, &piped, &ddp}) {
    const auto text = planning::emit_launch(*x, r, model(), planning::Stack::Torchtitan);
    INFO(text);
    CHECK(text.find("def ringsim_plan(config):") != std::string::npos);
    for (const auto& [field, value] : fields_of(text)) {
      INFO(field);
      CHECK(fields.count(field) == 1);
    }
  }
  const auto f = fields_of(planning::emit_launch(ring, r, model(), planning::Stack::Torchtitan));
  CHECK(f.at("parallelism.data_parallel_shard_degree") == "4");  // ZeRO-3: FSDP over the replicas
  CHECK(f.at("parallelism.data_parallel_replicate_degree") == "1");
  CHECK(f.at("parallelism.context_parallel_degree") == "8");
  CHECK(f.at("parallelism.context_parallel_load_balancer") == "\"headtail\"");  // zigzag
  CHECK(f.at("parallelism.tensor_parallel_degree") == "2");
  CHECK(f.at("training.num_tokens_per_microbatch_per_dp_rank") == "131072");
  CHECK(f.at("activation_checkpoint") == "SelectiveAC.Config()");
  const auto p = fields_of(planning::emit_launch(piped, r, model(), planning::Stack::Torchtitan));
  CHECK(p.at("parallelism.pipeline_parallel_schedule") == "\"Interleaved1F1B\"");
  CHECK(p.at("parallelism.pipeline_parallel_layers_per_stage") == std::to_string(model().layers / 8));  // 4 stages x 2 chunks
  CHECK(p.at("parallelism.num_pp_microbatches") == "8");
  CHECK(p.at("parallelism.fsdp_reshard_after_forward") == "\"never\"");
  CHECK(p.at("parallelism.context_parallel_load_balancer") == "\"ptrr\"");
  CHECK(p.at("activation_checkpoint") == "FullAC.Config()");
  const auto d = fields_of(planning::emit_launch(ddp, r, model(), planning::Stack::Torchtitan));
  CHECK(d.at("parallelism.data_parallel_replicate_degree") == "8");  // ZeRO 0: DDP replicas
  CHECK(d.count("parallelism.context_parallel_load_balancer") == 0);
}

TEST_CASE("plan --emit ring-flash-attn calls the cited function of the plan's layout and shards as its tests do",
          "[plan][emit]") {
  std::map<std::string, std::string> api;  // function -> layout
  {
    std::ifstream in(std::string(RINGSIM_TEST_DATA) + "/stacks/ring_flash_attn_api.csv");
    REQUIRE(in);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#' || line.rfind("function,", 0) == 0) continue;
      const auto a = line.find(','), b = line.find(',', a + 1);
      api[line.substr(0, a)] = line.substr(a + 1, b - a - 1);
    }
  }
  REQUIRE(api.size() == 3);
  const planning::PlanRequest r;
  for (const char* layout : {"contiguous", "zigzag", "striped"}) {
    auto x = plan("ring-flash-attn", "ring", 2, 8, 1);
    x.point.spec.layout = models::LayoutSpec::parse(layout);
    const auto text = planning::emit_launch(x, r, model(), planning::Stack::RingFlashAttn);
    INFO(text);
    const auto at = text.find("from ring_flash_attn import ");
    REQUIRE(at != std::string::npos);
    const auto fn = text.substr(at + 28, text.find('\n', at) - at - 28);
    REQUIRE(api.count(fn) == 1);
    CHECK(api.at(fn) == layout);
    CHECK(text.find("RING = 8") != std::string::npos);
    CHECK(text.find("TP = 2") != std::string::npos);
    CHECK(text.find("return " + fn + "(q, k, v, causal=True, group=group)") != std::string::npos);
  }
  CHECK_THROWS_AS(planning::emit_launch(plan("te-p2p", "ring", 1, 8, 1), r, model(), planning::Stack::RingFlashAttn),
                  models::InputError);
  CHECK_THROWS_AS(planning::emit_launch(plan("ring-flash-attn", "ulysses", 1, 8, 1), r, model(), planning::Stack::RingFlashAttn),
                  models::InputError);
}

TEST_CASE("plan --emit deepspeed writes only cited keys, with the plan's ZeRO stage and Ulysses group", "[plan][emit]") {
  const auto keys = cited("deepspeed_config.csv");
  const planning::PlanRequest r;
  auto x = plan("usp", "ulysses", 1, 8, 4);
  x.point.zero = models::Sharding::Zero3;
  x.point.pipeline = models::PipelineSchedule::parse("1f1b", 1, 4);  // 4 micro-batches, no pipeline
  const auto text = planning::emit_launch(x, r, model(), planning::Stack::DeepSpeed);
  INFO(text);
  // The JSON between the "# ds_config.json:" line and the next comment.
  const auto start = text.find('{');
  const auto end = text.find("\n#", start);
  const auto j = nlohmann::json::parse(text.substr(start, end - start));
  for (const auto& [key, value] : j.items()) {
    INFO(key);
    CHECK(keys.count(key) == 1);
  }
  CHECK(j.at("zero_optimization").at("stage") == 3);
  CHECK(j.at("sequence_parallel_size") == 8);
  CHECK(j.at("gradient_accumulation_steps") == 4);
  CHECK(text.find("DistributedAttention(") != std::string::npos);
  CHECK(keys.count("DistributedAttention") == 1);
  CHECK_THROWS_AS(planning::emit_launch(plan("te-p2p", "ring", 1, 8, 1), r, model(), planning::Stack::DeepSpeed),
                  models::InputError);
  CHECK_THROWS_AS(planning::emit_launch(plan("usp", "ulysses", 2, 4, 1), r, model(), planning::Stack::DeepSpeed),
                  models::InputError);
}
