#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/catalog/resolve.hpp"
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

TEST_CASE("config readers refuse fields they do not read, naming file, field and the closest known one",
          "[config][errors]") {
  const Catalog cat;
  const auto root = std::string(RINGSIM_SOURCE_ROOT);
  const auto read = [](const std::string& path) {
    std::ifstream f(path);
    return nlohmann::json::parse(f);
  };
  const auto error_of = [](auto&& load) -> std::pair<std::string, std::string> {
    try {
      load();
    } catch (const InputError& e) {
      return {e.field(), e.message()};
    }
    return {"no error", ""};
  };
  auto profile = read(root + "/configs/profiles/ring-flash-attn/a100-80gb.json");
  const auto hw = cat.hardware("a100-80gb");
  CHECK(error_of([&] { (void)Profile::from_json(profile, "p.json", Profile::spec_default(hw)); }).first == "no error");
  profile["matmul_eficiency"] = 0.5;
  const auto [field, message] = error_of([&] { (void)Profile::from_json(profile, "p.json", Profile::spec_default(hw)); });
  CHECK(field == "matmul_eficiency");
  CHECK(message.find("did you mean matmul_efficiency") != std::string::npos);
  profile.erase("matmul_eficiency");
  profile["provenance"]["calibated"] = true;  // nested objects are checked member by member
  CHECK(error_of([&] { (void)Profile::from_json(profile, "p.json", Profile::spec_default(hw)); }).first == "provenance.calibated");
  profile["provenance"].erase("calibated");
  profile["notes"] = "free text";  // documentation keys are always allowed
  profile["kernel_note"] = "free text";
  CHECK(error_of([&] { (void)Profile::from_json(profile, "p.json", Profile::spec_default(hw)); }).first == "no error");
  // A hardware or model file given as a profile is refused, not run on defaults.
  CHECK(error_of([&] { (void)Profile::from_json(read(root + "/configs/hardware/h100-sxm.json"), "h.json", Profile::spec_default(hw)); }).first !=
        "no error");
  CHECK(error_of([&] { (void)Profile::from_json(read(root + "/configs/models/llama3-8b.json"), "m.json", Profile::spec_default(hw)); }).first !=
        "no error");
  auto h = read(root + "/configs/hardware/h100-sxm.json");
  CHECK(error_of([&] { (void)Hardware::from_json(h, "h.json"); }).first == "no error");
  h["intra_node"]["latency_ss"] = h["intra_node"]["latency_s"];
  CHECK(error_of([&] { (void)Hardware::from_json(h, "h.json"); }).first == "intra_node.latency_ss");
  auto m = read(root + "/configs/models/llama3-8b.json");
  m["kv_head"] = 8;
  CHECK(error_of([&] { (void)ModelConfig::from_json(m, "m.json"); }).first == "kv_head");
}
