#include "models/families/families.hpp"

#include <algorithm>
#include <bit>
#include <array>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "models/families/kernel_time.hpp"
#include "models/io/error.hpp"

namespace ringsim::models {

namespace {

// The kernel-time model's rates (KernelRates::of) and the host's work per ring step and call, per pass.
constexpr std::array<std::string_view, 12> kFlashParameters{
    "attention_bwd_efficiency",
    "cta_overhead_s",
    "kernel_launch_s",
    "solo_cta_gain",
    "shared_memory_efficiency",
    "bwd_shared_memory_efficiency",
    "softmax_overlap",
    "host_step_s",
    "host_call_s",
    "host_op_s",
    "host_bwd_step_s",
    "host_bwd_call_s",
};

// A ring library that calls a flash-attention kernel per step (ring-flash-attention, TransformerEngine's
// p2p): the step's calls, shapes from the implementation's ring protocol for the block's class
// (the device's own K/V block, an earlier device's, a later one's), each timed by the kernel-time
// model; then the memory-bound merges of the partial outputs at the profile's memory efficiency;
// the pass's final conversions charged to the device's own block (every device has exactly one).
// A step lasts at least as long as the host takes to issue it (the Python loop and communicator
// calls, then each attention call with its merge; measured per pass, data/components/host/):
// small blocks are host-bound. The classes of the workload (sign or
// difference of the devices) fix the step class, so equal classes cost the same.
class FlashCost final : public AttentionCost {
 public:
  [[nodiscard]] std::string_view family() const noexcept override { return "flash"; }
  [[nodiscard]] std::span<const std::string_view> own_parameters() const noexcept override {
    return kFlashParameters;
  }

  [[nodiscard]] RoundCost block(const ResolvedScenario& s, std::int64_t q_device, std::int64_t k_device,
                                const BlockStats& b) const override {
    const auto& proto = s.impl.protocol.ring_steps;
    const StepCalls* plan = proto.plan(effective_mask_family(s.spec), s.spec.layout.family_name());
    if (!plan) return varlen_step(s, b);
    const StepClass cls = step_class(q_device, k_device);
    const std::int64_t c = s.layout->block();
    const Context ctx = context(s);
    double fwd = 0, bwd = 0;
    // The host's work: per step, per call, and per eager operation where the steps file counts them.
    double host_f = s.profile.host_step_s + plan->fwd_host_ops * s.profile.host_op_s;
    double host_b = s.profile.host_bwd_step_s + plan->bwd_host_ops * s.profile.host_op_s;
    for (const StepCall& call : plan->of(cls)) {
      const std::int64_t q = call.q.of(c), k = call.k.of(c);
      if (q <= 0 || k <= 0) continue;
      const KernelTime t = call.kernel ? kernel_time(ctx, s, q, k, call.causal) : KernelTime{};
      const MemoryOp& mf = proto.memory_op(call.fwd_merge, q_device);
      const MemoryOp& mb = proto.memory_op(call.bwd_merge, q_device);
      fwd += t.fwd_s + memory_s(ctx, mf, q, k);
      bwd += t.bwd_s + memory_s(ctx, mb, q, k);
      if (call.kernel) {
        host_f += s.profile.host_call_s;
        host_b += s.profile.host_bwd_call_s;
      }
      host_f += mf.host_ops * s.profile.host_op_s;
      host_b += mb.host_ops * s.profile.host_op_s;
    }
    if (cls == StepClass::Diagonal) {
      fwd += memory_s(ctx, proto.fwd_final, c, c);
      bwd += memory_s(ctx, proto.bwd_final, c, c);
    }
    RoundCost r;
    r.set_floored(fwd, host_f, bwd, host_b, s.profile.recomputes_attention());
    r.tiles = b.tiles_visited * s.spec.batch;
    return r;
  }

  // The launch code picks the CTA tiles (configs/kernels/), so a ring step's calls, timed by their
  // shapes, do not see the asked tile; nor do the calls of strategies without a ring. What does is
  // the varlen path of a ring step without closed-form shapes (varlen_step: the block's visited
  // area at the asked tile).
  [[nodiscard]] bool kernel_picks_tiles(const Implementation& im, const Strategy& strategy, std::string_view mask_family,
                                        std::string_view layout_family) const noexcept override {
    return !strategy.has_ring() || im.protocol.ring_steps.plan(mask_family, layout_family) != nullptr;
  }

  [[nodiscard]] bool times_by_step_class(const ResolvedScenario& s) const override {
    return s.impl.protocol.ring_steps.plan(effective_mask_family(s.spec), s.spec.layout.family_name()) != nullptr;
  }

  [[nodiscard]] std::int64_t variant_from_rank(const ResolvedScenario& s, StepClass cls) const override {
    const auto& proto = s.impl.protocol.ring_steps;
    const StepCalls* plan = proto.plan(effective_mask_family(s.spec), s.spec.layout.family_name());
    return plan ? proto.rank_rule_from(*plan, cls) : -1;
  }

  // A mask without closed-form step shapes (packed documents): the library's varlen call per step
  // over the documents the two blocks share, its work the block's own tile counts; no merge
  // (the code merges per step as for plain blocks, a term this path leaves out: it is memory-bound
  // and small next to the call at the block sizes a packed batch runs).
  RoundCost varlen_step(const ResolvedScenario& s, const BlockStats& b) const {
    const Context ctx = context(s);
    const double heads = static_cast<double>(std::max<std::int64_t>(1, s.mask->heads()));
    VarlenWork w{s.layout->block(), s.layout->block(), static_cast<double>(b.visited_area) / heads,
                 static_cast<double>(b.masked_area) / heads, ctx.heads, ctx.batch, ctx.head_dim};
    const KernelTime t = flash_varlen_time(*s.impl.kernel_model, ctx.rates, w);
    RoundCost r;
    r.set_floored(t.fwd_s, s.profile.host_step_s + s.profile.host_call_s, t.bwd_s,
                  s.profile.host_bwd_step_s + s.profile.host_bwd_call_s, s.profile.recomputes_attention());
    r.tiles = b.tiles_visited * s.spec.batch;
    return r;
  }

