#include "models/families/kernel_time.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>

#include "models/io/error.hpp"

namespace ringsim::models {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

KernelRates KernelRates::of(const Hardware& hw, const Profile& p) {
  if (!hw.has_compute_units())
    throw InputError({}, 0, "hardware",
                     hw.name + " gives no compute_units (SM count, clock, shared memory, registers), which the "
                               "kernel-time model needs");
  KernelRates r;
  const double sm = static_cast<double>(hw.sm_count);
  r.sm_count = hw.sm_count;
  r.registers_per_sm = hw.registers_per_sm;
  r.shared_memory_per_sm_bytes = hw.shared_memory_per_sm_bytes;
  r.device = {hw.compute_capability, hw.shared_memory_per_block_bytes, hw.shared_memory_per_sm_bytes};
  const double peak = hw.peak_flops_per_s(p.attention_precision) / sm;
  r.fwd_flops_per_s = peak * p.attention_efficiency;
  r.bwd_flops_per_s = peak * (p.attention_bwd_efficiency > 0 ? p.attention_bwd_efficiency : p.attention_efficiency);
  r.exp_per_s = hw.sfu_ops_per_clock_per_sm * hw.sm_clock_hz;
  // A fused multiply-add is two FLOPs of the fp32 peak but one operation.
  r.alu_per_s = hw.peak_flops_per_s(Precision::FP32) / 2 / sm;
  r.hbm_bytes_per_s = hw.hbm_bandwidth_bytes_per_s * p.memory_efficiency;
  r.memory_latency_s = hw.memory_latency_s;
  r.tile_overhead_s = p.tile_overhead_s;
  r.cta_overhead_s = p.cta_overhead_s;
  r.launch_s = p.kernel_launch_s;
  r.solo_gain = p.solo_cta_gain;
  const double smem_peak = hw.shared_memory_bytes_per_clock_per_sm * hw.sm_clock_hz;
  r.smem_bytes_per_s = smem_peak * p.shared_memory_efficiency;
  r.bwd_smem_bytes_per_s =
      smem_peak * (p.bwd_shared_memory_efficiency > 0 ? p.bwd_shared_memory_efficiency : p.shared_memory_efficiency);
  r.softmax_overlap = p.softmax_overlap;
  return r;
}

KernelRates pass_rates(const KernelRates& r, bool backward) noexcept {
  KernelRates out = r;
  if (backward) {
    out.fwd_flops_per_s = 0;
    out.smem_bytes_per_s = 0;
  } else {
    out.bwd_flops_per_s = 0;
    out.bwd_smem_bytes_per_s = 0;
    out.hbm_bytes_per_s = 0;
  }
  return out;
}

std::int64_t ctas_per_sm(const KernelSpec& spec, const KernelTile& tile, const KernelRates& r) {
  const std::int64_t by_regs = r.registers_per_sm / std::max<std::int64_t>(1, tile.warps * 32 * spec.registers_per_thread);
  const std::int64_t by_smem =
      tile.smem_bytes > 0 ? r.shared_memory_per_sm_bytes / tile.smem_bytes : std::numeric_limits<std::int64_t>::max();
  return std::max<std::int64_t>(1, std::min(by_regs, by_smem));
}

namespace {

// Where the exactly scheduled CTAs of n on `slots` slots start. Up to `exact_limit` CTAs (and
// whenever the fluid start would leave fewer than its tail of 8 x slots) every CTA is scheduled,
// on min(slots, n) slots free at 0. Beyond, the CTAs before the last 8 x slots are a fluid bulk
// that keeps every slot busy, so the slots finish it together, spread over about one mean CTA
// (where the next one starts): the caller sets `base` (the bulk over the slots) and `mean`.
struct TailStart {
  std::int64_t slots;
  bool exact;
  std::int64_t first;  // index of the first CTA scheduled exactly
  std::int64_t used;   // slots the exact part runs on
  double base = 0, mean = 0;
  TailStart(std::int64_t n, std::int64_t slots_, std::int64_t exact_limit)
      : slots(slots_), exact(n <= (exact_limit > 0 ? exact_limit : 32 * slots_) || n <= 8 * slots_),
        first(exact ? 0 : n - 8 * slots_), used(exact ? std::min(slots_, n) : slots_) {}
  // Slot s's free time; non-decreasing in s.
  [[nodiscard]] double start(std::int64_t s) const {
    return exact ? 0.0
                 : std::max(0.0, base + mean * ((static_cast<double>(s) + 0.5) / static_cast<double>(slots) - 0.5));
  }
};

}  // namespace

namespace {

// The greedy list schedule of a call's CTAs; with `slots_out`, also the slots' final free times (in
// no particular order) and when the last CTA started (what drained_makespan needs).
double list_schedule(const std::vector<double>& pattern, std::int64_t repeats, std::int64_t slots,
                     std::int64_t exact_limit, std::vector<double>* slots_out, double* last_start) {
  const auto m = static_cast<std::int64_t>(pattern.size());
  if (m == 0 || repeats <= 0 || slots <= 0) return 0;
  const std::int64_t n = m * repeats;
  TailStart tail_start(n, slots, exact_limit);
  const std::int64_t first = tail_start.first, used = tail_start.used;
  // One pass over the pattern: its sum, the sum of its first `first % m` CTAs (the running sum
  // there: the same bits as a sum of its own) and whether its CTAs are of one duration.
  const double w0 = pattern.front();
  const std::int64_t cut = first % m;
  double pattern_sum = 0, prefix = 0;
  bool even = true;
  for (std::int64_t i = 0; i < m; ++i) {
    const double w = pattern[static_cast<std::size_t>(i)];
    if (i == cut) prefix = pattern_sum;
    pattern_sum += w;
    even = even && w == w0;
  }
  if (!tail_start.exact) {
    const double bulk = pattern_sum * static_cast<double>(first / m) + prefix;
    tail_start.mean = pattern_sum / static_cast<double>(m);
    tail_start.base = bulk / static_cast<double>(slots);
  }
  const auto start_of = [&](std::int64_t s) { return tail_start.start(s); };
  // CTAs of one duration (a full call, a varlen call's even spread) on slots whose free times lie
  // within one duration of each other: each CTA finishes after every slot is free again, so the
  // slots take CTAs in turn, earliest first, and no heap is needed. The last to finish is the
  // latest-starting slot of those with the most CTAs or of those with one fewer. Its finish is
  // added one CTA at a time, as the heap would: the same bits (fits are sensitive to them).
  if (even && w0 > 0 && start_of(used - 1) - start_of(0) <= w0) {
    const std::int64_t tail = n - first, lo = tail / used, extra = tail % used;
    const auto finish = [&](std::int64_t slot, std::int64_t count) {
      double f = start_of(slot);
      for (std::int64_t c = 0; c < count; ++c) f += w0;
      return f;
    };
    if (slots_out) {
      slots_out->clear();
      for (std::int64_t s = 0; s < used; ++s) slots_out->push_back(finish(s, lo + (s < extra ? 1 : 0)));
      // The last CTA goes to the last slot of the round it completes.
      const std::int64_t last = extra > 0 ? extra - 1 : used - 1;
      *last_start = finish(last, extra > 0 ? lo : lo - 1);
    }
    double end = 0;
    if (extra > 0) end = finish(extra - 1, lo + 1);
    if (lo > 0) end = std::max(end, finish(used - 1, lo));
    return end;
  }
  // A min-heap of the slots' free times (start_of is non-decreasing, so the starts already are
  // one). Each CTA takes the earliest slot and puts it back later: the top is replaced and sifted
  // down in one pass, half the work of a pop and a push, the same slot chosen each time.
  thread_local std::vector<double> heap;
  heap.resize(static_cast<std::size_t>(used));
  for (std::int64_t s = 0; s < used; ++s) heap[static_cast<std::size_t>(s)] = start_of(s);
  const std::size_t size = heap.size();
  double end = 0, last = 0;
  std::int64_t k = first % m;
  for (std::int64_t i = first; i < n; ++i) {
    const double start = heap[0];
    const double finish = start + pattern[static_cast<std::size_t>(k)];
    if (++k == m) k = 0;
    end = std::max(end, finish);
    last = start;
    std::size_t at = 0;
    for (;;) {
      std::size_t child = 2 * at + 1;
      if (child >= size) break;
      if (child + 1 < size && heap[child + 1] < heap[child]) ++child;
      if (!(heap[child] < finish)) break;
      heap[at] = heap[child];
      at = child;
    }
    heap[at] = finish;
  }
  if (slots_out) {
    slots_out->assign(heap.begin(), heap.end());
    std::sort(slots_out->begin(), slots_out->end());
    *last_start = last;
  }
  return end;
}

// Per-CTA rate (SM-seconds per second) of j CTAs sharing an SM that holds k (KernelRates::solo_gain).
double shared_rate(std::int64_t j, std::int64_t k, double gain) {
  return (1.0 + gain * static_cast<double>(k - j) / static_cast<double>(k - 1)) / static_cast<double>(k);
}

// Processor sharing on one SM: CTAs with `left` SM-seconds of work each, the shortest finishing
// first and the others speeding up. `left` is sorted here.
double share_out(std::vector<double>& left, std::int64_t k, double gain) {
  std::sort(left.begin(), left.end());
  double t = 0, done = 0;
  for (std::size_t a = 0; a < left.size(); ++a) {
    const auto j = static_cast<std::int64_t>(left.size() - a);
    t += (left[a] - done) / shared_rate(j, k, gain);
    done = left[a];
  }
  return t;
}

}  // namespace

double list_schedule_makespan(const std::vector<double>& pattern, std::int64_t repeats, std::int64_t slots,
                              std::int64_t exact_limit) {
  return list_schedule(pattern, repeats, slots, exact_limit, nullptr, nullptr);
}

double partial_wave_makespan(const std::vector<double>& pattern, std::int64_t repeats, std::int64_t sm_count,
                             std::int64_t k, double gain) {
  const auto m = static_cast<std::int64_t>(pattern.size());
  const std::int64_t n = m * repeats;
  if (!(gain > 0) || k <= 1 || n <= 0 || n > sm_count * k) return -1;
  gain = std::min(gain, static_cast<double>(k - 1));
  double end = 0;
  std::vector<double> left;
  for (std::int64_t sm = 0; sm < std::min(n, sm_count); ++sm) {
    // This SM's CTAs: i = sm, sm + sm_count, ... ; their SM-seconds of work (wall / k).
    left.clear();
    for (std::int64_t i = sm; i < n; i += sm_count)
      left.push_back(pattern[static_cast<std::size_t>(i % m)] / static_cast<double>(k));
    end = std::max(end, share_out(left, k, gain));
  }
  return end;
}

double drained_makespan(const std::vector<double>& pattern, std::int64_t repeats, std::int64_t sm_count,
                        std::int64_t k, double gain, std::int64_t exact_limit) {
  const std::int64_t slots = sm_count * k;
  if (!(gain > 0) || k <= 1 || pattern.empty() || repeats <= 0 || sm_count <= 0)
    return list_schedule_makespan(pattern, repeats, slots, exact_limit);
  const std::int64_t n = static_cast<std::int64_t>(pattern.size()) * repeats;
  // CTAs of one duration w scheduled exactly (every slot free at 0): whole waves of w, then the
  // leftover CTAs dealt to the SMs in turn, the fullest SM (c of them) ending last after
  // (w / k) / shared_rate(c). Closed form: calls of one shape are the common case.
  const double w0 = pattern.front();
  if (std::all_of(pattern.begin(), pattern.end(), [&](double w) { return w == w0; }) && w0 > 0 &&
      TailStart(n, slots, exact_limit).exact) {
    const std::int64_t waves = n / slots, extra = n % slots;
    const double whole = static_cast<double>(waves) * w0;
    if (extra == 0) return whole;
    const std::int64_t fullest = ceil_div(extra, sm_count);
    return whole + w0 / static_cast<double>(k) / shared_rate(fullest, k, std::min(gain, static_cast<double>(k - 1)));
  }
  if (const double t = partial_wave_makespan(pattern, repeats, sm_count, k, gain); t >= 0) return t;
  gain = std::min(gain, static_cast<double>(k - 1));
  // Until the last CTA is dispatched a freed slot is refilled at once, so every SM holds k CTAs
  // and the list schedule is exact; after it, each SM's remaining CTAs share it as they finish.
  // Which CTAs share an SM at the end is not modelled slot by slot: a flip of two CTAs' order
  // would move one to another SM and make the call's time jump with its parameters (fits need it
  // continuous). The remaining CTAs, sorted, are dealt to the SMs in turn (SM q holds the q-th,
  // (q + sm_count)-th, ... shortest), which puts the uniform waves' leftover CTAs alone on their
  // SMs as the hardware's in-order dispatch does.
  // Reused: packed batches and sweeps call this per step shape, so no allocation per call.
  thread_local std::vector<double> free, remaining, left;
  double last = 0;
  list_schedule(pattern, repeats, slots, exact_limit, &free, &last);
  remaining.clear();
  for (const double f : free)
    if (f > last) remaining.push_back((f - last) / static_cast<double>(k));
  std::sort(remaining.begin(), remaining.end());
  double end = last;
  for (std::int64_t sm = 0; sm < sm_count; ++sm) {
    left.clear();
    for (auto i = static_cast<std::size_t>(sm); i < remaining.size(); i += static_cast<std::size_t>(sm_count))
      left.push_back(remaining[i]);
    if (left.empty()) break;
    end = std::max(end, last + share_out(left, k, gain));
  }
  return end;
}

double uniform_makespan(double duration, std::int64_t ctas, std::int64_t slots, std::int64_t exact_limit) {
  if (ctas <= 0 || slots <= 0 || !(duration > 0)) return 0;
  // list_schedule_makespan's fluid start and exact tail, with every CTA `duration` long: the
  // slots' free times spread over less than one CTA, so the tail goes to the slots in turn.
  TailStart tail_start(ctas, slots, exact_limit);
  const std::int64_t first = tail_start.first, used = tail_start.used;
  if (!tail_start.exact) {
    tail_start.base = duration * static_cast<double>(first) / static_cast<double>(slots);
    tail_start.mean = duration;
  }
  const auto start_of = [&](std::int64_t s) { return tail_start.start(s); };
  const std::int64_t tail = ctas - first, lo = tail / used, extra = tail % used;
  double end = 0;
  if (extra > 0) end = start_of(extra - 1) + static_cast<double>(lo + 1) * duration;
  if (lo > 0) end = std::max(end, start_of(used - 1) + static_cast<double>(lo) * duration);
  return end;
}

namespace {

// Per-element seconds (SM-seconds) of one visited tile element, one head.
struct ElementCost {
  double full = 0;    // any visited element
  double masked = 0;  // extra where the tile straddles the diagonal
};

ElementCost element_cost(const KernelSpec& s, const KernelRates& r, std::int64_t padded_dim, bool backward) {
  ElementCost e;
  const double flops = 4.0 * static_cast<double>(padded_dim) * (backward ? s.bwd_flops_factor : 1.0);
  const double matrix = flops / (backward ? r.bwd_flops_per_s : r.fwd_flops_per_s);
  const double softmax = (backward ? s.bwd_exp_per_element : s.fwd_exp_per_element) / r.exp_per_s +
                         (backward ? s.bwd_alu_per_element : s.fwd_alu_per_element) / r.alu_per_s;
  e.full = std::max(matrix, softmax) + (1.0 - r.softmax_overlap) * std::min(matrix, softmax);
  e.masked = s.mask_alu_per_element / r.alu_per_s;
  return e;
}

// Seconds of one visited element of tile `t`: its compute (`e`), or its shared-memory traffic
// where that takes longer. The matrix unit's operands come through shared memory (ldmatrix), and
// tiles whose warps each re-read the whole key tile with few queries per warp (the split kernel's
// 64-query tile, head dim 256's 8 warps) move more bytes per FLOP; the backward's five products
// move more than the forward's two.
double visited_element_s(const KernelSpec& s, const KernelRates& r, const KernelTile& t, const ElementCost& e,
                         bool backward) {
  const double rate = backward ? r.bwd_smem_bytes_per_s : r.smem_bytes_per_s;
  const double bytes = backward ? s.bwd_smem_bytes(t) : s.fwd_smem_bytes(t);
  if (!(rate > 0) || !(bytes > 0)) return e.full;
  return std::max(e.full, bytes / rate);
}

// A call's CTAs on the GPU: the greedy list schedule on sm_count x k slots while CTAs remain to
// be dispatched, SMs left with fewer than k CTAs then running them faster (KernelRates::solo_gain):
// a partial wave from the start, the last wave's drain otherwise.
double call_makespan(const std::vector<double>& pattern, std::int64_t repeats, const KernelRates& r, std::int64_t k) {
  return drained_makespan(pattern, repeats, r.sm_count, k, r.solo_gain);
}

// What one CTA of a tile shape costs (SM-seconds): its fixed part, loading its first tiles (two
// dependent loads' latency: Q or K/V and the first tiles of the other side, mostly L2 hits, so
// latency, not bandwidth, bounds it), and per visited and per straddling tile.
struct TileCosts {
  double cta_s, fill_s, tile_s, mask_s;
  TileCosts(const KernelSpec& s, const KernelRates& r, const KernelTile& t, bool backward) {
    const ElementCost e = element_cost(s, r, t.max_head_dim, backward);
    const double area = static_cast<double>(t.block_m * t.block_n);
    cta_s = r.cta_overhead_s;
    fill_s = 2 * r.memory_latency_s;
    tile_s = r.tile_overhead_s + area * visited_element_s(s, r, t, e, backward);
    mask_s = area * e.masked;
  }
  // A CTA that visits no tile only pays its fixed part.
  [[nodiscard]] double work(std::int64_t visited, std::int64_t masked) const noexcept {
    return visited > 0 ? cta_s + fill_s + static_cast<double>(visited) * tile_s + static_cast<double>(masked) * mask_s
                       : cta_s;
  }
};

// Visited and straddling key tiles of query rows [r0, r1) of a call: a tile of keys
// [t bn, (t + 1) bn) is visited iff its first key <= r1 - 1 + diagonal, and straddles iff some key
// of it > r0 + diagonal.
void row_tiles(const KernelCall& c, std::int64_t r0, std::int64_t r1, std::int64_t bn, std::int64_t& visited,
               std::int64_t& masked) {
  const std::int64_t cols = ceil_div(c.k_len, bn);
  if (!c.causal) {
    visited = cols;
    masked = 0;
    return;
  }
  const std::int64_t reach = r1 - 1 + c.diagonal;
  visited = reach < 0 ? 0 : std::min(cols, reach / bn + 1);
  const std::int64_t sure = r0 + c.diagonal;  // keys <= sure are allowed for every row
  std::int64_t full = sure < 0 ? 0 : std::min(cols, (sure + 1) / bn);
  if (full == cols - 1 && sure >= c.k_len - 1) full = cols;
  full = std::min(full, visited);
  masked = visited - full;
}

// Key-block view for the backward: query rows of key tile [k0, k1) that see at least one key, and
// those that see only some.
void col_tiles(const KernelCall& c, std::int64_t k0, std::int64_t k1, std::int64_t bm, std::int64_t& visited,
               std::int64_t& masked) {
  const std::int64_t rows = ceil_div(c.q_len, bm);
  if (!c.causal) {
    visited = rows;
    masked = 0;
    return;
  }
  // Query i sees key k iff k <= i + diagonal: the first row seeing key k0 is k0 - diagonal.
  const std::int64_t first_row = std::max<std::int64_t>(0, k0 - c.diagonal);
  if (first_row >= c.q_len) {
    visited = masked = 0;
    return;
  }
  const std::int64_t first_tile = first_row / bm;
  visited = rows - first_tile;
  // Rows below k1 - 1 - diagonal see the whole key tile.
  const std::int64_t all_row = std::max<std::int64_t>(0, k1 - 1 - c.diagonal);
  const std::int64_t first_full = std::min(rows, ceil_div(all_row, bm));
  masked = std::max<std::int64_t>(0, first_full - first_tile);
}

}  // namespace

namespace {

// How a call it splits runs the split kernel: its tile, the query blocks of block_m rows, the key
// tiles and the split count. `tile` is nullptr when the call runs unsplit (no split kernel, none
// for its head dim, a varlen call, or enough work unsplit).
struct SplitShape {
  const KernelTile* tile = nullptr;
  // rows: blocks of block_m rows, each `group` query heads of a token packed together (PackGQA; 1
  // without it), so a block holds block_m / group tokens.
  std::int64_t rows = 0, cols = 0, splits = 0, group = 1;
};

SplitShape split_shape(const KernelSpec& s, const KernelRates& r, const KernelCall& c) {
  SplitShape out;
  if (!s.fwd_split_kv || c.varlen) return out;
  const SplitKv& sk = *s.fwd_split_kv;
  const KernelTile* t = tile_for(sk.tiles, c.head_dim, c.causal, r.device);
  if (!t) return out;
  out.group = sk.pack_gqa && c.kv_heads > 0 ? std::max<std::int64_t>(1, c.heads / c.kv_heads) : 1;
  out.rows = ceil_div(c.q_len * out.group, t->block_m);
  out.cols = ceil_div(c.k_len, t->block_n);
  out.splits = sk.splits(c.batch * (c.heads / out.group) * out.rows, out.cols, r.sm_count);
  if (out.splits > 1) out.tile = t;
  return out;
}

// The split-KV forward (KernelSpec::fwd_split_kv) of a call it splits: one CTA per (query block,
// split, batch, head), each over its split's share of the key tiles the query block visits.
// Negative when the call runs unsplit.
double split_fwd_s(const KernelSpec& s, const KernelRates& r, const KernelCall& c) {
  const SplitShape shape = split_shape(s, r, c);
  if (!shape.tile) return -1;
  const KernelTile& t = *shape.tile;
  const std::int64_t rows = shape.rows, cols = shape.cols, splits = shape.splits, g = shape.group;
  const std::int64_t per = ceil_div(cols, splits);
  const TileCosts cost(s, r, t, false);
  const std::int64_t k = ctas_per_sm(s, t, r);
  std::vector<double> pattern;
  pattern.reserve(static_cast<std::size_t>(rows * splits));
  for (std::int64_t i = 0; i < rows; ++i) {
    // The tokens whose (token, head) rows the block holds (all of one token's heads when packed).
    std::int64_t visited = 0, masked = 0;
    row_tiles(c, i * t.block_m / g, std::min(c.q_len, ceil_div((i + 1) * t.block_m, g)), t.block_n, visited, masked);
    for (std::int64_t j = 0; j < splits; ++j) {
      // The straddling tiles are the last `masked` of the `visited` ones.
      const std::int64_t lo = j * per, hi = std::min(visited, (j + 1) * per);
      const std::int64_t v = std::max<std::int64_t>(0, hi - lo);
      const std::int64_t m = std::max<std::int64_t>(0, hi - std::max(lo, visited - masked));
      pattern.push_back(cost.work(v, m) * static_cast<double>(k));
    }
  }
  return call_makespan(pattern, c.batch * (c.heads / g), r, k);
}

}  // namespace

const KernelTile& flash_fwd_tile(const KernelSpec& s, const KernelRates& r, const KernelCall& c) {
  if (const KernelTile* t = split_shape(s, r, c).tile) return *t;
  return s.tile(false, c.head_dim, c.causal, r.device);
}

double flash_fwd_s(const KernelSpec& s, const KernelRates& r, const KernelCall& c) {
  if (c.q_len <= 0 || c.k_len <= 0) return 0;
  // The split forward launches its combine kernel too.
  if (const double split = split_fwd_s(s, r, c); split >= 0) return split + static_cast<double>(s.fwd_launches + 1) * r.launch_s;
  const KernelTile& t = s.tile(false, c.head_dim, c.causal, r.device);
  const TileCosts cost(s, r, t, false);
  const std::int64_t k = ctas_per_sm(s, t, r);
  const std::int64_t rows = ceil_div(c.q_len, t.block_m);
  std::vector<double> pattern(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) {
    std::int64_t visited = 0, masked = 0;
    row_tiles(c, i * t.block_m, std::min(c.q_len, (i + 1) * t.block_m), t.block_n, visited, masked);
    // A CTA shares its SM with k - 1 others: its wall time is k times its work.
    pattern[static_cast<std::size_t>(i)] = cost.work(visited, masked) * static_cast<double>(k);
  }
  return call_makespan(pattern, c.batch * c.heads, r, k) + static_cast<double>(s.fwd_launches) * r.launch_s;
}

double flash_bwd_s(const KernelSpec& s, const KernelRates& r, const KernelCall& c) {
  if (c.q_len <= 0 || c.k_len <= 0) return 0;
  const KernelTile& t = s.tile(true, c.head_dim, c.causal, r.device);
  const TileCosts cost(s, r, t, true);  // its fill: K and V, then the first Q and dO tiles
  const std::int64_t k = ctas_per_sm(s, t, r);
  const std::int64_t cols = ceil_div(c.k_len, t.block_n);
  std::vector<double> pattern(static_cast<std::size_t>(cols));
  for (std::int64_t j = 0; j < cols; ++j) {
    std::int64_t visited = 0, masked = 0;
    col_tiles(c, j * t.block_n, std::min(c.k_len, (j + 1) * t.block_n), t.block_m, visited, masked);
    pattern[static_cast<std::size_t>(j)] = cost.work(visited, masked) * static_cast<double>(k);
  }
  const double main = call_makespan(pattern, c.batch * c.heads, r, k);
  const double q_elements = static_cast<double>(c.q_len * c.heads * c.batch * c.head_dim);
  const double memory = (s.bwd_pre_bytes_per_q_element + s.bwd_post_bytes_per_q_element) * q_elements / r.hbm_bytes_per_s;
  return main + memory + static_cast<double>(s.bwd_launches) * r.launch_s;
}

KernelTime flash_call_time(const KernelSpec& s, const KernelRates& r, const KernelCall& c) {
  KernelTime t;
  t.fwd_s = flash_fwd_s(s, r, c);
  t.bwd_s = flash_bwd_s(s, r, c);
  if (c.q_len > 0 && c.k_len > 0) {
    t.fwd_ctas = ceil_div(c.q_len, s.tile(false, c.head_dim, c.causal, r.device).block_m) * c.batch * c.heads;
    t.bwd_ctas = ceil_div(c.k_len, s.tile(true, c.head_dim, c.causal, r.device).block_n) * c.batch * c.heads;
  }
  return t;
}

KernelTime flash_varlen_time(const KernelSpec& s, const KernelRates& r, const VarlenWork& w) {
  KernelTime out;
  if (w.q_len <= 0 || w.k_len <= 0 || !(w.visited_elements > 0)) return out;
  auto pass = [&](bool backward, std::int64_t& ctas_out) {
    // Packed documents are causal within each document: the causal tiles.
    const KernelTile& t = s.tile(backward, w.head_dim, true, r.device);
    const ElementCost e = element_cost(s, r, t.max_head_dim, backward);
    const double area = static_cast<double>(t.block_m * t.block_n);
    const std::int64_t ctas = ceil_div(backward ? w.k_len : w.q_len, backward ? t.block_n : t.block_m);
    ctas_out = ctas * w.heads * w.batch;
    // Per head: the visited elements in kernel tiles, each with its fixed cost; every CTA pays its
    // own fixed cost and fill.
    const double work = w.visited_elements * visited_element_s(s, r, t, e, backward) + w.masked_elements * e.masked +
                        w.visited_elements / area * r.tile_overhead_s +
                        static_cast<double>(ctas) * (r.cta_overhead_s + 2 * r.memory_latency_s);
    const std::int64_t k = ctas_per_sm(s, t, r);
    // Packed batches time a varlen step per ring position and round: one CTA repeated (the
    // schedule's closed form for CTAs of one duration), not a pattern of `ctas` equal CTAs.
    const double each = work / static_cast<double>(ctas) * static_cast<double>(k);
    const std::int64_t all = ctas * w.heads * w.batch;
    return r.solo_gain > 0 ? drained_makespan({each}, all, r.sm_count, k, r.solo_gain)
                           : uniform_makespan(each, all, r.sm_count * k);
  };
  out.fwd_s = pass(false, out.fwd_ctas) + static_cast<double>(s.fwd_launches) * r.launch_s;
  const double q_elements = static_cast<double>(w.q_len * w.heads * w.batch * w.head_dim);
  out.bwd_s = pass(true, out.bwd_ctas) +
              (s.bwd_pre_bytes_per_q_element + s.bwd_post_bytes_per_q_element) * q_elements / r.hbm_bytes_per_s +
              static_cast<double>(s.bwd_launches) * r.launch_s;
  return out;
}

}  // namespace ringsim::models
