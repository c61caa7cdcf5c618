// The memory model against the Ring Attention paper's maximum-context table (data/
// ring_attention_max_context.csv), run as the paper ran it: its code (jax-blockwise), FSDP over
// every device (ZeRO-3 over sp), full recomputation, the paper's precision, one sequence over a
// ring of all devices. Out of sample: nothing in the memory model is fitted to this table.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>

#include "models/io/parse.hpp"
#include "models/memory/memory.hpp"
#include "tests/support/scenario.hpp"

using namespace ringsim::models;
using ringsim::test::resolve_scenario;

namespace {

struct Row {
  std::string setup, hardware, model, precision;
  std::int64_t devices = 0, published = 0;  // tokens
};

std::vector<Row> table() {
  std::ifstream in(std::string(RINGSIM_TEST_DATA) + "/ring_attention_max_context.csv");
  std::vector<Row> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    const auto f = split(line, ',');
    REQUIRE(f.size() == 9);
    rows.push_back({f[0], f[1], f[3], f[4], parse_int(f[2], "devices"), parse_int(f[8], "ring_attention_k") * 1024});
  }
  return rows;
}

// The longest sequence, doubling from 1024 tokens per device, that fits.
std::int64_t max_context(const Row& r) {
  MemoryOptions o;
  o.sharding = Sharding::Zero3;
  o.recompute = Recompute::Full;
  o.settings.precision = parse_training_precision(r.precision);
  std::int64_t best = 0;
  for (std::int64_t n = r.devices * 1024; n <= (std::int64_t{1} << 27); n *= 2) {
    const auto s = resolve_scenario(r.hardware, r.model, 1, r.devices, n, "contiguous", "causal", TileShape{128, 128},
                                    "jax-blockwise");
    if (!estimate_memory(s, o).fits) break;
    best = n;
  }
  return best;
}

}  // namespace

TEST_CASE("memory: the Ring Attention paper's maximum contexts, run as the paper ran them", "[memory][paper]") {
  const auto rows = table();
  REQUIRE(rows.size() == 13);
  int within_two = 0;
  for (const auto& r : rows) {
    const auto predicted = max_context(r);
    const double ratio = static_cast<double>(predicted) / static_cast<double>(r.published);
    INFO(r.setup << " " << r.model << ": published " << r.published / 1024 << "K, predicted " << predicted / 1024
                 << "K (x" << ratio << ")");
    REQUIRE(predicted > 0);
    // docs/memory.md reports every row; 5 of 13 are a factor of 4 off (the 32-GPU rows too short,
    // the TPU rows of 7B and larger too long), none further.
    CHECK(std::abs(std::log2(ratio)) <= 2.0 + 1e-9);
    // The setting the paper states in full (8 A100 80GB in one node, fp32, full checkpointing,
    // FSDP) is where the check is sharp.
    if (r.devices == 8) CHECK(std::abs(std::log2(ratio)) <= 1.0 + 1e-9);
    within_two += std::abs(std::log2(ratio)) <= 1.0 + 1e-9;
  }
  CHECK(within_two >= 8);
}
