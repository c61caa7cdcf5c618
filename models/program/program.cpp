#include "models/program/program.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <tuple>

#include "models/io/error.hpp"
#include "models/scenario/scenario.hpp"

namespace ringsim::models {

bool Program::has_ring() const noexcept {
  return std::any_of(fwd.begin(), fwd.end(), [](const Stage& st) { return st.kind == StageKind::Ring; });
}

std::int64_t Program::kv_position(std::int64_t p, std::int64_t r) const noexcept {
  const std::int64_t n = rings.size;
  if (window <= 0 || window >= n) return ((p - r) % n + n) % n;
  // Double ring: round r = J W + s is inner step s of outer step J; position p = w W + i holds
  // the block that started on window w - J, position i - s of its window.
  const std::int64_t w = window, windows = n / w;
  const std::int64_t big = r / w, step = r % w;
  const std::int64_t win = ((p / w - big) % windows + windows) % windows;
  const std::int64_t i = ((p % w - step) % w + w) % w;
  return win * w + i;
}

namespace {

using CallKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, bool>;  // q_len, k_len, diagonal, causal

// Calls over packed documents (more than one) are pieces of varlen calls.
std::vector<AttentionCall> merged(const std::map<CallKey, std::int64_t>& shapes, bool varlen = false) {
  std::vector<AttentionCall> calls;
  calls.reserve(shapes.size());
  for (const auto& [key, count] : shapes) {
    AttentionCall c;
    c.q_len = std::get<0>(key);
    c.k_len = std::get<1>(key);
    c.diagonal = std::get<2>(key);
    c.causal = std::get<3>(key);
    c.batch = count;
    c.varlen = varlen;
    calls.push_back(c);
  }
  return calls;
}

}  // namespace

std::vector<AttentionCall> allgather_calls(const Layout& layout, std::int64_t rank,
                                           const std::vector<std::int64_t>& doc_starts, bool causal) {
  std::map<CallKey, std::int64_t> shapes;
  if (!causal) {
    shapes[{layout.block(), layout.n_seq(), 0, false}] = 1;
    return merged(shapes);
  }
  std::vector<Progression> segs;
  layout.segments(rank, 0, layout.block(), segs);
  auto run = [&](std::int64_t a, std::int64_t b) {  // positions [a, b), split at document starts
    while (a < b) {
      const auto it = std::upper_bound(doc_starts.begin(), doc_starts.end(), a);
      const std::int64_t start = it == doc_starts.begin() ? 0 : *(it - 1);
      const std::int64_t end = it == doc_starts.end() ? b : std::min(b, *it);
      const std::int64_t q = end - a, k = end - start;
      ++shapes[{q, k, k - q, true}];
      a = end;
    }
  };
  const bool varlen = doc_starts.size() > 1;
  for (const auto& p : segs) {
    if (p.stride == 1) {
      run(p.start, p.start + p.count);
    } else {
      for (std::int64_t i = 0; i < p.count; ++i) run(p.start + i * p.stride, p.start + i * p.stride + 1);
    }
  }
  return merged(shapes, varlen);
}

std::vector<AttentionCall> ulysses_calls(std::int64_t n_seq, const std::vector<std::int64_t>& doc_starts, bool causal) {
  std::map<CallKey, std::int64_t> shapes;
  if (!causal || doc_starts.empty()) {
    shapes[{n_seq, n_seq, 0, causal}] = 1;
    return merged(shapes);
  }
  for (std::size_t d = 0; d < doc_starts.size(); ++d) {
    const std::int64_t len = (d + 1 < doc_starts.size() ? doc_starts[d + 1] : n_seq) - doc_starts[d];
    ++shapes[{len, len, 0, true}];
  }
  return merged(shapes, doc_starts.size() > 1);
}

namespace {

struct Builder {
  const ResolvedScenario& s;
  Program p;
  std::int64_t sp, mp, c, batch;
  std::vector<std::int64_t> doc_starts;
  bool causal = true;

  explicit Builder(const ResolvedScenario& scenario)
      : s(scenario), sp(scenario.spec.sp), mp(scenario.spec.mp), c(scenario.layout->block()),
        batch(scenario.spec.batch) {
    p.kind = s.strategy.kind;
    p.protocol = s.impl.protocol;
    const MaskKind mk = s.mask->kind();
    if (s.strategy.kind != StrategyKind::Ring && s.strategy.kind != StrategyKind::DoubleRing &&
        s.strategy.kind != StrategyKind::Hybrid) {
      if (mk != MaskKind::Causal && mk != MaskKind::Full && mk != MaskKind::Documents)
        throw InputError({}, 0, "mask",
                         "strategy " + s.strategy.spec + " runs causal, full and per-document masks (got " +
                             s.mask->name() + "); index-based and window masks run on a ring");
    }
    causal = mk != MaskKind::Full;
    if (const auto* starts = s.mask->document_starts())
      doc_starts = *starts;
    else if (causal)
      doc_starts = {0};
  }

