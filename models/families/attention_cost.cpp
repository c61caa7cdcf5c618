#include "models/families/attention_cost.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "models/io/error.hpp"
#include "models/cost/kernel_time.hpp"

namespace ringsim::models {

namespace {

// A loop over the block's tiles that skips fully masked ones: the Striped Attention paper's JAX
// blockwise kernel (lax.cond per key chunk), SCFA's Triton kernels (key-tile ranges from the
// index vectors) and ringsim's own tile-schedule kernel. Every visited tile costs its padded
// FLOPs at the profile's attention efficiency, partly masked and skipped tiles what the profile
// says (CostModel::attention_fwd_s / attention_bwd_s): the block's geometry beyond its tile
// counts does not matter.
class BlockwiseCost final : public AttentionCost {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "blockwise"; }
  // CostModel's tile time is linear in the tile counts and areas of a block with visited tiles;
  // the per-round reshape term (round_memory_s) is one per call, which the packed model times
  // once per (position, round) block as predict does.
  [[nodiscard]] bool additive() const noexcept override { return true; }
  [[nodiscard]] RoundCost block(const ResolvedScenario& s, std::int64_t, std::int64_t,
                                const BlockStats& b) const override {
    // Each round also reshapes the whole block (Profile::round_bytes_per_element), whatever it visits.
    const double round = s.cost->round_memory_s(s.layout->block());
    const double bwd_round = s.profile.recompute ? 2 * round : round;
    return {s.cost->attention_fwd_s(b) + round, s.cost->attention_bwd_s(b) + bwd_round, b.tiles_visited * s.spec.batch};
  }
  // The call's tiles at the scenario's tile shape, timed as a block; CostModel counts a tile once
  // for the device's heads and batch, so a call of other heads or batch scales by the ratio.
  [[nodiscard]] RoundCost call(const ResolvedScenario& s, const AttentionCall& c) const override {
    const BlockStats b = call_tiles(c, s.tile);
    const double scale = static_cast<double>(c.heads * c.batch) /
                         static_cast<double>(s.cost->heads_per_device() * s.spec.batch);
    const double round = s.cost->round_memory_s(c.q_len);
    const double bwd_round = s.profile.recompute ? 2 * round : round;
    return {(s.cost->attention_fwd_s(b) + round) * scale, (s.cost->attention_bwd_s(b) + bwd_round) * scale,
            b.tiles_visited * c.batch};
  }
};

// A ring library that calls a flash-attention kernel per step (ring-flash-attention, TransformerEngine's
// p2p): the step's calls, shapes from the implementation's ring protocol for the block's class
// (the device's own K/V block, an earlier device's, a later one's), each timed by the kernel-time
// model; then the memory-bound merges of the partial outputs at the profile's memory efficiency;
// the pass's final conversions charged to the device's own block (every device has exactly one).
// A step lasts at least as long as the host takes to issue it (Python loop, communicator calls,
// one dispatch per operation): small blocks are host-bound. The classes of the workload (sign or
// difference of the devices) fix the step class, so equal classes cost the same.
class FlashCost final : public AttentionCost {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "flash"; }

