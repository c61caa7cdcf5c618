#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "models/error.hpp"
#include "models/scenario.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim::models;

TEST_CASE("every catalog file loads, with a source for every figure", "[config]") {
  const Catalog cat;
  const auto hw = cat.hardware_names();
  const auto models = cat.model_names();
  CHECK(hw.size() >= 10);
  CHECK(models.size() >= 8);
  for (const auto& h : hw) {
    INFO(h);
    const auto x = cat.hardware(h);
    CHECK(x.name == h);
    CHECK(x.hbm_bytes > 1e9);
    CHECK(x.peak_flops_per_s(x.peak_bf16_per_s ? Precision::BF16 : Precision::FP32) > 1e12);
    CHECK_FALSE(x.sources.empty());
    const auto p = cat.profile("", x);
    CHECK_NOTHROW(p.validate(h));
  }
  for (const auto& m : models) {
    INFO(m);
    const auto x = cat.model(m);
    CHECK(x.heads % x.kv_heads == 0);
    CHECK(x.parameters() > 100000000);
  }
  CHECK(cat.model("llama3-8b").kv_heads == 8);
}

TEST_CASE("bad config files name the file, line and field", "[config][errors]") {
  const ringsim::test::TempDir tmp;
  const std::string path =
      tmp.write("hw.json", "{\n  \"name\": \"x\",\n  \"peak_flops_per_s\": {\"bf16\": {\"value\": 1e15, \"source\": \"a datasheet\"}},\n"
                           "  \"hbm_bytes\": {\"value\": 1e9}\n}\n");
  try {
    (void)Hardware::load_file(path);
    FAIL("accepted a figure without a source");
  } catch (const InputError& e) {
    CHECK(e.file() == path);
    CHECK(std::string(e.what()).find("source") != std::string::npos);
  }
  (void)tmp.write("hw.json", "{\n  \"name\": \"x\",\n  \"hbm_bytes\": oops\n}\n");
  try {
    (void)Hardware::load_file(path);
    FAIL("accepted malformed JSON");
  } catch (const InputError& e) {
    CHECK(e.line() == 3);
  }
  const Catalog cat;
  const auto hw = cat.hardware("a100-80gb");
  CHECK_THROWS_AS(cat.profile("no-such-profile", hw), InputError);
  CHECK_THROWS_AS(ModelConfig::attention_pseudo("attn:8:8"), InputError);
}
