// Parameters by kernel family: every family's parameters are declared once (profile_params), a
// catalog profile holds the common ones and its family's, and a field of another family is
// refused with the file, the field and the families that read it.
#include <algorithm>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/catalog/resolve.hpp"
#include "models/cost/profile_params.hpp"
#include "models/families/attention_cost.hpp"
#include "models/io/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim::models;

TEST_CASE("each family's parameters are declared, belong to a family and are read by the cost model",
          "[config][families]") {
  std::set<std::string> claimed;
  for (const auto& name : attention_cost_families()) {
    INFO(name);
    const auto family = make_attention_cost(name);
    CHECK(family->family() == name);
    for (const auto& p : family->own_parameters()) {
      INFO(p);
      const auto* decl = find_profile_parameter(p);
      REQUIRE(decl != nullptr);
      CHECK_FALSE(decl->common);
      claimed.insert(std::string(p));
    }
  }
  // A family parameter no family reads could never be set in any profile.
  for (const auto& p : profile_parameters()) {
    INFO(p.name);
    CHECK((p.common || claimed.count(std::string(p.name)) == 1));
    CHECK(p.lower <= p.upper);
    Profile prof;
    CHECK(prof.parameter(p.name) == &(prof.*(p.field)));
  }
}

TEST_CASE("a catalog profile holds its family's parameters and writes only those", "[config][families]") {
  const Catalog cat;
  const auto hw = cat.hardware("a100-80gb");
  const auto flash = cat.profile("", hw, "ring-flash-attn");
  CHECK(flash.kernel_family == "flash");
  CHECK(flash.reads("softmax_overlap"));
  CHECK(flash.reads("attention_efficiency"));  // common
  CHECK_FALSE(flash.reads("masked_tile_penalty"));
  const auto j = flash.to_json();
  CHECK(j.contains("softmax_overlap"));
  CHECK_FALSE(j.contains("masked_tile_penalty"));
  CHECK_FALSE(j.contains("sparse_prep_bytes_per_element"));
  const auto tiles = cat.profile("", hw, "ringsim-tiles");
  CHECK(tiles.kernel_family == "blockwise");
  CHECK(tiles.to_json().contains("masked_tile_penalty"));
  CHECK_FALSE(tiles.to_json().contains("host_step_s"));
  // Outside a catalog (no family) every parameter is kept and written.
  const Profile bare = Profile::spec_default(hw);
  CHECK(bare.reads("masked_tile_penalty"));
  CHECK(bare.to_json().contains("host_step_s"));
  // Every shipped profile loads under its implementation: none carries another family's field.
  for (const auto& impl : cat.implementation_names())
    for (const auto& h : cat.hardware_names()) {
      INFO(impl << " on " << h);
      if (cat.has_profile(cat.hardware(h), impl)) CHECK_NOTHROW(cat.profile("", cat.hardware(h), impl));
    }
}

TEST_CASE("a profile field of another family is refused with its file, field and family", "[config][families][errors]") {
  const ringsim::test::TempDir tmp;
  const Catalog cat;
  const auto hw = cat.hardware("a100-80gb");
  const auto file = tmp.write("p.json", R"({"name": "x", "masked_tile_penalty": 0.3})");
  try {
    (void)cat.profile(file, hw, "ring-flash-attn");
    FAIL("accepted a blockwise parameter in a flash profile");
  } catch (const InputError& e) {
    CHECK(e.file() == file);
    CHECK(e.field() == "masked_tile_penalty");
    CHECK_THAT(e.message(), Catch::Contains("kernel family flash") && Catch::Contains("blockwise, scfa"));
  }
  // The same file is a valid profile of an implementation whose family reads the field.
  CHECK(cat.profile(file, hw, "ringsim-tiles").masked_tile_penalty == 0.3);
  const auto flash_file = tmp.write("f.json", R"({"name": "y", "host_step_s": 1e-4})");
  CHECK_THROWS_WITH(cat.profile(flash_file, hw, "jax-blockwise"), Catch::Contains("flash family"));
  CHECK(cat.profile(flash_file, hw, "te-p2p").host_step_s == 1e-4);
}