  // One call as a plain flash-attention function issues it: the kernel, at least the host's call.
  [[nodiscard]] RoundCost call(const ResolvedScenario& s, const AttentionCall& c) const override {
    const Context ctx = context(s);
    KernelCall kc{c.q_len, c.k_len, c.causal, c.diagonal, c.heads, c.kv_heads, c.batch, s.model.head_dim, c.varlen};
    const KernelTime t = memo(ctx, s, kc);
    RoundCost r;
    r.set_floored(t.fwd_s, s.profile.host_call_s, t.bwd_s, s.profile.host_bwd_call_s, s.profile.recomputes_attention());
    r.tiles = call_tiles_visited(c, s.tile) * c.batch;
    return r;
  }

  // A rank's varlen pieces are one flash_attn_varlen_func launch: every piece's CTAs share the
  // GPU, so the pieces are timed as one varlen call over their summed lengths and allowed pairs
  // (flash_varlen_time, as a ring's varlen step), with one dispatch. Summing each piece's own
  // makespan would leave SMs idle between pieces and overcharge the pass with the fewest CTAs
  // per piece, the forward (one CTA per query tile; the backward has one per key tile): a rank
  // of many short pieces then showed a forward slower than its backward.
  [[nodiscard]] RoundCost calls(const ResolvedScenario& s, std::span<const AttentionCall> list) const override {
    if (std::none_of(list.begin(), list.end(), [](const AttentionCall& c) { return c.varlen; }))
      return AttentionCost::calls(s, list);
    const Context ctx = context(s);
    VarlenWork w;
    w.heads = list.front().heads;
    w.head_dim = s.model.head_dim;
    RoundCost r;
    for (const auto& c : list) {
      const double b = static_cast<double>(c.batch);
      w.q_len += c.q_len * c.batch;
      w.k_len += c.k_len * c.batch;
      w.visited_elements += b * static_cast<double>(call_allowed_pairs(c));
      r.tiles += call_tiles_visited(c, s.tile) * c.batch;
    }
    const KernelTime t = flash_varlen_time(*s.impl.kernel_model, ctx.rates, w);
    r.set_floored(t.fwd_s, s.profile.host_call_s, t.bwd_s, s.profile.host_bwd_call_s, s.profile.recomputes_attention());
    return r;
  }

 private:
  struct Context {
    KernelRates rates;
    std::int64_t heads = 1, kv_heads = 1, batch = 1, head_dim = 1;
  };
  // A call's shape and the rates it runs at: a fit, or an interval's perturbed profiles, change
  // the rates between predictions, and the perturbed profiles repeat point after point of a sweep.
  using Print = std::array<double, 14>;
  struct Key {
    std::int64_t q, k, diagonal, heads, kv_heads, batch, head_dim;
    bool causal, varlen;
    Print print;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      std::size_t h = 1469598103934665603ULL;
      for (const std::int64_t v : {k.q, k.k, k.diagonal, k.heads, k.kv_heads, k.batch, k.head_dim,
                                   static_cast<std::int64_t>(k.causal), static_cast<std::int64_t>(k.varlen)})
        h = (h ^ static_cast<std::size_t>(v)) * 1099511628211ULL;
      // The doubles by their bit patterns: std::hash<double> hashes bytes one at a time, which
      // dominated a plan's profile. (Equal doubles have equal bits but for 0 and -0, which no
      // rate takes.)
      for (const double d : k.print) h = (h ^ std::bit_cast<std::uint64_t>(d)) * 1099511628211ULL;
      h ^= h >> 29;
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
    const Key key{kc.q_len, kc.k_len, kc.diagonal, kc.heads, kc.kv_heads, kc.batch, kc.head_dim, kc.causal, kc.varlen,
                  Print{ctx.rates.fwd_flops_per_s, ctx.rates.bwd_flops_per_s, ctx.rates.exp_per_s,
                        ctx.rates.alu_per_s, ctx.rates.hbm_bytes_per_s, ctx.rates.tile_overhead_s,
                        ctx.rates.cta_overhead_s, ctx.rates.softmax_overlap, ctx.rates.launch_s, ctx.rates.solo_gain,
                        static_cast<double>(ctx.rates.sm_count), ctx.rates.memory_latency_s,
                        static_cast<double>(ctx.rates.registers_per_sm),
                        static_cast<double>(ctx.rates.shared_memory_per_sm_bytes)}};
    // Shards, one lock each: the threads of a sweep look shapes up all the time, and one lock for
    // the whole table made two threads slower than one.
    Shard& shard = shards_[KeyHash{}(key) % kShards];
    {
      const std::lock_guard lock(shard.mutex);
      if (const auto it = shard.times.find(key); it != shard.times.end()) return it->second;
    }
    const KernelTime t = flash_call_time(*s.impl.kernel_model, ctx.rates, kc);
    const std::lock_guard lock(shard.mutex);
    if (shard.times.size() >= kMemoEntries / kShards) shard.times.clear();
    shard.times.emplace(key, t);
    return t;
  }

  static constexpr std::size_t kMemoEntries = 1 << 16, kShards = 16;
  struct Shard {
    std::mutex mutex;
    std::unordered_map<Key, KernelTime, KeyHash> times;
  };
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace

std::shared_ptr<const AttentionCost> make_flash_cost() { return std::make_shared<const FlashCost>(); }

}  // namespace ringsim::models