  [[nodiscard]] RoundCost block(const ResolvedScenario& s, std::int64_t q_device, std::int64_t k_device,
                                const BlockStats& b) const override {
    const auto& proto = s.impl.protocol.ring_steps;
    const StepCalls* plan = proto.plan(mask_family(effective_mask(s.spec)), layout_family(s.spec.layout));
    if (!plan) return varlen_step(s, b);
    const StepClass cls = step_class(q_device, k_device);
    const std::int64_t c = s.layout->block();
    const Context ctx = context(s);
    double fwd = 0, bwd = 0;
    double host_f = s.profile.host_step_s + static_cast<double>(proto.host_ops_per_step_fwd) * s.profile.host_op_s;
    double host_b = s.profile.host_step_s + static_cast<double>(proto.host_ops_per_step_bwd) * s.profile.host_op_s;
    for (const StepCall& call : plan->of(cls)) {
      const std::int64_t q = call.q.of(c), k = call.k.of(c);
      if (q <= 0 || k <= 0) continue;
      const KernelTime t = call.kernel ? kernel_time(ctx, s, q, k, call.causal) : KernelTime{};
      const MemoryOp& mf = proto.memory_op(call.fwd_merge);
      const MemoryOp& mb = proto.memory_op(call.bwd_merge);
      fwd += t.fwd_s + memory_s(ctx, mf, q, k);
      bwd += t.bwd_s + memory_s(ctx, mb, q, k);
      const std::int64_t calls = call.kernel ? 1 : 0;
      host_f += static_cast<double>(calls * proto.host_ops_per_call_fwd + mf.host_ops) * s.profile.host_op_s;
      host_b += static_cast<double>(calls * proto.host_ops_per_call_bwd + mb.host_ops) * s.profile.host_op_s;
    }
    if (cls == StepClass::Diagonal) {
      fwd += memory_s(ctx, proto.fwd_final, c, c);
      bwd += memory_s(ctx, proto.bwd_final, c, c);
      host_f += static_cast<double>(proto.fwd_final.host_ops) * s.profile.host_op_s;
      host_b += static_cast<double>(proto.bwd_final.host_ops) * s.profile.host_op_s;
    }
    RoundCost r;
    r.fwd_s = std::max(fwd, host_f);
    r.bwd_s = std::max(bwd, host_b);
    if (s.profile.recompute) r.bwd_s += r.fwd_s;
    r.tiles = b.tiles_visited * s.spec.batch;
    return r;
  }

  // A mask without closed-form step shapes (packed documents): the library's varlen call per step
  // over the documents the two blocks share, its work the block's own tile counts; no merge
  // (the code merges per step as for plain blocks, a term this path leaves out: it is memory-bound
  // and small next to the call at the block sizes a packed batch runs).
  RoundCost varlen_step(const ResolvedScenario& s, const BlockStats& b) const {
    const Context ctx = context(s);
    const auto& proto = s.impl.protocol.ring_steps;
    const double heads = static_cast<double>(std::max<std::int64_t>(1, s.mask->heads()));
    VarlenWork w{s.layout->block(), s.layout->block(), static_cast<double>(b.visited_area) / heads,
                 static_cast<double>(b.masked_area) / heads, ctx.heads, ctx.batch, ctx.head_dim};
    const KernelTime t = flash_varlen_time(*s.impl.kernel_model, ctx.rates, w);
    RoundCost r;
    const double host_f = s.profile.host_step_s + static_cast<double>(proto.host_ops_per_step_fwd + proto.host_ops_per_call_fwd) * s.profile.host_op_s;
    const double host_b = s.profile.host_step_s + static_cast<double>(proto.host_ops_per_step_bwd + proto.host_ops_per_call_bwd) * s.profile.host_op_s;
    r.fwd_s = std::max(t.fwd_s, host_f);
    r.bwd_s = std::max(t.bwd_s, host_b);
    if (s.profile.recompute) r.bwd_s += r.fwd_s;
    r.tiles = b.tiles_visited * s.spec.batch;
    return r;
  }

  // One call as a plain flash-attention function issues it: the kernel, at least one dispatch.
  [[nodiscard]] RoundCost call(const ResolvedScenario& s, const AttentionCall& c) const override {
    const Context ctx = context(s);
    KernelCall kc{c.q_len, c.k_len, c.causal, c.diagonal, c.heads, c.kv_heads, c.batch, s.model.head_dim};
    const KernelTime t = memo(ctx, s, kc);
    const auto& proto = s.impl.protocol.ring_steps;
    RoundCost r;
    r.fwd_s = std::max(t.fwd_s, static_cast<double>(proto.host_ops_per_call_fwd) * s.profile.host_op_s);
    r.bwd_s = std::max(t.bwd_s, static_cast<double>(proto.host_ops_per_call_bwd) * s.profile.host_op_s);
    if (s.profile.recompute) r.bwd_s += r.fwd_s;
    r.tiles = call_tiles(c, s.tile).tiles_visited * c.batch;
    return r;
  }