  // A rank's calls, each with `heads` query heads (over `kv_heads` KV heads) of every sequence
  // of the batch; `list` reuses an earlier rank's list (ranks with the same calls).
  void add(ComputeTable& t, std::size_t rank, const std::vector<AttentionCall>& calls, std::int64_t heads,
           std::int64_t kv_heads, bool same_as_previous) const {
    std::int64_t pairs = 0;
    for (const auto& call : calls) pairs += call_allowed_pairs(call) * call.batch;
    t.pairs[rank] = pairs;
    if (same_as_previous && !t.lists.empty()) {
      t.list_of[rank] = static_cast<std::uint32_t>(t.lists.size() - 1);
      return;
    }
    std::vector<AttentionCall> timed = calls;
    for (auto& call : timed) {
      call.heads = heads;
      call.kv_heads = kv_heads;
      call.batch *= batch;
    }
    t.lists.push_back(std::move(timed));
    t.list_of[rank] = static_cast<std::uint32_t>(t.lists.size() - 1);
  }

  std::size_t table(bool backward) {
    ComputeTable t;
    t.backward = backward;
    t.list_of.assign(static_cast<std::size_t>(sp), 0);
    t.pairs.assign(static_cast<std::size_t>(sp), 0);
    p.compute.push_back(std::move(t));
    return p.compute.size() - 1;
  }

  static Stage collective(CollectiveKind kind, std::string label, RankGroups g, std::int64_t bytes) {
    Stage st;
    st.kind = StageKind::Collective;
    st.collective = kind;
    st.label = std::move(label);
    st.groups = g;
    st.bytes = bytes;
    return st;
  }
  static Stage compute(std::string label, std::size_t table, bool with_next = false) {
    Stage st;
    st.kind = StageKind::Compute;
    st.label = std::move(label);
    st.table = table;
    st.with_next = with_next;
    return st;
  }
  static Stage ring(std::string label) {
    Stage st;
    st.kind = StageKind::Ring;
    st.label = std::move(label);
    return st;
  }

  // Bytes one rank sends in a collective stage: g - 1 shards (all-gather, reduce-scatter) or
  // g - 1 messages (all-to-all).
  static std::int64_t sent(const Stage& st) { return (st.groups.size - 1) * st.bytes; }

  void ring_traffic(const ResolvedScenario& rs) {
    // Forward: R - 1 K/V hops. Backward: K/V hops plus the accumulators' (one more, home, unless
    // the protocol walks back to it).
    const std::int64_t n = p.rings.size;
    const std::int64_t kv = rs.workload->kv_block_bytes();
    const std::int64_t dkv = dkv_block_bytes(rs, kv);
    if (n <= 1) return;
    if (p.window > 0 && p.window < n) {
      // Double ring: per window W - 1 inner K/V hops and W inner dK/dV hops, between windows one
      // outer K/V hop (none after the last) and one outer dK/dV hop (after every window).
      const std::int64_t w = p.window, windows = n / w;
      p.sent_bytes_fwd += kv * (windows * (w - 1) + windows - 1);
      p.sent_bytes_bwd += kv * (windows * (w - 1) + windows - 1) + dkv * (windows * w + windows);
      return;
    }
    p.sent_bytes_fwd += kv * (n - 1);
    p.sent_bytes_bwd += kv * (n - 1) + dkv * (p.protocol.dkv_home_hop ? n : n - 1);
  }

  void build_ring(RankGroups rings, std::int64_t window, const ResolvedScenario& rs) {
    p.rings = rings;
    p.window = window;
    p.fwd.push_back(ring("attn fwd"));
    p.bwd.push_back(ring("attn bwd"));
    ring_traffic(rs);
  }

