// Context-parallel strategies: parsing and checks, rank groups, the attention program's work per
// device against brute force, its traffic against closed forms, and the analytic model's
// collectives against their formulas.
#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include <catch2/catch.hpp>

#include "models/analytic/analytic.hpp"
#include "models/program/collective_cost.hpp"
#include "models/workload/documents.hpp"
#include "models/io/error.hpp"
#include "models/program/program.hpp"
#include "models/catalog/resolve.hpp"

using namespace ringsim::models;

namespace {

ScenarioSpec spec(const std::string& model, std::int64_t mp, std::int64_t sp, std::int64_t n_seq, const std::string& layout,
                  const std::string& cp, const std::string& impl = "") {
  ScenarioSpec s;
  s.hardware = "h100-sxm";
  s.model = model;
  s.mp = mp;
  s.sp = sp;
  s.n_seq = n_seq;
  s.layout = ringsim::models::LayoutSpec::parse(layout);
  s.cp = ringsim::models::Strategy::parse(cp);
  s.impl = impl;
  s.tile = TileShape{16, 16};
  return s;
}

// Allowed pairs with the query on each rank: every (q, k) of the sequence.
std::vector<std::int64_t> brute_pairs_per_rank(const Layout& l, const Mask& m) {
  std::vector<std::int64_t> pairs(static_cast<std::size_t>(l.n_dev()), 0);
  for (std::int64_t q = 0; q < l.n_seq(); ++q)
    for (std::int64_t k = 0; k <= q || (m.kind() == MaskKind::Full && k < l.n_seq()); ++k)
      if (k < l.n_seq() && m.allowed(q, k, 0)) ++pairs[static_cast<std::size_t>(l.place(q).device)];
  return pairs;
}

std::int64_t brute_block_pairs(const Layout& l, const Mask& m, std::int64_t qd, std::int64_t kd) {
  std::int64_t n = 0;
  for (const auto q : l.positions(qd))
    for (const auto k : l.positions(kd)) n += m.allowed(q, k, 0) ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("strategies parse, and bad specs name what is known", "[strategy]") {
  CHECK(Strategy::parse("ring").kind == StrategyKind::Ring);
  CHECK(Strategy::parse("allgather").kind == StrategyKind::AllGather);
  CHECK(Strategy::parse("ulysses").kind == StrategyKind::Ulysses);
  const auto u = Strategy::parse("usp:2x4");
  CHECK(u.kind == StrategyKind::Hybrid);
  CHECK(u.ulysses == 2);
  CHECK(u.ring == 4);
  CHECK(u.placement == GroupPlacement::UlyssesInner);
  CHECK(Strategy::parse("usp:2x4:ring-inner").placement == GroupPlacement::RingInner);
  CHECK(Strategy::parse("double-ring:4").window == 4);
  for (const char* bad : {"rings", "usp", "usp:2", "usp:0x4", "usp:2x4:sideways", "double-ring", "double-ring:0", "double-ring:x"}) {
    INFO(bad);
    try {
      (void)Strategy::parse(bad);
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(e.field() == "cp");
      CHECK(std::string(e.what()).find("known: ring") != std::string::npos);
    }
  }
}

TEST_CASE("Ulysses and ring groups partition the ranks", "[strategy]") {
  for (const std::string cp : {"usp:2x4", "usp:4x2", "usp:2x4:ring-inner", "usp:8x1", "usp:1x8"}) {
    INFO(cp);
    const auto s = Strategy::parse(cp);
    const auto ug = s.ulysses_groups(8), rg = s.ring_groups(8);
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    for (std::int64_t j = 0; j < 8; ++j) {
      // A rank is member m of its group, and rank(j, m) walks back to it.
      CHECK(ug.rank(j, ug.member(j)) == j);
      CHECK(rg.rank(j, rg.member(j)) == j);
      // Each (Ulysses member, ring member) pair names one rank: the groups are orthogonal.
      CHECK(seen.insert({ug.member(j), rg.member(j)}).second);
    }
    if (s.placement == GroupPlacement::UlyssesInner) CHECK(ug.stride == 1);
  }
}

TEST_CASE("impossible splits are refused with one line naming the numbers", "[strategy][errors]") {
  const Catalog cat;
  auto refuse = [&](ScenarioSpec s, const std::string& needle) {
    INFO(s.cp.text() << " " << needle);
    try {
      (void)resolve(s, cat);
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  };
  // U x R must be the ring size.
  refuse(spec("llama3-8b", 1, 8, 8192, "zigzag", "usp:2x2"), "U x R = 2 x 2 = 4 differs from the context-parallel size sp = 8");
  // Ulysses above the KV heads (8 for Llama-3-8B) without replication.
  refuse(spec("llama3-8b", 1, 16, 16384, "zigzag", "ulysses", "te-a2a"), "does not replicate KV heads");
  // The query heads per tensor-parallel rank bound it too: 32 heads / mp 8 = 4 < 8.
  refuse(spec("llama3-8b", 8, 8, 8192, "contiguous", "ulysses", "verl-ulysses"), "does not divide the 4 query heads");
  // A window that does not divide the ring.
  refuse(spec("llama3-8b", 1, 8, 8192, "zigzag", "double-ring:3"), "does not divide the ring size sp = 8");
  // An implementation that does not offer the strategy.
  refuse(spec("llama3-8b", 1, 8, 8192, "zigzag", "ulysses", "te-all-gather"), "does not offer strategy 'ulysses'");
}

TEST_CASE("KV-head replication: the degree may exceed the KV heads, at replication x the K/V traffic", "[strategy]") {
  const Catalog cat;
  // Llama-3-8B has 8 KV heads; Ulysses over 16 ranks repeats each twice (verl).
  const auto s16 = resolve(spec("llama3-8b", 1, 16, 16384, "contiguous", "ulysses", "verl-ulysses"), cat);
  const auto h = s16.strategy.ulysses_heads(s16.model, 1, 16);
  CHECK(h.q_heads == 2);
  CHECK(h.kv_heads == 1);
  CHECK(h.kv_replication == 2);
  // Bytes per peer: Q carries 2 heads, K and V one (replicated) head each.
  const auto& prog = *s16.program;
  std::map<std::string, std::int64_t> bytes;
  for (const auto& st : prog.fwd)
    if (st.kind == StageKind::Collective) bytes[st.label] = st.bytes;
  const std::int64_t c = 1024, d = 128, w = 2;
  CHECK(bytes["all-to-all Q"] == c * 2 * d * w);
  CHECK(bytes["all-to-all K"] == c * 1 * d * w);
  // Without replication (8 ranks) a rank sends each peer its one KV head of 8 too: the
  // replicated run sends its 16 peers 2x the K bytes per peer of what 8 KV heads would allow.
  const auto s8 = resolve(spec("llama3-8b", 1, 8, 16384, "contiguous", "ulysses", "verl-ulysses"), cat);
  CHECK(s8.strategy.ulysses_heads(s8.model, 1, 8).kv_replication == 1);
}

TEST_CASE("all-gather and Ulysses: per-device pairs equal brute force on random small cases", "[strategy][oracle]") {
  const Catalog cat;
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 6; ++trial) {
    const std::int64_t sp = std::int64_t{2} << (rng() % 2);  // 2 or 4
    const std::int64_t n = sp * 16 * (1 + static_cast<std::int64_t>(rng() % 3));
    // Random documents whose lengths split into 2 sp chunks.
    const std::int64_t q = 2 * sp;
    const std::string docs = "lognormal:" + std::to_string(q * 3) + ":1.2:" + std::to_string(trial) + ":" + std::to_string(q);
    for (const auto& [cp, impl, layout, with_docs] :
         std::vector<std::tuple<std::string, std::string, std::string, bool>>{
             {"allgather", "te-all-gather", "zigzag", false},
             {"allgather", "rfa-llama3", "contiguous", false},
             {"allgather", "rfa-llama3", "contiguous", true},
             {"allgather", "torch-cp", "doc-zigzag", true},
             {"allgather", "torch-cp", "doc-zigzag-docmajor", true},
             {"allgather", "torch-cp", "ptrr:8", true},
             {"ulysses", "te-a2a", "zigzag", false},
             {"ulysses", "te-a2a", "doc-zigzag", true}}) {
      auto sc = spec("attn:8:8:16", 1, sp, n, layout, cp, impl);
      if (with_docs) sc.docs = ringsim::models::DocumentsSpec::parse(docs);
      INFO(cp << " " << impl << " " << layout << " docs=" << with_docs << " sp=" << sp << " n=" << n);
      const auto r = resolve(sc, cat);
      const auto brute = brute_pairs_per_rank(*r.layout, *r.mask);
      const auto& table = r.program->compute.front();
      std::int64_t total = 0;
      for (auto x : brute) total += x;
      for (std::int64_t j = 0; j < sp; ++j) {
        const auto got = table.pairs[static_cast<std::size_t>(j)];
        // All-gather: a rank attends its own queries to every key; Ulysses: all queries, for sp-th of the heads.
        CHECK(got == (cp == "ulysses" ? total : brute[static_cast<std::size_t>(j)]));
      }
    }
  }
}

TEST_CASE("usp and double ring: per-(position, round) blocks equal brute force", "[strategy][oracle]") {
  const Catalog cat;
  for (const std::string cp : {"usp:2x4", "usp:4x2", "double-ring:2", "double-ring:4", "double-ring:1"}) {
    const bool dbl = cp.starts_with("double");
    auto sc = spec("attn:8:8:16", 1, 8, 8 * 32, "zigzag", cp, dbl ? "internevo" : "te-a2a-p2p");
    INFO(cp);
    const auto r = resolve(sc, cat);
    const auto& rs = r.ring_scenario();
    const auto& prog = *r.program;
    const std::int64_t n = prog.rings.size;
    CHECK(n == (dbl ? 8 : Strategy::parse(cp).ring));
    for (std::int64_t p = 0; p < n; ++p) {
      std::set<std::int64_t> blocks;
      for (std::int64_t round = 0; round < n; ++round) {
        const std::int64_t k = prog.kv_position(p, round);
        CHECK(blocks.insert(k).second);  // every block once
        const auto& b = rs.workload->block(((p - k) % n + n) % n, p);
        CHECK(b.allowed_pairs == brute_block_pairs(*rs.layout, *rs.mask, p, k));
      }
      CHECK(prog.kv_position(p, 0) == p);
    }
    if (dbl && prog.window > 0) {
      // Inside a window, round s of outer step J holds the block of window w - J, position i - s.
      const std::int64_t w = prog.window;
      CHECK(prog.kv_position(w + 1, 1) == w);
      CHECK(prog.kv_position(0, w) == n - w);
    }
  }
}

TEST_CASE("per-rank traffic of each strategy equals its closed form", "[strategy][traffic]") {
  const Catalog cat;
  const std::int64_t sp = 8, n = 8 * 64, d = 16, w = 2, b = 1;
  const std::int64_t c = n / sp;
  // attn:8:8:16, one KV block: c tokens x 8 KV heads x 16 x K,V x 2 bytes.
  const std::int64_t kv = c * 8 * d * 2 * w * b;
  {
    const auto r = resolve(spec("attn:8:8:16", 1, sp, n, "zigzag", "allgather", "te-all-gather"), cat);
    // K and V gathered separately: 7 half-blocks each; backward gathers again, then reduce-scatters.
    CHECK(r.program->sent_bytes_fwd == (sp - 1) * kv);
    CHECK(r.program->sent_bytes_bwd == 2 * (sp - 1) * kv);
  }
  {
    const auto r = resolve(spec("attn:8:8:16", 1, sp, n, "zigzag", "ulysses", "te-a2a"), cat);
    // Forward Q, K, V, out: to each of 7 peers c tokens x 1 head (8 / 8) x d.
    const std::int64_t per_peer = c * 1 * d * w;
    CHECK(r.program->sent_bytes_fwd == 4 * (sp - 1) * per_peer);
    CHECK(r.program->sent_bytes_bwd == 4 * (sp - 1) * per_peer);
  }
  {
    const auto r = resolve(spec("attn:8:8:16", 1, sp, n, "zigzag", "usp:2x4", "te-a2a-p2p"), cat);
    const std::int64_t per_peer = c * 4 * d * w;  // 8 heads / U = 2 -> 4 heads
    const std::int64_t ring_kv = (n / 4) * 4 * d * 2 * w;
    // A2A of Q, K, V, out to 1 peer; ring of 4: 3 K/V hops; backward fused, no home hop: 3 dK/dV hops (dK/dV in the profile's dtype).
    CHECK(r.program->sent_bytes_fwd == 4 * per_peer + 3 * ring_kv);
    const std::int64_t ring_dkv = ring_kv;  // TE sends dK/dV in the K/V dtype
    CHECK(r.program->sent_bytes_bwd == 4 * per_peer + 3 * ring_kv + 3 * ring_dkv);
  }
  {
    const auto r = resolve(spec("attn:8:8:16", 1, sp, n, "zigzag", "double-ring:2", "internevo"), cat);
    const std::int64_t dkv = 2 * kv;  // fp32 accumulators
    // 4 windows of 2: 4 inner K/V hops + 3 outer; backward + 8 inner and 4 outer dK/dV hops.
    CHECK(r.program->sent_bytes_fwd == (4 * 1 + 3) * kv);
    CHECK(r.program->sent_bytes_bwd == (4 * 1 + 3) * kv + (4 * 2 + 4) * dkv);
  }
}

TEST_CASE("analytic collectives: ring steps at the slowest hop, all-to-all at the busiest link", "[strategy][collective]") {
  const Catalog cat;
  auto r = resolve(spec("attn:8:8:16", 1, 16, 16 * 64, "zigzag", "allgather", "te-all-gather"), cat);
  r.profile.link_latency_s = 0.0;
  r.cost = std::make_unique<CostModel>(r.hardware, r.profile, r.model, 1, 1, 1, MaskKind::Causal);
  const auto& cost = *r.cost;
  const double bw_in = cost.link_bandwidth_bytes_per_s(false), bw_x = cost.link_bandwidth_bytes_per_s(true);
  const RankPlacement two_nodes{16, 1, 8};
  const std::int64_t bytes = 1 << 20;
  // 16 ranks over two nodes: the ring crosses the NIC, 15 steps.
  CHECK(collective_s(cost, CollectiveKind::AllGather, {16, 1}, bytes, two_nodes) ==
        Approx(15.0 * static_cast<double>(bytes) / bw_x));
  // Groups of 8 inside a node: NVLink.
  CHECK(collective_s(cost, CollectiveKind::ReduceScatter, {8, 1}, bytes, two_nodes) ==
        Approx(7.0 * static_cast<double>(bytes) / bw_in));
  // All-to-all over 16: 7 peers on NVLink, 8 over the NIC.
  CHECK(collective_s(cost, CollectiveKind::AllToAll, {16, 1}, bytes, two_nodes) ==
        Approx(std::max(7.0 * static_cast<double>(bytes) / bw_in, 8.0 * static_cast<double>(bytes) / bw_x)));
  // Strided groups of 2 across the nodes: one NIC peer each.
  CHECK(collective_s(cost, CollectiveKind::AllToAll, {2, 8}, bytes, two_nodes) == Approx(static_cast<double>(bytes) / bw_x));
}