 private:
  struct Context {
    KernelRates rates;
    std::int64_t heads = 1, kv_heads = 1, batch = 1, head_dim = 1;
  };
  // A call's shape and the rates it runs at: a fit, or an interval's perturbed profiles, change
  // the rates between predictions, and the perturbed profiles repeat point after point of a sweep.
  using Print = std::array<double, 12>;
  struct Key {
    std::int64_t q, k, diagonal, heads, kv_heads, batch, head_dim;
    bool causal;
    Print print;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      std::size_t h = 1469598103934665603ULL;
      for (const std::int64_t v : {k.q, k.k, k.diagonal, k.heads, k.kv_heads, k.batch, k.head_dim,
                                   static_cast<std::int64_t>(k.causal)})
        h = (h ^ static_cast<std::size_t>(v)) * 1099511628211ULL;
      for (const double d : k.print) h = (h ^ std::hash<double>{}(d)) * 1099511628211ULL;
      return h;
    }
  };

  static Context context(const ResolvedScenario& s) {
    Context ctx;
    ctx.rates = KernelRates::of(s.hardware, s.profile);
    ctx.heads = s.cost->heads_per_device();
    ctx.kv_heads = s.cost->kv_heads_per_device();
    ctx.batch = s.spec.batch;
    ctx.head_dim = s.model.head_dim;
    return ctx;
  }

  static double memory_s(const Context& ctx, const MemoryOp& op, std::int64_t q, std::int64_t k) {
    const double d = static_cast<double>(ctx.head_dim * ctx.batch);
    const double bytes = op.q_bytes_per_element * static_cast<double>(q * ctx.heads) * d +
                         op.kv_bytes_per_element * static_cast<double>(k * ctx.kv_heads) * d;
    return bytes / ctx.rates.hbm_bytes_per_s;
  }

  // FlashAttention >= 2.1 aligns a causal call's diagonal bottom-right when q and k differ.
  KernelTime kernel_time(const Context& ctx, const ResolvedScenario& s, std::int64_t q, std::int64_t k,
                         bool causal) const {
    return memo(ctx, s, KernelCall{q, k, causal, k - q, ctx.heads, ctx.kv_heads, ctx.batch, ctx.head_dim});
  }

  // Calls repeat round after round, and point after point of a sweep: their times are kept per
  // shape and rates. Bounded: a full table is emptied (a sweep's next points reuse few old shapes).
  KernelTime memo(const Context& ctx, const ResolvedScenario& s, const KernelCall& kc) const {
    const Key key{kc.q_len, kc.k_len, kc.diagonal, kc.heads, kc.kv_heads, kc.batch, kc.head_dim, kc.causal,
                  Print{ctx.rates.fwd_flops_per_s, ctx.rates.bwd_flops_per_s, ctx.rates.exp_per_s,
                        ctx.rates.alu_per_s, ctx.rates.hbm_bytes_per_s, ctx.rates.tile_overhead_s,
                        ctx.rates.cta_overhead_s, ctx.rates.softmax_overlap,
                        static_cast<double>(ctx.rates.sm_count), ctx.rates.memory_latency_s,
                        static_cast<double>(ctx.rates.registers_per_sm),
                        static_cast<double>(ctx.rates.shared_memory_per_sm_bytes)}};
    {
      const std::lock_guard lock(mutex_);
      if (const auto it = times_.find(key); it != times_.end()) return it->second;
    }
    const KernelTime t = flash_call_time(*s.impl.kernel_model, ctx.rates, kc);
    const std::lock_guard lock(mutex_);
    if (times_.size() >= kMemoEntries) times_.clear();
    times_.emplace(key, t);
    return t;
  }

  static constexpr std::size_t kMemoEntries = 1 << 16;
  mutable std::mutex mutex_;
  mutable std::unordered_map<Key, KernelTime, KeyHash> times_;
};

