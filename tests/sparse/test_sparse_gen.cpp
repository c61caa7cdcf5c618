// Seeded generators: determinism, per-head independence, and the distributions they promise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "models/io/error.hpp"
#include "models/workload/sparse_gen.hpp"

using namespace ringsim;

TEST_CASE("random dropping is seeded, per head, at the requested rate", "[sparse][gen]") {
  const std::int64_t n = 100'000;
  const auto a = models::random_kept(n, 3, 0.3, 42);
  const auto b = models::random_kept(n, 3, 0.3, 42);
  const auto c = models::random_kept(n, 3, 0.3, 43);
  CHECK(a.q == b.q);
  CHECK(a.k == b.k);
  CHECK(a.q != c.q);
  CHECK(a.q[0] != a.k[0]);  // queries and keys drop independently
  CHECK(a.q[0] != a.q[1]);  // so do heads
  // A head's lists do not depend on how many heads are drawn.
  CHECK(models::random_kept(n, 1, 0.3, 42).q[0] == a.q[0]);
  for (const auto& list : a.q) {
    CHECK(std::is_sorted(list.begin(), list.end()));
    // 100k Bernoulli(0.7): standard deviation of the fraction ~0.0015.
    CHECK(std::abs(static_cast<double>(list.size()) / static_cast<double>(n) - 0.7) < 0.01);
  }
  CHECK(models::random_kept(50, 1, 0.0, 1).q[0].size() == 50);
  CHECK(models::random_kept(50, 1, 1.0, 1).k[0].empty());
  CHECK_THROWS_AS(models::random_kept(50, 1, 1.5, 1), models::InputError);
  CHECK_THROWS_AS(models::random_kept(50, 1, -0.1, 1), models::InputError);
  CHECK_THROWS_AS(models::random_kept(50, 0, 0.5, 1), models::InputError);
  CHECK_THROWS_AS(models::random_kept(50, 1, std::nan(""), 1), models::InputError);
}

TEST_CASE("random buckets: uniform and Zipf-skewed", "[sparse][gen]") {
  const std::int64_t n = 200'000;
  const std::int64_t nb = 8;
  const auto u = models::random_buckets(n, 2, nb, 0.0, 5);
  CHECK(u.q == models::random_buckets(n, 2, nb, 0.0, 5).q);
  CHECK(u.q[0] != u.k[0]);
  std::vector<std::int64_t> freq(nb, 0);
  for (const auto b : u.q[0]) {
    REQUIRE((b >= 0 && b < nb));
    ++freq[static_cast<std::size_t>(b)];
  }
  for (const auto f : freq) CHECK(std::abs(static_cast<double>(f) / static_cast<double>(n) - 1.0 / nb) < 0.005);

  const auto z = models::random_buckets(n, 1, nb, 1.0, 5);
  std::fill(freq.begin(), freq.end(), 0);
  for (const auto b : z.k[0]) ++freq[static_cast<std::size_t>(b)];
  // P(b) ~ 1/(b+1): bucket 0 twice as likely as bucket 1, eight times as likely as bucket 7.
  CHECK(std::abs(static_cast<double>(freq[0]) / static_cast<double>(freq[1]) - 2.0) < 0.1);
  CHECK(std::abs(static_cast<double>(freq[0]) / static_cast<double>(freq[7]) - 8.0) < 0.6);
  CHECK(std::is_sorted(freq.rbegin(), freq.rend()));

  const auto one = models::random_buckets(100, 1, 1, 0.0, 1);
  CHECK(std::all_of(one.q[0].begin(), one.q[0].end(), [](auto b) { return b == 0; }));
  CHECK_THROWS_AS(models::random_buckets(100, 1, 0, 0.0, 1), models::InputError);
  CHECK_THROWS_AS(models::random_buckets(100, 1, 4, -1.0, 1), models::InputError);
}

TEST_CASE("angular LSH: argmax of [xR, -xR]", "[sparse][gen][lsh]") {
  const std::int64_t dim = 5;
  const std::int64_t nb = 6;
  const auto r = models::lsh_rotation(dim, nb, 9);
  REQUIRE(r.size() == static_cast<std::size_t>(dim * nb / 2));
  CHECK(r == models::lsh_rotation(dim, nb, 9));
  std::vector<double> x{0.3, -1.2, 0.7, 2.0, -0.1};
  std::vector<double> neg(x.size());
  std::vector<double> scaled(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) neg[i] = -x[i], scaled[i] = 3.5 * x[i];
  const auto bx = models::lsh_buckets(x, dim, r, nb);
  REQUIRE(bx.size() == 1);
  // The hand-computed argmax.
  std::vector<double> proj(nb, 0.0);
  for (std::int64_t j = 0; j < nb / 2; ++j) {
    for (std::int64_t i = 0; i < dim; ++i)
      proj[static_cast<std::size_t>(j)] += x[static_cast<std::size_t>(i)] * r[static_cast<std::size_t>(i * nb / 2 + j)];
    proj[static_cast<std::size_t>(j + nb / 2)] = -proj[static_cast<std::size_t>(j)];
  }
  CHECK(bx[0] == std::max_element(proj.begin(), proj.end()) - proj.begin());
  // Angular: positive scaling keeps the bucket, negation moves it by nb / 2.
  CHECK(models::lsh_buckets(scaled, dim, r, nb)[0] == bx[0]);
  CHECK(models::lsh_buckets(neg, dim, r, nb)[0] == (bx[0] + nb / 2) % nb);
  CHECK_THROWS_AS(models::lsh_buckets(x, dim, r, 5), models::InputError);
  CHECK_THROWS_AS(models::lsh_buckets(x, 4, r, nb), models::InputError);

  // User vectors per head; random vectors fill every bucket.
  const std::int64_t n = 2000;
  const auto rnd = models::random_lsh_buckets(n, 2, 8, 16, 3);
  CHECK(rnd.q == models::random_lsh_buckets(n, 2, 8, 16, 3).q);
  for (const auto* side : {&rnd.q[0], &rnd.k[1]}) {
    std::vector<std::int64_t> freq(8, 0);
    for (const auto b : *side) ++freq[static_cast<std::size_t>(b)];
    CHECK(std::all_of(freq.begin(), freq.end(), [](auto f) { return f > 0; }));
  }
  std::vector<std::vector<double>> qv(1, std::vector<double>(static_cast<std::size_t>(3 * dim)));
  for (std::size_t i = 0; i < qv[0].size(); ++i) qv[0][i] = std::sin(static_cast<double>(i) + 1.0);
  auto kv = qv;
  for (std::size_t i = 0; i < static_cast<std::size_t>(dim); ++i) kv[0][i] = -qv[0][i];
  const auto user = models::lsh_buckets(qv, kv, 3, dim, nb, 4);
  CHECK(user.q[0][1] == user.k[0][1]);  // same vector, same rotation: same bucket
  CHECK(user.k[0][0] == (user.q[0][0] + nb / 2) % nb);
  CHECK_THROWS_AS(models::lsh_buckets(qv, kv, 4, dim, nb, 4), models::InputError);  // wrong size
}