  void build_allgather() {
    const std::int64_t heads = s.cost->heads_per_device();
    const std::int64_t kv_heads = s.cost->kv_heads_per_device();
    const std::int64_t kv_bytes = s.workload->kv_block_bytes();  // this rank's K and V, all its KV heads
    const RankGroups all{sp, 1};
    // Slices of heads_k_stride KV heads (the largest divisor of the device's KV heads up to it).
    std::int64_t slices = 1;
    if (p.protocol.allgather_heads_stride > 0) slices = kv_heads / std::gcd(kv_heads, p.protocol.allgather_heads_stride);
    const std::size_t f = table(false), b = table(true);
    for (std::int64_t r = 0; r < sp; ++r) {
      const auto calls = allgather_calls(*s.layout, r, doc_starts, causal);
      add(p.compute[f], static_cast<std::size_t>(r), calls, heads / slices, kv_heads / slices, false);
      add(p.compute[b], static_cast<std::size_t>(r), calls, heads / slices, kv_heads / slices, false);
    }
    const std::int64_t slice_bytes = kv_bytes / slices;
    auto gather = [&](std::vector<Stage>& pass, const std::string& what) {
      if (p.protocol.allgather_separate_kv) {
        pass.push_back(collective(CollectiveKind::AllGather, "all-gather K" + what, all, slice_bytes / 2));
        pass.push_back(collective(CollectiveKind::AllGather, "all-gather V" + what, all, slice_bytes / 2));
      } else {
        pass.push_back(collective(CollectiveKind::AllGather, "all-gather K/V" + what, all, slice_bytes));
      }
    };
    // Slice i's kernel runs while slice i + 1 is gathered; the backward reduce-scatters slice
    // i's dK/dV (in the K/V dtype) right after its kernel, before the next kernel starts.
    for (int pass = 0; pass < 2; ++pass) {
      auto& stages = pass == 0 ? p.fwd : p.bwd;
      const std::size_t t = pass == 0 ? f : b;
      const std::string kind = pass == 0 ? "attn fwd" : "attn bwd";
      const bool gathers = pass == 0 || p.protocol.allgather_backward_regather;
      if (gathers) gather(stages, slices > 1 ? " slice 0" : "");
      for (std::int64_t i = 0; i < slices; ++i) {
        const std::string tag = slices > 1 ? " slice " + std::to_string(i) : "";
        const bool overlap = gathers && i + 1 < slices;
        stages.push_back(compute(kind + tag, t, overlap));
        if (overlap) gather(stages, " slice " + std::to_string(i + 1));
        if (pass == 1) stages.push_back(collective(CollectiveKind::ReduceScatter, "reduce-scatter dK/dV" + tag, all, slice_bytes));
      }
    }
    for (const auto& st : p.fwd)
      if (st.kind == StageKind::Collective) p.sent_bytes_fwd += sent(st);
    for (const auto& st : p.bwd)
      if (st.kind == StageKind::Collective) p.sent_bytes_bwd += sent(st);
    // Gathered K/V of one slice, double-buffered when slices overlap, and that slice's dK/dV
    // before its reduce-scatter.
    const double gathered = static_cast<double>(slice_bytes * sp);
    p.buffer_bytes = gathered * (slices > 1 ? 2 : 1) + gathered;
    // Without a second gather the forward's gathered K/V stay saved for the backward, every layer.
    if (!p.protocol.allgather_backward_regather) p.buffer_bytes += gathered * static_cast<double>(s.model.layers);
  }

  // Ulysses' all-to-alls around `inner` (the attention on the gathered sequence): Q, K, V and
  // the output forward; the output's gradient, then dQ, dK, dV backward.
  void ulysses_around(const UlyssesHeads& h, RankGroups groups, const std::function<void(std::vector<Stage>&, bool)>& inner) {
    const std::int64_t d = s.model.head_dim;
    const std::int64_t bytes_per = s.profile.kv_wire_bytes;
    // What one rank sends each other member: its c tokens of that member's heads.
    const std::int64_t q_bytes = c * h.q_heads * d * bytes_per * batch;
    const std::int64_t kv_bytes = c * h.kv_heads * d * bytes_per * batch;
    p.fwd.push_back(collective(CollectiveKind::AllToAll, "all-to-all Q", groups, q_bytes));
    p.fwd.push_back(collective(CollectiveKind::AllToAll, "all-to-all K", groups, kv_bytes));
    p.fwd.push_back(collective(CollectiveKind::AllToAll, "all-to-all V", groups, kv_bytes));
    inner(p.fwd, false);
    p.fwd.push_back(collective(CollectiveKind::AllToAll, "all-to-all out", groups, q_bytes));
    p.bwd.push_back(collective(CollectiveKind::AllToAll, "all-to-all dout", groups, q_bytes));
    inner(p.bwd, true);
    p.bwd.push_back(collective(CollectiveKind::AllToAll, "all-to-all dQ", groups, q_bytes));
    p.bwd.push_back(collective(CollectiveKind::AllToAll, "all-to-all dK", groups, kv_bytes));
    p.bwd.push_back(collective(CollectiveKind::AllToAll, "all-to-all dV", groups, kv_bytes));
    for (const auto& st : p.fwd)
      if (st.kind == StageKind::Collective) p.sent_bytes_fwd += sent(st);
    for (const auto& st : p.bwd)
      if (st.kind == StageKind::Collective) p.sent_bytes_bwd += sent(st);
  }

