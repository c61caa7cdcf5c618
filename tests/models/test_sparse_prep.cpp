// SCFA's preprocessing around the sparse kernel (gathers, hash sort, scatter): charged only for
// index-based masks, memory-bound and linear in tokens.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "models/analytic/analytic.hpp"
#include "models/io/error.hpp"
#include "models/catalog/resolve.hpp"

using namespace ringsim::models;

namespace {

ResolvedScenario one_device(const std::string& mask, std::int64_t n_seq) {
  ScenarioSpec s;
  s.hardware = "a100-40gb";
  s.model = "attn:8:8:64";
  s.mp = 1;
  s.sp = 1;
  s.n_seq = n_seq;
  s.batch = 2;
  s.mask = ringsim::models::MaskSpec::parse(mask);
  s.tile = TileShape{64, 64};
  return resolve(s, Catalog());
}

// The scenario again, with the profile changed and the cost model rebuilt from it.
void set_profile(ResolvedScenario& r, const Profile& p) {
  r.profile = p;
  r.cost = std::make_unique<CostModel>(r.hardware, r.profile, r.model, r.spec.mp, r.spec.batch, r.mask->heads(),
                                       r.mask->kind());
}

double attention_s(const ResolvedScenario& r) {
  const auto p = predict(r);
  return p.attention_fwd_s + p.attention_bwd_s;
}

}  // namespace

TEST_CASE("sparse preprocessing is charged only for index-based masks", "[analytic][sparse]") {
  for (const char* mask : {"causal", "full", "window:100"}) {
    auto r = one_device(mask, 2048);
    CHECK(r.cost->sparse_prep_fwd_s(2048) == 0);
    CHECK(r.cost->sparse_prep_bwd_s(2048) == 0);
    const double before = attention_s(r);
    Profile p = r.profile;
    p.sparse_prep_bytes_per_element = 1000;
    p.hash_sort_bytes_per_token = 1e5;
    p.sparse_kernel_efficiency = 0.1;
    set_profile(r, p);
    INFO(mask);
    CHECK(attention_s(r) == before);
  }
  for (const char* mask : {"qkdrop:0.5", "hash:4"}) {
    auto r = one_device(mask, 2048);
    INFO(mask);
    CHECK(r.cost->index_mask());
    CHECK(r.cost->sparse_prep_fwd_s(2048) > 0);
    CHECK(r.cost->sparse_prep_bwd_s(2048) > 0);
    Profile none = r.profile;
    none.sparse_prep_bytes_per_element = 0;
    none.hash_sort_bytes_per_token = 0;
    const double with = attention_s(r);
    const double prep = r.cost->sparse_prep_fwd_s(2048) + r.cost->sparse_prep_bwd_s(2048);
    set_profile(r, none);
    // One layer (attn: models have one): the whole difference is the preprocessing.
    CHECK(with - attention_s(r) == Approx(prep).epsilon(1e-12));
  }
}

TEST_CASE("sparse preprocessing is memory-bound bytes over HBM bandwidth, linear in tokens", "[analytic][sparse]") {
  auto q = one_device("qkdrop:0.5", 2048);
  const Profile& p = q.profile;
  // Per token: heads x batch x head_dim elements, sparse_prep_bytes_per_element each.
  const double bytes = 8.0 * 2 * 64 * p.sparse_prep_bytes_per_element * 2048;
  const double bw = q.hardware.hbm_bandwidth_bytes_per_s * p.memory_efficiency;
  CHECK(q.cost->sparse_prep_fwd_s(2048) == Approx(bytes / bw).epsilon(1e-12));
  CHECK(q.cost->sparse_prep_bwd_s(2048) == Approx(bytes / bw).epsilon(1e-12));
  CHECK(q.cost->sparse_prep_fwd_s(4096) == Approx(2 * q.cost->sparse_prep_fwd_s(2048)).epsilon(1e-12));
  // Hash adds the sort, forward only (the backward reuses the permutation).
  auto h = one_device("hash:4", 2048);
  const double sort = 8.0 * 2 * p.hash_sort_bytes_per_token * 2048 / bw;
  CHECK(h.cost->sparse_prep_fwd_s(2048) == Approx(bytes / bw + sort).epsilon(1e-12));
  CHECK(h.cost->sparse_prep_bwd_s(2048) == Approx(bytes / bw).epsilon(1e-12));
  // Through predict: the preprocessing share doubles when the sequence doubles.
  auto share = [](std::int64_t n) {
    auto r = one_device("qkdrop:0.5", n);
    const double with = attention_s(r);
    Profile none = r.profile;
    none.sparse_prep_bytes_per_element = 0;
    set_profile(r, none);
    return with - attention_s(r);
  };
  CHECK(share(4096) == Approx(2 * share(2048)).epsilon(1e-9));
}

TEST_CASE("sparse kernel efficiency scales only the sparse kernel", "[analytic][sparse]") {
  // Time = the range scans (independent of the kernel's efficiency) + kernel work / efficiency:
  // halving the efficiency again adds twice what the first halving added.
  auto r = one_device("qkdrop:0.5", 2048);
  Profile p = r.profile;
  p.sparse_prep_bytes_per_element = 0;
  auto at = [&](double e) {
    p.sparse_kernel_efficiency = e;
    set_profile(r, p);
    return attention_s(r);
  };
  const double t1 = at(1), t2 = at(0.5), t4 = at(0.25);
  CHECK(t2 > t1);
  CHECK(t4 - t2 == Approx(2 * (t2 - t1)).epsilon(1e-9));
}

TEST_CASE("profile JSON round-trips and validates the sparse fields", "[config][sparse]") {
  Profile p;
  p.name = "x";
  p.sparse_kernel_efficiency = 0.7;
  p.sparse_prep_bytes_per_element = 24;
  p.hash_sort_bytes_per_token = 300;
  const auto q = Profile::from_json(p.to_json(), "mem", Profile{});
  CHECK(q.sparse_kernel_efficiency == 0.7);
  CHECK(q.sparse_prep_bytes_per_element == 24);
  CHECK(q.hash_sort_bytes_per_token == 300);
  auto j = p.to_json();
  j["sparse_prep_bytes_per_element"] = -1;
  CHECK_THROWS_AS(Profile::from_json(j, "mem", Profile{}), InputError);
  j = p.to_json();
  j["sparse_kernel_efficiency"] = 0;
  CHECK_THROWS_AS(Profile::from_json(j, "mem", Profile{}), InputError);
  j = p.to_json();
  j["attention_efficiency"] = 0.8;
  j["sparse_kernel_efficiency"] = 1.5;  // 1.2 of peak
  CHECK_THROWS_AS(Profile::from_json(j, "mem", Profile{}), InputError);
}
