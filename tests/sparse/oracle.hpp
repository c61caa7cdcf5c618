#pragma once
// Brute-force oracle for the index-based masks: builds each device's rows the slow, obvious way
// (sort the device's positions, filter / stable-sort by bucket id), counts every tile by testing
// every pair with Mask::allowed, and decides visited tiles by the kernel's literal loops (the
// counting loops of the public SCFA Triton kernels, restated). Shares no code with
// models/workload/sparse_tiles.cpp.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "models/workload/layout.hpp"
#include "models/workload/mask.hpp"
#include "models/workload/sparse_mask.hpp"

namespace ringsim::test {

struct Row {
  std::int64_t group = 0;  // bucket id (0 for query/key dropping)
  std::int64_t pos = 0;
};

inline std::vector<Row> oracle_rows(const models::QKDropMask& m, const models::Layout& layout, std::int64_t device,
                                    std::int64_t head, bool queries) {
  auto positions = layout.positions(device);
  std::sort(positions.begin(), positions.end());
  std::vector<Row> rows;
  for (const auto p : positions)
    if (queries ? m.query_kept(p, head) : m.key_kept(p, head)) rows.push_back({0, p});
  return rows;
}

inline std::vector<Row> oracle_rows(const models::HashMask& m, const models::Layout& layout, std::int64_t device,
                                    std::int64_t head, bool queries) {
  auto positions = layout.positions(device);
  std::sort(positions.begin(), positions.end());
  std::vector<Row> rows;
  for (const auto p : positions) rows.push_back({queries ? m.query_bucket(p, head) : m.key_bucket(p, head), p});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.group < b.group; });
  return rows;
}

enum class Rule { QK, Hash };

// All tiles of the grid in row-major order, as the kernel would see them.
inline std::vector<models::TileCount> oracle_tiles(const models::Mask& mask, const std::vector<Row>& q,
                                                   const std::vector<Row>& k, models::TileShape tile,
                                                   std::int64_t head, Rule rule) {
  std::vector<models::TileCount> out;
  const auto m = static_cast<std::int64_t>(q.size());
  const auto n = static_cast<std::int64_t>(k.size());
  if (m == 0 || n == 0) return out;
  const std::int64_t nq = (m + tile.q - 1) / tile.q;
  const std::int64_t nk = (n + tile.k - 1) / tile.k;
  auto krange = [&](std::int64_t kt) {
    return std::pair{kt * tile.k, std::min(n, (kt + 1) * tile.k)};
  };
  for (std::int64_t qt = 0; qt < nq; ++qt) {
    const std::int64_t a = qt * tile.q;
    const std::int64_t b = std::min(m, a + tile.q);
    std::int64_t max_qi = std::numeric_limits<std::int64_t>::min();
    std::int64_t min_qh = std::numeric_limits<std::int64_t>::max();
    std::int64_t max_qh = std::numeric_limits<std::int64_t>::min();
    for (std::int64_t i = a; i < b; ++i) {
      max_qi = std::max(max_qi, q[static_cast<std::size_t>(i)].pos);
      min_qh = std::min(min_qh, q[static_cast<std::size_t>(i)].group);
      max_qh = std::max(max_qh, q[static_cast<std::size_t>(i)].group);
    }
    auto min_ki = [&](std::int64_t kt) {
      std::int64_t v = std::numeric_limits<std::int64_t>::max();
      for (auto [j0, j1] = krange(kt); j0 < j1; ++j0) v = std::min(v, k[static_cast<std::size_t>(j0)].pos);
      return v;
    };
    std::int64_t v_start = 0;
    std::int64_t v_end = 0;
    if (rule == Rule::QK) {
      // end_n = number of key tiles whose smallest index is <= the largest query index.
      for (std::int64_t kt = 0; kt < nk; ++kt)
        if (min_ki(kt) <= max_qi) ++v_end;
    } else {
      std::int64_t start_n = 0;
      std::int64_t end_n = 0;
      for (std::int64_t kt = 0; kt < nk; ++kt) {
        std::int64_t min_kh = std::numeric_limits<std::int64_t>::max();
        std::int64_t max_kh = std::numeric_limits<std::int64_t>::min();
        for (auto [j0, j1] = krange(kt); j0 < j1; ++j0) {
          min_kh = std::min(min_kh, k[static_cast<std::size_t>(j0)].group);
          max_kh = std::max(max_kh, k[static_cast<std::size_t>(j0)].group);
        }
        if (min_kh <= max_qh) ++end_n;
        if (max_kh < min_qh) ++start_n;
      }
      // Causal trim; with no qualifying tile the range is empty (see sparse_tiles.hpp).
      std::int64_t causal_end = start_n;
      for (std::int64_t i = start_n; i < end_n; ++i)
        if (min_ki(i) <= max_qi) causal_end = i + 1;
      v_start = start_n;
      v_end = causal_end;
    }
    for (std::int64_t kt = 0; kt < nk; ++kt) {
      const auto [j0, j1] = krange(kt);
      std::int64_t allowed = 0;
      for (std::int64_t i = a; i < b; ++i)
        for (std::int64_t j = j0; j < j1; ++j)
          allowed += mask.allowed(q[static_cast<std::size_t>(i)].pos, k[static_cast<std::size_t>(j)].pos, head);
      out.push_back({qt, kt, b - a, j1 - j0, allowed, kt >= v_start && kt < v_end});
    }
  }
  return out;
}

inline std::vector<models::TileCount> fast_tiles(const models::Mask& mask, const models::Layout& layout,
                                                 std::int64_t qd, std::int64_t kd, models::TileShape tile,
                                                 std::int64_t head) {
  std::vector<models::TileCount> out;
  mask.visit_block(layout, qd, kd, tile, head, [&](const models::TileCount& t) { out.push_back(t); });
  return out;
}

inline bool same(const models::TileCount& a, const models::TileCount& b) {
  return a.q_tile == b.q_tile && a.k_tile == b.k_tile && a.rows == b.rows && a.cols == b.cols &&
         a.allowed == b.allowed && a.visited == b.visited;
}

}  // namespace ringsim::test
