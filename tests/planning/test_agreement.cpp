// Kendall's tau-b against hand-worked cases and its textbook properties.
#include <catch2/catch.hpp>

#include <random>

#include "planning/agreement.hpp"

using ringsim::planning::kendall_tau_b;

TEST_CASE("agreement: Kendall's tau-b on worked cases", "[planning][agreement]") {
  CHECK(kendall_tau_b({1, 2, 3, 4}, {10, 20, 30, 40}).tau_b == Approx(1));
  CHECK(kendall_tau_b({1, 2, 3, 4}, {4, 3, 2, 1}).tau_b == Approx(-1));
  // One swapped pair of six: (5 - 1) / 6.
  const auto one = kendall_tau_b({1, 2, 3, 4}, {1, 3, 2, 4});
  CHECK(one.concordant == 5);
  CHECK(one.discordant == 1);
  CHECK(one.tau_b == Approx(4.0 / 6));
  // Ties: x = (1, 1, 2), y = (1, 2, 3): C = 2, D = 0, one pair tied in x only;
  // tau-b = 2 / sqrt((2 + 0 + 0) (2 + 0 + 1)).
  const auto tied = kendall_tau_b({1, 1, 2}, {1, 2, 3});
  CHECK(tied.ties_measured == 1);
  CHECK(tied.tau_b == Approx(2 / std::sqrt(2.0 * 3.0)));
  // Groups: pairs across groups are not compared.
  const auto g = kendall_tau_b({1, 2, 1, 2}, {1, 2, 2, 1}, {"a", "a", "b", "b"});
  CHECK(g.pairs == 2);
  CHECK(g.concordant == 1);
  CHECK(g.discordant == 1);
  CHECK(g.tau_b == Approx(0));
  CHECK_THROWS(kendall_tau_b({1, 2}, {1}));
}

TEST_CASE("agreement: tau-b is symmetric and invariant under monotone maps", "[planning][agreement]") {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> d(0, 9);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> x, y, y3;
    for (int i = 0; i < 12; ++i) {
      x.push_back(d(rng));
      y.push_back(d(rng));
      y3.push_back(y.back() * y.back() * y.back() + 7);
    }
    const auto a = kendall_tau_b(x, y);
    CHECK(kendall_tau_b(y, x).tau_b == Approx(a.tau_b));
    CHECK(kendall_tau_b(x, y3).tau_b == Approx(a.tau_b));
    CHECK(a.tau_b >= -1 - 1e-12);
    CHECK(a.tau_b <= 1 + 1e-12);
  }
}
