// The user questions of issue 26 as a user asks them: the first answer is a production library's
// configuration, the best of each strategy is in view, and predict, given the plan's choices,
// reports the plan's memory (one story across commands).
#include <cmath>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/cli_run.hpp"

using namespace ringsim::test;
using nlohmann::json;

namespace {

std::string tile_of(const json& p) {
  return std::to_string(p.at("tile_q").get<long long>()) + "x" + std::to_string(p.at("tile_k").get<long long>());
}

// The plan's first answer: production, strategies in view, and predict agrees on its memory.
void check_plan(const std::string& request, std::size_t min_strategies) {
  INFO("ringsim plan " << request);
  const auto r = run("plan " + request + " --format json --top 3");
  REQUIRE(r.code == 0);
  const auto j = json::parse(r.out);
  REQUIRE_FALSE(j.at("plans").empty());
  const auto& first = j.at("plans").at(0);
  CHECK(first.at("maturity") == "production");
  CHECK(first.at("fits_memory") == true);
  std::set<std::string> families;
  for (const auto& b : j.at("best_per_strategy")) {
    CHECK(b.at("maturity") == "production");
    families.insert(b.at("strategy").get<std::string>());
  }
  CHECK(families.size() >= min_strategies);

  const std::string predict = "predict --hardware " + j.at("hardware").get<std::string>() + " --model " +
                              j.at("model").get<std::string>() + " --seq " + std::to_string(first.at("n_seq").get<long long>()) +
                              " --mesh " + std::to_string(first.at("mp").get<long long>()) + "x" +
                              std::to_string(first.at("sp").get<long long>()) + " --dp " +
                              std::to_string(first.at("dp").get<long long>()) + " --zero " +
                              first.at("zero").get<std::string>() + " --recompute " +
                              first.at("recompute").get<std::string>() + " --cp " + first.at("cp").get<std::string>() +
                              " --layout " + first.at("layout").get<std::string>() + " --impl " +
                              first.at("impl").get<std::string>() + " --tile " + tile_of(first) + " --format json";
  INFO("ringsim " << predict);
  const auto p = run(predict);
  REQUIRE(p.code == 0);
  const auto row = json::parse(p.out).at("results").at(0);
  CHECK(row.at("memory_bytes").get<double>() == Approx(first.at("memory_bytes").get<double>()).epsilon(1e-12));
  CHECK(row.at("fits_memory") == first.at("fits_memory"));
  CHECK(row.at("step_s").get<double>() == Approx(first.at("step_s").get<double>()).epsilon(1e-12));
}

}  // namespace

TEST_CASE("user question (a): Llama-3-8B, 1M tokens, 64 x H100 over 8 nodes", "[cli][plan][user]") {
  check_plan("--hardware h100-sxm --model llama3-8b --seq 1048576 --devices 64", 4);
}

TEST_CASE("user question (b): Llama-3-70B, 128k tokens, 32 x H100 with tensor parallelism 8", "[cli][plan][user]") {
  // With Megatron's sequence parallelism (the default) TP 8 plans fit; without it, the norms'
  // and residuals' activations stay whole on every TP rank and the plans need more devices.
  check_plan("--hardware h100-sxm --model llama3-70b --seq 131072 --devices 32 --mp 8", 3);
}

TEST_CASE("user question (c): packed documents (lognormal, mean 4k) on 16 x H100", "[cli][plan-docs][user]") {
  const auto r = run("plan-docs lognormal:4096:1.0:1:2000 --hardware h100-sxm --model llama3-8b --seq 131072 --mesh 1x16");
  REQUIRE(r.code == 0);
  // Every bucket's first row is a production library (no [research] or [reference] label).
  std::size_t firsts = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("     1  ", 0) != 0) continue;
    ++firsts;
    INFO(line);
    CHECK(line.find("[research") == std::string::npos);
    CHECK(line.find("[reference") == std::string::npos);
  }
  CHECK(firsts >= 2);
  // More than one strategy family competes in the ranking (rank lines: "  rank  cp  layout ...").
  std::set<std::string> families;
  std::istringstream rows(r.out);
  for (std::string line; std::getline(rows, line);) {
    std::istringstream words(line);
    std::string rank, cp;
    if (!(words >> rank >> cp) || rank.find_first_not_of("0123456789") != std::string::npos) continue;
    families.insert(cp.substr(0, cp.find(':')));
  }
  INFO(r.out);
  CHECK(families.size() >= 2);
  CHECK(families.count("usp") == 1);
}