  void build_ulysses() {
    const auto h = s.strategy.ulysses_heads(s.model, mp, sp);
    const std::size_t f = table(false), b = table(true);
    const auto calls = ulysses_calls(s.spec.n_seq, doc_starts, causal);
    for (std::int64_t r = 0; r < sp; ++r) {
      // Every rank attends the whole sequence with its share of the heads.
      add(p.compute[f], static_cast<std::size_t>(r), calls, h.q_heads, h.kv_heads, r > 0);
      add(p.compute[b], static_cast<std::size_t>(r), calls, h.q_heads, h.kv_heads, r > 0);
    }
    ulysses_around(h, s.strategy.ulysses_groups(sp), [&](std::vector<Stage>& pass, bool bwd) {
      pass.push_back(compute(bwd ? "attn bwd" : "attn fwd", bwd ? b : f));
    });
    // Full-sequence Q, K, V and output of the device's heads (and their gradients backward).
    const double full = static_cast<double>(s.spec.n_seq * s.model.head_dim * s.profile.kv_wire_bytes * batch);
    p.buffer_bytes = 2 * full * static_cast<double>(2 * h.q_heads + 2 * h.kv_heads);
  }

  void build_hybrid() {
    const auto h = s.strategy.ulysses_heads(s.model, mp, sp);
    const ResolvedScenario& rs = s.ring_scenario();
    p.rings = s.strategy.ring_groups(sp);
    ulysses_around(h, s.strategy.ulysses_groups(sp), [&](std::vector<Stage>& pass, bool bwd) {
      pass.push_back(ring(bwd ? "attn bwd" : "attn fwd"));
    });
    ring_traffic(rs);
    const double full = static_cast<double>(s.spec.n_seq / s.strategy.ring * s.model.head_dim * s.profile.kv_wire_bytes * batch);
    p.buffer_bytes = 2 * full * static_cast<double>(2 * h.q_heads);
  }
};

}  // namespace

std::int64_t dkv_block_bytes(const ResolvedScenario& s, std::int64_t kv) {
  const std::int64_t wire = s.impl.protocol.dkv_wire_bytes > 0 ? s.impl.protocol.dkv_wire_bytes : s.profile.dkv_wire_bytes;
  return kv * wire / s.profile.kv_wire_bytes;
}

std::vector<std::int64_t> device_pairs(const ResolvedScenario& s) {
  const auto& prog = *s.program;
  if (!prog.has_ring()) return prog.compute.front().pairs;
  const auto& w = *s.ring_scenario().workload;
  std::vector<std::int64_t> pairs(static_cast<std::size_t>(w.devices()), 0);
  for (std::int64_t q = 0; q < w.devices(); ++q)
    for (std::int64_t round = 0; round < w.rounds(); ++round) pairs[static_cast<std::size_t>(q)] += w.block(round, q).allowed_pairs;
  return pairs;
}

TableCost table_cost(const ResolvedScenario& s, const ComputeTable& t) {
  std::vector<double> list_s(t.lists.size(), 0.0);
  std::vector<std::int64_t> list_tiles(t.lists.size(), 0);
  for (std::size_t i = 0; i < t.lists.size(); ++i) {
    const RoundCost rc = s.attention->calls(s, t.lists[i]);
    list_s[i] = t.backward ? rc.bwd_s : rc.fwd_s;
    list_tiles[i] = rc.tiles;
  }
  TableCost c;
  c.seconds.reserve(t.list_of.size());
  c.tiles.reserve(t.list_of.size());
  for (const auto l : t.list_of) {
    c.seconds.push_back(list_s[l]);
    c.tiles.push_back(list_tiles[l]);
  }
  return c;
}

Program build_program(const ResolvedScenario& s) {
  Builder b(s);
  switch (s.strategy.kind) {
    case StrategyKind::Ring: b.build_ring({s.spec.sp, 1}, 0, s); break;
    case StrategyKind::DoubleRing:
      b.build_ring({s.spec.sp, 1}, s.strategy.window >= s.spec.sp ? 0 : s.strategy.window, s);
      break;
    case StrategyKind::AllGather: b.build_allgather(); break;
    case StrategyKind::Ulysses: b.build_ulysses(); break;
    case StrategyKind::Hybrid: b.build_hybrid(); break;
  }
  return std::move(b.p);
}

}  // namespace ringsim::models