// SCFA's Triton kernels (epfml/dynamic-sparse-flash-attention, hsparse_attn.py, qksparse_attn.py):
// the tile loop of the blockwise family, plus the work that does not shrink with the number of
// buckets or the drop rate. For every query tile the forward first scans the key tiles' bucket
// ids (or compacted indices) one tile per loop step to find where its range starts and ends, and
// the backward runs one program per (batch, head) that, for every key tile in turn, scans all query
// tiles the same way: loop steps that each wait on one load, as many as the block's tiles per
// head, whatever the sparsity. The backward's compute also runs on only batch x heads programs, so
// the GPU's slots are filled in whole waves of those. Dense causal masks run as plain tiles.
class ScfaCost final : public AttentionCost {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "scfa"; }
  [[nodiscard]] RoundCost block(const ResolvedScenario& s, std::int64_t, std::int64_t,
                                const BlockStats& b) const override {
    RoundCost r{s.cost->attention_fwd_s(b), s.cost->attention_bwd_s(b), b.tiles_visited * s.spec.batch};
    if (!s.cost->index_mask()) return r;
    add_scans(s, b, s.spec.batch, r);
    return r;
  }
  [[nodiscard]] RoundCost call(const ResolvedScenario& s, const AttentionCall& c) const override {
    const BlockStats b = call_tiles(c, s.tile);
    const double scale = static_cast<double>(c.heads * c.batch) /
                         static_cast<double>(s.cost->heads_per_device() * s.spec.batch);
    return {s.cost->attention_fwd_s(b) * scale, s.cost->attention_bwd_s(b) * scale, b.tiles_visited * c.batch};
  }
 private:
  static void add_scans(const ResolvedScenario& s, const BlockStats& b, std::int64_t batch, RoundCost& r) {
    const auto& hw = s.hardware;
    const auto& spec = *s.impl.kernel_model;
    if (!hw.has_compute_units() || hw.memory_latency_s <= 0)
      throw InputError({}, 0, "hardware",
                       hw.name + " gives no compute_units with memory_latency_s, which SCFA's bucket-range scans need");
    const KernelRates rates = KernelRates::of(hw, s.profile);
    const double latency = hw.memory_latency_s;
    // Programs per head and slots: the forward has one per query tile, the backward one per head.
    const std::int64_t mask_heads = std::max<std::int64_t>(1, s.mask->heads());
    const std::int64_t heads = s.cost->heads_per_device();
    const std::int64_t programs_bwd = heads * batch;
    const double tiles_per_head = static_cast<double>(b.tiles_total) / static_cast<double>(mask_heads);
    const std::int64_t slots_fwd = rates.sm_count * ctas_per_sm(spec, spec.fwd_tiles.front(), rates);
    const std::int64_t slots_bwd = rates.sm_count * ctas_per_sm(spec, spec.bwd_tiles.front(), rates);
    // Forward: every query tile of every head scans every key tile; the loop steps of different
    // programs overlap, one per slot at a time.
    const double fwd_steps = tiles_per_head * static_cast<double>(heads * batch);
    r.fwd_s += fwd_steps * latency / static_cast<double>(slots_fwd);
    // Backward: each program scans all query tiles for each of its key tiles, in sequence; the
    // programs run in waves of slots_bwd.
    const double waves = static_cast<double>((programs_bwd + slots_bwd - 1) / slots_bwd);
    r.bwd_s += waves * tiles_per_head * latency;
    // ... and its compute, spread by the cost model over the whole GPU, fills only
    // programs_bwd of waves x slots_bwd slots.
    const double fill = static_cast<double>(programs_bwd) / (waves * static_cast<double>(slots_bwd));
    const double compute_bwd = s.cost->attention_bwd_s(b) - (s.profile.recompute ? s.cost->attention_fwd_s(b) : 0.0);
    r.bwd_s += compute_bwd * (1.0 / fill - 1.0);
  }
};

// Allowed keys of query i: min(k_len, max(0, i + diagonal + 1)); summed over [lo, hi) in closed form.
std::int64_t allowed_in_rows(std::int64_t lo, std::int64_t hi, std::int64_t k_len, std::int64_t diagonal) {
  // Rows with i + diagonal + 1 <= 0 allow nothing; rows with i + diagonal + 1 >= k_len allow all.
  const std::int64_t first_some = std::clamp<std::int64_t>(-diagonal, lo, hi);
  const std::int64_t first_all = std::clamp<std::int64_t>(k_len - 1 - diagonal, first_some, hi);
  // Rows [first_some, first_all) allow i + diagonal + 1 keys: an arithmetic series.
  const std::int64_t n = first_all - first_some;
  const std::int64_t a = first_some + diagonal + 1;
  return n * a + n * (n - 1) / 2 + (hi - first_all) * k_len;
}

}  // namespace

