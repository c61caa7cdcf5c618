// `plan --emit megatron`: every flag the emitter prints is one Megatron's parser defines at the
// cited commit (data/stacks/megatron_flags.csv), over plans that take every branch (context
// parallelism by each TE comm type, USP's hierarchy, tensor and sequence parallelism, 1F1B and
// interleaved pipelines, each recomputation and ZeRO stage, FP8); the values are the plan's; a
// plan Megatron cannot run is refused.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "models/io/error.hpp"
#include "planning/emit.hpp"
#include "planning/plan.hpp"

using namespace ringsim;

namespace {

std::set<std::string> cited_flags() {
  std::ifstream in(std::string(RINGSIM_TEST_DATA) + "/stacks/megatron_flags.csv");
  REQUIRE(in);
  std::set<std::string> flags;
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("--", 0) == 0) flags.insert(line.substr(0, line.find(',')));
  return flags;
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
  const auto cited = cited_flags();
  REQUIRE(cited.size() >= 15);
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
    const auto f = flags_of(planning::emit_launch(x, r, planning::Stack::Megatron));
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
    const auto text = planning::emit_launch(c.x, r, planning::Stack::Megatron);
    INFO(text);
    for (const auto& [flag, value] : flags_of(text)) {
      INFO(flag);
      CHECK(cited.count(flag) == 1);
    }
  }
  r.memory.precision = models::TrainingPrecision::Fp8;
  const auto p = flags_of(planning::emit_launch(piped, r, planning::Stack::Megatron));
  CHECK(p.at("--pipeline-model-parallel-size") == "4");
  CHECK(p.at("--num-virtual-stages-per-pipeline-rank") == "2");
  CHECK(p.at("--recompute-granularity") == "full");
  CHECK(p.at("--global-batch-size") == "16");  // 8 micro-batches x dp 2
  CHECK(p.at("--fp8-format") == "hybrid");
  CHECK(p.count("--use-distributed-optimizer") == 1);
  r.memory.precision = models::TrainingPrecision::Bf16;
  const auto o = flags_of(planning::emit_launch(one_f, r, planning::Stack::Megatron));
  CHECK(o.at("--pipeline-model-parallel-size") == "2");
  CHECK(o.count("--num-virtual-stages-per-pipeline-rank") == 0);
  CHECK(o.at("--recompute-granularity") == "selective");
  CHECK(flags_of(planning::emit_launch(no_cp, r, planning::Stack::Megatron)).count("--cp-comm-type") == 0);
}

TEST_CASE("plan --emit megatron refuses a ring Megatron does not run, and an unknown stack", "[plan][emit]") {
  const planning::PlanRequest r;
  try {
    (void)planning::emit_launch(plan("ring-flash-attn", "ring", 1, 8, 1), r, planning::Stack::Megatron);
    FAIL("ring-flash-attn's ring emitted as Megatron flags");
  } catch (const models::InputError& e) {
    CHECK(e.field() == "emit");
    CHECK(std::string(e.what()).find("te-p2p") != std::string::npos);
  }
  CHECK_THROWS_AS(planning::parse_stack("deepspeed"), models::InputError);
}