BlockStats call_tiles(const AttentionCall& c, TileShape tile) {
  BlockStats b;
  if (c.q_len <= 0 || c.k_len <= 0 || tile.q <= 0 || tile.k <= 0) return b;
  const std::int64_t rows = (c.q_len + tile.q - 1) / tile.q;
  const std::int64_t cols = (c.k_len + tile.k - 1) / tile.k;
  b.tiles_total = rows * cols;
  const std::int64_t last_cols = c.k_len - (cols - 1) * tile.k;  // width of the last tile column
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t q0 = r * tile.q, q1 = std::min(c.q_len, q0 + tile.q);
    const std::int64_t h = q1 - q0;
    std::int64_t visited = cols, full = cols;
    if (c.causal) {
      // Tile t holds an allowed pair iff its first key t tk <= q1 - 1 + diagonal; every pair
      // of it is allowed iff its last key <= q0 + diagonal.
      const std::int64_t reach = q1 - 1 + c.diagonal;
      visited = reach < 0 ? 0 : std::min(cols, reach / tile.k + 1);
      const std::int64_t sure = q0 + c.diagonal;  // keys <= sure are allowed for every row of the tile
      full = sure < 0 ? 0 : std::min(cols, (sure + 1) / tile.k);
      if (full == cols - 1 && sure >= c.k_len - 1) full = cols;  // a short last column fits under it
      full = std::min(full, visited);
    }
    b.tiles_visited += visited;
    b.tiles_computed += visited;
    const std::int64_t visited_width = visited == 0 ? 0 : (visited == cols ? (cols - 1) * tile.k + last_cols : visited * tile.k);
    const std::int64_t full_width = full == 0 ? 0 : (full == cols ? (cols - 1) * tile.k + last_cols : full * tile.k);
    b.visited_area += h * visited_width;
    b.masked_area += h * (visited_width - full_width);
    b.tiles_masked += visited - full;
    b.skipped_area += h * (c.k_len - visited_width);
    b.allowed_pairs += c.causal ? allowed_in_rows(q0, q1, c.k_len, c.diagonal) : h * c.k_len;
  }
  return b;
}

std::vector<std::string> attention_cost_families() { return {"blockwise", "flash", "scfa"}; }

std::shared_ptr<const AttentionCost> make_attention_cost(std::string_view family) {
  if (family == "blockwise") {
    static const auto blockwise = std::make_shared<const BlockwiseCost>();  // stateless: one for all
    return blockwise;
  }
  if (family == "scfa") {
    static const auto scfa = std::make_shared<const ScfaCost>();
    return scfa;
  }
  // Keeps a memo of kernel times: one per scenario.
  if (family == "flash") return std::make_shared<const FlashCost>();
  std::string list;
  for (const auto& f : attention_cost_families()) list += (list.empty() ? "" : ", ") + f;
  throw InputError({}, 0, "kernel", "unknown kernel family '" + std::string(family) + "' (known: " + list + ")");
}

RoundCostSummary round_cost(const ResolvedScenario& s, std::int64_t round) {
  const auto& w = *s.workload;
  const AttentionCost& a = *s.attention;
  const std::int64_t n = w.devices();
  RoundCostSummary r;
  double fwd_sum = 0, bwd_sum = 0;
  w.for_each_class(round, [&](std::int64_t device, const BlockStats& b, std::int64_t count) {
    const RoundCost c = a.block(s, device, Workload::kv_block_of(device, round, n), b);
    r.fwd_max_s = std::max(r.fwd_max_s, c.fwd_s);
    r.bwd_max_s = std::max(r.bwd_max_s, c.bwd_s);
    fwd_sum += c.fwd_s * static_cast<double>(count);
    bwd_sum += c.bwd_s * static_cast<double>(count);
  });
  r.fwd_mean_s = fwd_sum / static_cast<double>(n);
  r.bwd_mean_s = bwd_sum / static_cast<double>(n);
  return r;
}

}  // namespace ringsim::models
