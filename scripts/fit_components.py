#!/usr/bin/env python3
"""Component fits for issue 25: a kernel-time model per (kernel family, GPU) and a link model per hop
type, fitted on the published component measurements copied into data/components/ (see its
README.md) and scored out of sample (leave-one-shape-group-out for kernels, leave-one-size-out for
links). Writes data/components/fit.json and prints a readable summary. Standard library only
(numpy/scipy are not installed on the project's machines); deterministic (no clocks, no randomness,
sorted keys).

usage: python3 scripts/fit_components.py [--root DIR] [--out PATH] [--quiet]

These fits are an independent cross-check: the C++ cost model is fitted by `ringsim calibrate --from-kernels`
and `--from-probes` through models/families/kernel_time.cpp and models/hardware/point_to_point.cpp (the same
kernels: configs/kernels/flash-attn-2.json, flash-attn-3.json, cudnn-fused.json); docs/components.md compares
the two.

Kernel model (the physical form of models/families/kernel_time.cpp, simplified where the data cannot tell
the extra terms apart):
  * A call of (batch, heads, q_len, k_len, head_dim) launches one CTA per (query block, batch, head)
    forward and one per (key block, batch, head) backward; the block sizes Br x Bc come from the
    kernel's launch code (configs/kernels/flash-attn-2.json for FlashAttention-2; FA3_TILES below for
    FlashAttention-3).
  * A CTA visits the key (forward) or query (backward) tiles its causal bounds allow; a tile that
    straddles the diagonal costs a whole tile: the kernel computes the full Br x Bc products and
    masks element-wise afterwards (flash_fwd_kernel.h, n_masking_steps). The charts' FLOP convention
    (causal counts half the square) is only used to turn TFLOP/s into seconds, never as the work.
  * Tile time = 4 * Br * Bc * d (x 2.5 backward: five products against two) / (e * peak per SM);
    e is the sustained tensor-core efficiency per direction and head dim (the softmax's exp and fp32
    work per element is a larger share at small head dims, so e depends on d).
  * CTA work = c_cta + visited tiles x tile time (c_cta: prologue, loading the first Q/K/V tiles,
    epilogue writing O / dK dV: a fixed cost per CTA, SM-seconds).
  * CTAs that share an SM (FA2: registers allow 2 forward CTAs of 4 warps, 1 backward CTA of 8
    warps; models/families/kernel_time.cpp ctas_per_sm) each run k times slower; CTAs are dispatched in launch
    order to the first free slot (greedy list schedule: wave quantisation and the causal tail), exact
    up to 32 x slots CTAs, beyond that a fluid bulk and an exact tail of the last 8 x slots, as
    models/families/kernel_time.cpp list_schedule_makespan does. FlashAttention-3 is persistent: one CTA per
    SM takes tiles tile_idx, tile_idx + 132, ... (static round robin, hopper/tile_scheduler.hpp).
  * A call adds a per-call fixed cost L (launch, grid start and drain), per direction; the
    backward also adds its memory-bound pre/post kernels (bytes per query element from
    configs/kernels/flash-attn-2.json) at the GPU's HBM bandwidth (not fitted).
Link model: time(size) = latency + size / bandwidth per regime; a regime boundary (NCCL protocol or
channel change) is only kept where the probes show a knee (segmented least squares on relative
error, 1-3 regimes chosen by BIC).
"""
import argparse
import csv
import heapq
import json
import math
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# ----------------------------------------------------------------------------------------------
# Small linear algebra (no numpy here)


def solve(a, b):
    """Solve a x = b (Gauss-Jordan with partial pivoting); a is a list of rows."""
    n = len(a)
    m = [list(a[i]) + [b[i]] for i in range(n)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-300:
            raise ZeroDivisionError("singular matrix")
        m[col], m[piv] = m[piv], m[col]
        p = m[col][col]
        m[col] = [v / p for v in m[col]]
        for r in range(n):
            if r != col and m[r][col] != 0:
                f = m[r][col]
                m[r] = [vr - f * vc for vr, vc in zip(m[r], m[col])]
    return [m[i][n] for i in range(n)]


def inverse(a):
    n = len(a)
    cols = [solve(a, [1.0 if i == j else 0.0 for i in range(n)]) for j in range(n)]
    return [[cols[j][i] for j in range(n)] for i in range(n)]


def mape(pairs):
    """Mean absolute percentage error of (predicted, measured) pairs, in percent."""
    pairs = list(pairs)
    if not pairs:
        return None
    return 100.0 * sum(abs(p - m) / m for p, m in pairs) / len(pairs)


def rnd(x, digits=6):
    """Round for the JSON (significant digits), keeping the output stable and readable."""
    if x is None or isinstance(x, (int, str)) or x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


# ----------------------------------------------------------------------------------------------
# Data


def read_csv(path):
    """Rows of a CSV whose header lines start with '#'; each row gets its 1-based file line."""
    out = []
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    body = [(i + 1, l) for i, l in enumerate(lines) if l.strip() and not l.startswith("#")]
    header = next(csv.reader([body[0][1]]))
    for lineno, l in body[1:]:
        vals = next(csv.reader([l]))
        row = dict(zip(header, vals))
        row["_line"] = lineno
        out.append(row)
    return out


PASS_FACTOR = {"fwd": 1.0, "bwd": 2.5, "fwd_bwd": 3.5}


def fwd_flops(batch, sq, skv, heads, head_dim, causal):
    """The charts' forward FLOP count: 4 * batch * sq * skv * heads * head_dim, halved when causal
    (benchmarks/benchmark_flash_attention.py flops(); hopper/benchmark_attn.py flops())."""
    f = 4.0 * batch * sq * skv * heads * head_dim
    return f / 2 if causal else f


def time_from_tflops(tflops, pass_, batch, seqlen, heads, head_dim, causal):
    """Seconds per call from a chart's TFLOP/s: FLOPs(pass) / rate, bwd = 2.5 x fwd, fwd_bwd = 3.5 x fwd."""
    return PASS_FACTOR[pass_] * fwd_flops(batch, seqlen, seqlen, heads, head_dim, causal) / (tflops * 1e12)


# (family, gpu) -> where its rows come from: (file, method column value)
CHART_SOURCES = {
    ("flash-attn-2", "A100"): [("flash_fa2_a100.csv", "FlashAttention-2")],
    ("flash-attn-2", "H100"): [("flash_fa2_h100.csv", "FlashAttention-2"), ("flash_fa3_h100.csv", "FlashAttention-2"),
                               ("flash_te_h100_cudnn_vs_fa2.csv", "flash-attn (FA2 CUDA)")],
    ("flash-attn-3", "H100"): [("flash_fa3_h100.csv", "FlashAttention-3")],
    ("cudnn-fused", "H100"): [("flash_fa3_h100.csv", "cuDNN"), ("flash_te_h100_cudnn_vs_fa2.csv", "cuDNN FusedAttention")],
}
# Left out on purpose (reported in fit.json): the TE row with post_scale_bias (an extra bias op the
# model does not have).
EXCLUDED_METHODS = {"cuDNN FusedAttention + post_scale_bias": "adds a post-scale bias (extra work the attention model does not have)"}


def kernel_rows(root):
    """Every measurement as a dict: family, gpu, pass, causal, head_dim, heads, batch, sq, skv,
    time_s (seconds per call), group (the shape group held out together), src (file:line)."""
    kdir = os.path.join(root, "data", "components", "kernels")
    rows, excluded = [], []
    for (family, gpu), sources in sorted(CHART_SOURCES.items()):
        for fname, method in sources:
            for r in read_csv(os.path.join(kdir, fname)):
                if r["method"] in EXCLUDED_METHODS and fname.startswith("flash_te") and family == "cudnn-fused":
                    excluded.append({"src": f"{fname}:{r['_line']}", "why": EXCLUDED_METHODS[r["method"]]})
                    continue
                if r["method"] != method:
                    continue
                causal = r["causal"] in ("1", "true")
                d, h, s, b = int(r["head_dim"]), int(r["n_heads"]), int(r["seqlen"]), int(r["batch"])
                if r.get("time_ms"):
                    t = float(r["time_ms"]) * 1e-3
                else:
                    t = time_from_tflops(float(r["tflops"]), r["pass"], b, s, h, d, causal)
                rows.append(dict(family=family, gpu=gpu, pass_=r["pass"], causal=causal, head_dim=d, heads=h,
                                 batch=b, sq=s, skv=s, time_s=t, group=f"seqlen={s}",
                                 src=f"data/components/kernels/{fname}:{r['_line']}"))
    for r in read_csv(os.path.join(kdir, "ultraattn_fa2_a800_h800.csv")):
        causal = r["causal"] == "true"
        sq, skv = int(r["sq"]), int(r["skv"])
        base = dict(family="flash-attn-2", gpu=r["hardware"], causal=causal, head_dim=int(r["head_dim"]),
                    heads=int(r["heads_q"]), batch=int(r["batch"]), sq=sq, skv=skv, group=f"sq={sq},skv={skv}",
                    src=f"data/components/kernels/ultraattn_fa2_a800_h800.csv:{r['_line']}")
        rows.append(dict(base, pass_="fwd", time_s=float(r["fwd_us"]) * 1e-6))
        rows.append(dict(base, pass_="bwd", time_s=float(r["bwd_us"]) * 1e-6))
    for i, r in enumerate(rows):
        r["id"] = i
    return rows, excluded


# ----------------------------------------------------------------------------------------------
# Hardware and kernels (from the project's configs)


def hardware(root, name):
    j = json.load(open(os.path.join(root, "configs", "hardware", name + ".json")))
    cu = j["compute_units"]
    return dict(config=name, sm=int(cu["sm_count"]["value"]), peak=float(j["peak_flops_per_s"]["bf16"]["value"]),
                hbm=float(j["hbm_bandwidth_bytes_per_s"]["value"]), regs=int(cu["registers_per_sm"]["value"]),
                smem=int(cu["shared_memory_per_sm_bytes"]["value"]),
                smem_block=int(cu.get("shared_memory_per_block_bytes", cu["shared_memory_per_sm_bytes"])["value"]),
                cc=round(float(cu["compute_capability"]["value"]) * 10) if "compute_capability" in cu else 0)


def tile_holds(when, hw, causal):
    """Whether a tile's launch-code branch ("when" in configs/kernels) holds on this GPU and mask, as
    models/implementations/kernel_spec.cpp TileWhen::holds reads it."""
    if "causal" in when and when["causal"] != causal:
        return False
    cc = hw["cc"]
    if "compute_capability_at_least" in when and not (cc and cc >= round(when["compute_capability_at_least"] * 10)):
        return False
    if "compute_capability_below" in when and not (cc and cc < round(when["compute_capability_below"] * 10)):
        return False
    if "smem_per_block_at_least" in when and not hw["smem_block"] >= when["smem_per_block_at_least"]:
        return False
    return not ("smem_per_sm_below" in when and not hw["smem"] < when["smem_per_sm_below"])


# The A800 SXM4 80GB is the A100 80GB SXM4 die with NVLink cut to 400 GB/s (NVIDIA A800 datasheet):
# SM count, clocks, tensor peak and HBM are the A100 80GB's. The H800 has its own profile.
GPU_CONFIG = {"A100": "a100-80gb", "A800": "a100-80gb", "H100": "h100-sxm", "H800": "h800"}

# FlashAttention-3 as benchmarked in its July 2024 chart: Dao-AILab/flash-attention
# hopper/flash_fwd_launch_template.h at 7f67966cc742029c0a93755a20c583667836f9d5 ('FA3 initial code
# release', 2024-07-11, the day the chart was added): run_mha_fwd_hdim64 Flash_fwd_kernel_traits<64, 192,
# 128, 16 warps>, hdim128 <128, 128, causal ? 128 : 176, 12 warps>, hdim256 <256, 128, 80, 12 warps>;
# grid = 132 persistent CTAs (Scheduler::get_grid_dim(args, 132)) with StaticPersistentTileScheduler
# (hopper/tile_scheduler.hpp, same commit): tile_idx = blockIdx.x, then += gridDim.x, m_block fastest.
# Three days later (74b0761ff7efc7b90d4e5aeb529c1b2a09a7458c, 2024-07-14, '[FA3] BF16 forward') causal calls
# use DynamicPersistentTileScheduler (next tile = atomicAdd on a counter, m_block fastest): a greedy list
# schedule. The chart's causal rows show no sign of the static round robin's imbalance (it predicts causal
# 16k hd128 26 % slower than measured), so causal calls are timed with the dynamic scheduler.
FA3_TILES = {64: (192, 128, 128), 128: (128, 128, 176), 256: (128, 80, 80)}  # d: (Br, Bc causal, Bc full)
# cuDNN's fused attention is closed source: its tile is not known. This cross-check assumes 128 x 128 for
# every head dim, one CTA per SM, launch order like FA2 (an assumption, flagged in fit.json); the C++ kernel
# (configs/kernels/cudnn-fused.json) reads 64 x 128 / 64 x 64 from the kernel names measured on H100.
CUDNN_TILE = (128, 128)


class Kernel:
    """Tiles, CTAs per SM and the schedule of one family on one GPU."""

    def __init__(self, root, family, gpu):
        self.family, self.gpu = family, gpu
        self.hw = hardware(root, GPU_CONFIG[gpu])
        self.peak_sm = self.hw["peak"] / self.hw["sm"]
        self.persistent = family == "flash-attn-3"
        self.bwd_mem_bytes = 0.0
        if family == "flash-attn-2":
            spec = json.load(open(os.path.join(root, "configs", "kernels", "flash-attn-2.json")))
            self.spec = spec
            self.regs_per_thread = spec["registers_per_thread"]
            self.bwd_mem_bytes = spec["bwd_pre_bytes_per_q_element"] + spec["bwd_post_bytes_per_q_element"]

    def tile(self, backward, d, causal):
        """(Br, Bc, CTAs per SM)."""
        if self.family == "flash-attn-2":
            for t in self.spec["bwd_tiles" if backward else "fwd_tiles"]:
                if d <= t["max_head_dim"] and tile_holds(t.get("when", {}), self.hw, causal):
                    by_regs = self.hw["regs"] // (t["warps"] * 32 * self.regs_per_thread)
                    by_smem = self.hw["smem"] // t["smem_bytes"] if t["smem_bytes"] else by_regs
                    return t["block_m"], t["block_n"], max(1, min(by_regs, by_smem))
            raise ValueError(f"no FA2 tile for head dim {d}")
        if self.family == "flash-attn-3":
            if backward:
                raise ValueError("no FA3 backward data or tiles")
            br, bc_c, bc_f = FA3_TILES[d]
            return br, (bc_c if causal else bc_f), 1
        return CUDNN_TILE[0], CUDNN_TILE[1], 1


def ceil_div(a, b):
    return -(-a // b)


def cta_pattern(backward, sq, skv, causal, br, bc):
    """Visited tiles of each CTA of one (batch, head), in launch order. Causal calls allow key j for
    query i iff j <= i + (skv - sq) (bottom-right aligned, FA2 >= 2.1)."""
    diag = skv - sq
    if not backward:
        rows, cols = ceil_div(sq, br), ceil_div(skv, bc)
        if not causal:
            return [cols] * rows
        out = []
        for i in range(rows):
            reach = min(sq, (i + 1) * br) - 1 + diag
            out.append(0 if reach < 0 else min(cols, reach // bc + 1))
        return out
    rows, cols = ceil_div(sq, br), ceil_div(skv, bc)
    if not causal:
        return [rows] * cols
    out = []
    for j in range(cols):
        first_row = max(0, j * bc - diag)
        out.append(0 if first_row >= sq else rows - first_row // br)
    return out


def splitkv_pattern(row, sm_count):
    """FlashAttention-2 >= 2.2's forward splits the keys when (batch x heads x 64-query blocks) does not
    fill 0.8 x 2 x SMs (Dao-AILab/flash-attention csrc/flash_attn/flash_api.cpp at v2.5.7 =
    85881f547fd1053a7b4a2c3faad6690cca969279, the version of the A800/H800 profile: set_params_splitkv and
    num_splits_heuristic). The split kernel's tile is 64 x (256 for d <= 64, 128 for d <= 128, else 64)
    (flash_fwd_launch_template.h run_mha_fwd_splitkv_dispatch); one CTA per (query block, split, batch,
    head). Returns (Br, Bc, pattern of visited tiles) or None when the call runs unsplit. The 2023 charts
    (v2.0, no split) and the 16k-token charts never reach the threshold. The small combine kernel is not
    modelled (it falls in the per-call cost)."""
    d = row["head_dim"]
    bn = 256 if d <= 64 else (128 if d <= 128 else 64)
    n_blocks = ceil_div(row["skv"], bn)
    m_blocks = ceil_div(row["sq"], 64)
    work = row["batch"] * row["heads"] * m_blocks
    slots = 2 * sm_count
    if work >= 0.8 * slots:
        return None
    max_splits = min(128, slots, n_blocks)
    eff = []
    for ns in range(1, max_splits + 1):
        if ns > 1 and ceil_div(n_blocks, ns) == ceil_div(n_blocks, ns - 1):
            eff.append(0.0)
            continue
        waves = work * ns / slots
        eff.append(waves / math.ceil(waves))
    best = max(eff)
    splits = 1
    for ns in range(1, max_splits + 1):
        if eff[ns - 1] > 0 and eff[ns - 1] >= 0.85 * best:
            splits = ns
            break
    if splits == 1:
        return None
    per = ceil_div(n_blocks, splits)
    full = cta_pattern(False, row["sq"], row["skv"], row["causal"], 64, bn)  # visited tiles per query block
    pat = []
    for i in range(m_blocks):
        for sp in range(splits):
            lo_b, hi_b = sp * per, min(n_blocks, (sp + 1) * per)
            pat.append(max(0, min(hi_b, full[i]) - lo_b))
    return 64, bn, pat


def makespan_coeffs(pattern, repeats, slots, c, ts, persistent=False):
    """Critical path of the schedule as (CTAs, visited tiles) on the last-finishing slot, so that
    makespan = k * (c * ctas + ts * tiles) is linear in c and ts for a fixed schedule (the Jacobian
    of the fit uses that). c, ts: the current per-CTA and per-tile costs (they fix the schedule)."""
    n = len(pattern) * repeats
    if n == 0:
        return 0.0, 0.0
    if min(pattern) == max(pattern):
        # Equal CTAs: greedy and round robin both give ceil(n / slots) CTAs on the busiest slot.
        waves = ceil_div(n, slots)
        return float(waves), float(waves * pattern[0])
    if persistent:
        cnt, nv = [0] * slots, [0] * slots
        m = len(pattern)
        for i in range(n):
            s = i % slots
            cnt[s] += 1
            nv[s] += pattern[i % m]
        best = max(range(slots), key=lambda s: (c * cnt[s] + ts * nv[s], -s))
        return float(cnt[best]), float(nv[best])
    m = len(pattern)
    exact = n <= 32 * slots
    first = 0 if exact else n - 8 * slots
    used = min(slots, n) if exact else slots
    heap = []
    if exact:
        for s in range(used):
            heap.append((0.0, s, 0.0, 0.0))
    else:
        # Fluid bulk: the first `first` CTAs keep every slot busy; the slots finish it spread over
        # about one mean CTA (models/families/kernel_time.cpp TailStart).
        full, rem = divmod(first, m)
        psum = sum(pattern)
        bulk_nv = full * psum + sum(pattern[:rem])
        base_cnt, base_nv = first / slots, bulk_nv / slots
        mean_nv = psum / m
        for s in range(used):
            f = (s + 0.5) / slots - 0.5
            cc, nn = base_cnt + f, base_nv + f * mean_nv
            heap.append((c * cc + ts * nn, s, cc, nn))
    heapq.heapify(heap)
    end = (-1.0, 0.0, 0.0)
    for i in range(first, n):
        t, s, cc, nn = heapq.heappop(heap)
        v = pattern[i % m]
        cc, nn = cc + 1, nn + v
        t = c * cc + ts * nn
        if t > end[0]:
            end = (t, cc, nn)
        heapq.heappush(heap, (t, s, cc, nn))
    return end[1], end[2]


# ----------------------------------------------------------------------------------------------
# Kernel parameter sets per (family, GPU): which efficiencies exist, which fixed costs are fitted.
# Each parameter has a physical reason (said in PARAM_DOC) and bounds.

PARAM_DOC = {
    "e": "sustained tensor-core efficiency (fraction of the dense fp16/bf16 peak) of the tile products",
    "c_cta_s": "fixed cost per CTA, SM-seconds (prologue, first Q/K/V tile loads, epilogue)",
    "L_fwd_s": "fixed cost per forward call (launch, grid start and drain)",
    "L_bwd_s": "fixed cost per backward call (its 3 launches, grid start and drain)",
}


def param_names(family, gpu, rows):
    """Parameters the rows of one (family, GPU) identify. Charts that only give fwd+bwd cannot split
    the two directions: one efficiency per head dim is shared by both (e_fb_d)."""
    names = []
    fwd_d = sorted({r["head_dim"] for r in rows if r["pass_"] == "fwd"})
    bwd_d = sorted({r["head_dim"] for r in rows if r["pass_"] in ("bwd", "fwd_bwd")})
    has_fwd_only = any(r["pass_"] == "fwd" for r in rows)
    if not has_fwd_only:
        names += [f"e_fb_{d}" for d in bwd_d]
    else:
        names += [f"e_fwd_{d}" for d in fwd_d]
        if family == "cudnn-fused":
            # three fwd+bwd rows (two head dims): one backward efficiency for all head dims.
            names += ["e_bwd_all"] if bwd_d else []
        else:
            names += [f"e_bwd_{d}" for d in bwd_d]
    names.append("c_cta_s")
    # Per-call fixed costs only where calls are short enough for them to show (> 1 % of a call):
    # the single-GPU profile (A800/H800) has 16 us calls; the charts' shortest calls are ~0.1-1 ms.
    if any(r["pass_"] == "fwd" and r["time_s"] < 1e-4 for r in rows):
        names.append("L_fwd_s")
    if any(r["pass_"] == "bwd" and r["time_s"] < 1e-4 for r in rows):
        names.append("L_bwd_s")
    return names


def bounds_of(name):
    if name.startswith("e_"):
        return 0.02, 1.0, 0.5
    if name == "c_cta_s":
        return 0.0, 1e-4, 2e-6
    return 0.0, 1e-3, 1e-5


def eff_index(names, backward, d):
    for key in ([f"e_bwd_{d}", "e_bwd_all"] if backward else [f"e_fwd_{d}"]) + [f"e_fb_{d}"]:
        if key in names:
            return names.index(key)
    raise KeyError(f"no efficiency for {'bwd' if backward else 'fwd'} d={d} in {names}")


def kernel_predict(kern, names, theta, row, want_grad=False):
    """Seconds per call of a row's pass (fwd, bwd or both) and, optionally, d time / d theta."""
    passes = {"fwd": [False], "bwd": [True], "fwd_bwd": [False, True]}[row["pass_"]]
    total, grad = 0.0, [0.0] * len(names)
    ic = names.index("c_cta_s")
    c = theta[ic]
    for backward in passes:
        br, bc, k = kern.tile(backward, row["head_dim"], row["causal"])
        ie = eff_index(names, backward, row["head_dim"])
        e = theta[ie]
        flops = 4.0 * br * bc * row["head_dim"] * (2.5 if backward else 1.0)
        ts = flops / (e * kern.peak_sm)
        pat = cta_pattern(backward, row["sq"], row["skv"], row["causal"], br, bc)
        if kern.family == "flash-attn-2" and not backward:
            split = splitkv_pattern(row, kern.hw["sm"])
            if split is not None:
                br, bc, pat = split
                k = 2  # the split-KV kernel runs 4 warps: 2 CTAs per SM by registers
                ts = 4.0 * br * bc * row["head_dim"] / (e * kern.peak_sm)
        slots = kern.hw["sm"] * k
        # FA3: full calls use the static persistent scheduler, causal ones the dynamic one (an atomic
        # tile counter: the next tile goes to the first free CTA, i.e. the greedy list schedule).
        cnt, nv = makespan_coeffs(pat, row["batch"] * row["heads"], slots, c, ts, kern.persistent and not row["causal"])
        total += k * (c * cnt + ts * nv)
        grad[ic] += k * cnt
        grad[ie] += -k * ts * nv / e
        lname = "L_bwd_s" if backward else "L_fwd_s"
        if lname in names:
            total += theta[names.index(lname)]
            grad[names.index(lname)] += 1.0
        if backward and kern.bwd_mem_bytes:
            total += kern.bwd_mem_bytes * row["sq"] * row["heads"] * row["batch"] * row["head_dim"] / kern.hw["hbm"]
    return (total, grad) if want_grad else total


def least_squares(fun, theta0, lo, hi, max_iter=60):
    """Bounded Levenberg-Marquardt on residuals fun(theta) -> (r, J) (projected steps).
    Returns theta, cost (sum r^2), J at the optimum."""
    theta = [min(max(t, l), h) for t, l, h in zip(theta0, lo, hi)]
    r, jac = fun(theta)
    cost = sum(v * v for v in r)
    lam = 1e-3
    p = len(theta)
    for _ in range(max_iter):
        jtj = [[sum(jac[i][a] * jac[i][b] for i in range(len(r))) for b in range(p)] for a in range(p)]
        jtr = [sum(jac[i][a] * r[i] for i in range(len(r))) for a in range(p)]
        improved = False
        for _ in range(12):
            m = [[jtj[a][b] * (1 + lam if a == b else 1) + (1e-30 if a == b else 0) for b in range(p)] for a in range(p)]
            try:
                step = solve(m, [-v for v in jtr])
            except ZeroDivisionError:
                lam *= 10
                continue
            cand = [min(max(t + s, l), h) for t, s, l, h in zip(theta, step, lo, hi)]
            r2, j2 = fun(cand)
            c2 = sum(v * v for v in r2)
            if c2 < cost:
                done = (cost - c2) <= 1e-9 * max(cost, 1e-30)
                theta, r, jac, cost = cand, r2, j2, c2
                lam = max(lam / 3, 1e-12)
                improved = True
                break
            lam *= 4
        if not improved or done:
            break
    return theta, cost, jac


def standard_errors(jac, cost, names, theta, lo, hi):
    """SE from the Jacobian at the optimum: sqrt(diag(s^2 (J^T J)^-1)), s^2 = RSS / (n - p), over
    the parameters not at a bound (those at a bound get None)."""
    n = len(jac)
    free = [i for i in range(len(names)) if lo[i] < theta[i] < hi[i] and not
            (abs(theta[i] - lo[i]) <= 1e-12 * max(1.0, abs(lo[i])) or abs(theta[i] - hi[i]) <= 1e-12 * max(1.0, abs(hi[i])))]
    se = [None] * len(names)
    dof = n - len(free)
    if dof <= 0 or not free:
        return se
    s2 = cost / dof
    jtj = [[sum(jac[k][a] * jac[k][b] for k in range(n)) for b in free] for a in free]
    try:
        inv = inverse(jtj)
    except ZeroDivisionError:
        return se
    for ii, i in enumerate(free):
        se[i] = math.sqrt(max(inv[ii][ii] * s2, 0.0))
    return se


def fit_kernel(kern, names, rows, theta0=None):
    """Fit theta on rows (relative error of time). Returns (theta, cost, jac)."""
    lo = [bounds_of(n)[0] for n in names]
    hi = [bounds_of(n)[1] for n in names]
    start = theta0 if theta0 is not None else [bounds_of(n)[2] for n in names]

    def fun(theta):
        res, jac = [], []
        for r in rows:
            t, g = kernel_predict(kern, names, theta, r, want_grad=True)
            res.append((t - r["time_s"]) / r["time_s"])
            jac.append([v / r["time_s"] for v in g])
        return res, jac

    theta, cost, jac = least_squares(fun, start, lo, hi)
    return theta, cost, jac, lo, hi


def logo(rows, fit, predict, group_of=lambda r: r["group"]):
    """Leave-one-group-out: for each group, fit on the other groups' rows and predict the held-out
    rows. Returns {row id: prediction} and the folds as (group, fitted ids, scored ids); a row is
    never scored by a fit that saw it (checked here, by construction)."""
    groups = sorted({group_of(r) for r in rows}, key=str)
    preds, folds = {}, []
    for g in groups:
        train = [r for r in rows if group_of(r) != g]
        test = [r for r in rows if group_of(r) == g]
        model = fit(train)
        train_ids = {r["id"] for r in train}
        for r in test:
            assert r["id"] not in train_ids
            preds[r["id"]] = predict(model, r)
        folds.append((g, sorted(train_ids), sorted(r["id"] for r in test)))
    return preds, folds


def kernel_fits(root, rows):
    out = {}
    keys = sorted({(r["family"], r["gpu"]) for r in rows})
    for family, gpu in keys:
        rs = [r for r in rows if r["family"] == family and r["gpu"] == gpu]
        kern = Kernel(root, family, gpu)
        names = param_names(family, gpu, rs)
        theta, cost, jac, lo, hi = fit_kernel(kern, names, rs)
        se = standard_errors(jac, cost, names, theta, lo, hi)
        # The held-out fits start from the full fit (same optimum basin; faster) and must reach
        # their own optimum on their own rows.
        preds, folds = logo(rs, lambda tr: fit_kernel(kern, names, tr, theta0=theta)[0],
                            lambda th, r: kernel_predict(kern, names, th, r))
        insample = {r["id"]: kernel_predict(kern, names, theta, r) for r in rs}
        by_pass = {}
        for r in rs:
            by_pass.setdefault(r["pass_"], []).append((preds[r["id"]], r["time_s"]))
        params = {}
        for i, n in enumerate(names):
            params[n] = {"value": rnd(theta[i]), "se": rnd(se[i], 3) if se[i] is not None else None,
                         "at_bound": se[i] is None, "bounds": [lo[i], hi[i]],
                         "meaning": PARAM_DOC["e" if n.startswith("e_") else n]}
        tiles = {}
        for d in sorted({r["head_dim"] for r in rs}):
            for backward in (False, True):
                if backward and not any(r["pass_"] != "fwd" for r in rs if r["head_dim"] == d):
                    continue
                for causal in sorted({r["causal"] for r in rs if r["head_dim"] == d}):
                    br, bc, k = kern.tile(backward, d, causal)
                    tiles[f"{'bwd' if backward else 'fwd'} d={d}{' causal' if causal else ''}"] = \
                        {"block_m": br, "block_n": bc, "ctas_per_sm": k}
        out[f"{family}/{gpu}"] = {
            "family": family, "gpu": gpu, "hardware_config": f"configs/hardware/{kern.hw['config']}.json",
            "sm_count": kern.hw["sm"], "peak_flops_per_s": kern.hw["peak"],
            "schedule": "persistent, 132 CTAs: static round robin (full), atomic counter = greedy (causal)" if kern.persistent else "greedy list schedule in launch order",
            "tiles": tiles, "parameters": params,
            "rows": len(rs), "groups": len(folds), "grouping": "seqlen" if rs[0]["group"].startswith("seqlen") else "(sq, skv) shape",
            "in_sample_mape_pct": {p: rnd(mape((insample[r["id"]], r["time_s"]) for r in rs if r["pass_"] == p), 4)
                                   for p in sorted(by_pass)},
            "logo_mape_pct": {p: rnd(mape(v), 4) for p, v in sorted(by_pass.items())},
            "logo_mape_pct_all": rnd(mape(v for vs in by_pass.values() for v in vs), 4),
            "fitted_rows": [{"src": r["src"], "pass": r["pass_"], "causal": r["causal"], "head_dim": r["head_dim"],
                             "heads": r["heads"], "batch": r["batch"], "sq": r["sq"], "skv": r["skv"],
                             "measured_s": rnd(r["time_s"]), "fit_s": rnd(insample[r["id"]]),
                             "held_out_s": rnd(preds[r["id"]]), "group": r["group"]} for r in rs],
        }
    return out


# ----------------------------------------------------------------------------------------------
# Links


def link_rows(root):
    """Probe rows per hop type. Time per message = size / (per-directed-pair bandwidth): the
    bandwidth column is printed (or, where the log prints none, total / pairs) and is consistent with
    time/100 in every log except qiyuan's cb_16 (inter-node A100), whose time column is 10x what its
    printed bandwidth implies (its 1 GB row would be 117 GB/s per GPU over InfiniBand with time/100:
    impossible), so the bandwidth column is used everywhere."""
    rows = read_csv(os.path.join(root, "data", "components", "links", "ultraattn_p2p_a800_h800_a100.csv"))
    out = []
    for r in rows:
        hw = "A100" if r["hardware"].startswith("A100") else r["hardware"]
        pat = r["pattern"]
        if pat.startswith("intra-node, 1 GPU pair"):
            hop = "nvlink-1pair"
        elif pat.startswith("intra-node, 8-GPU ring"):
            hop = "nvlink-8gpu-ring"
        else:
            hop = "ib-8pairs-all-gpus"
        size = int(r["size_bytes"])
        bw = float(r["gbps_per_directed_pair"]) * 1e9
        t100 = float(r["time_s_100_rounds"]) / 100
        out.append(dict(hop=f"{hw}/{hop}", gpu=hw, size=size, time_s=size / bw, time_col_s=t100,
                        src=f"data/components/links/ultraattn_p2p_a800_h800_a100.csv:{r['_line']}"))
    for i, r in enumerate(out):
        r["id"] = i
    return out


def seg_fit(pts):
    """Weighted LS of t = a + s / B on relative error over pts [(s, t)], a >= 0, 1/B >= 0.
    Returns (a, g=1/B, rss, (sums for the SE))."""
    sxx = sxy = syy = sx = sy = 0.0
    for s, t in pts:
        x1, x2 = 1.0 / t, s / t
        sxx += x1 * x1
        sxy += x1 * x2
        syy += x2 * x2
        sx += x1
        sy += x2
    det = sxx * syy - sxy * sxy
    a = g = 0.0
    if det > 0:
        a = (sx * syy - sy * sxy) / det
        g = (sy * sxx - sx * sxy) / det
    if a < 0 or det <= 0:
        a, g = 0.0, sy / syy
    if g < 0:
        a, g = sx / sxx, 0.0
    rss = sum(((a + g * s) - t) ** 2 / t ** 2 for s, t in pts)
    return a, g, rss, (sxx, sxy, syy)


MIN_REGIME = 5  # sizes per regime


def link_fit(pts, max_regimes=3):
    """Segmented fit over sizes sorted ascending; regime count by BIC (n ln(RSS/n) + p ln n,
    p = 2 per regime + 1 per breakpoint). Returns the regimes as dicts."""
    pts = sorted(pts)
    n = len(pts)
    best = None
    cache = {}

    def seg(i, j):
        if (i, j) not in cache:
            cache[(i, j)] = seg_fit(pts[i:j])
        return cache[(i, j)]

    cands = [[(0, n)]]
    if max_regimes >= 2:
        cands += [[(0, b), (b, n)] for b in range(MIN_REGIME, n - MIN_REGIME + 1)]
    if max_regimes >= 3:
        cands += [[(0, b1), (b1, b2), (b2, n)] for b1 in range(MIN_REGIME, n - 2 * MIN_REGIME + 1)
                  for b2 in range(b1 + MIN_REGIME, n - MIN_REGIME + 1)]
    for segs in cands:
        rss = sum(seg(i, j)[2] for i, j in segs)
        k = 3 * len(segs) - 1
        bic = n * math.log(max(rss, 1e-300) / n) + k * math.log(n)
        if best is None or bic < best[0] - 1e-12:
            best = (bic, segs, rss)
    _, segs, rss = best
    dof = max(1, n - (3 * len(segs) - 1))
    s2 = rss / dof
    regimes = []
    for idx, (i, j) in enumerate(segs):
        a, g, _, (sxx, sxy, syy) = seg(i, j)
        det = sxx * syy - sxy * sxy
        se_a = math.sqrt(s2 * syy / det) if det > 0 and a > 0 else None
        se_g = math.sqrt(s2 * sxx / det) if det > 0 else None
        lo = pts[i][0] if idx > 0 else 0
        hi = pts[j][0] if j < n else None  # regime covers [lo, hi)
        regimes.append(dict(from_bytes=lo, to_bytes=hi, latency_s=a, inv_bw=g, se_latency_s=se_a, se_inv_bw=se_g,
                            first_probe=pts[i][0], last_probe=pts[j - 1][0]))
    return regimes


def link_predict(regimes, size):
    for rg in regimes:
        if rg["to_bytes"] is None or size < rg["to_bytes"]:
            return rg["latency_s"] + size * rg["inv_bw"]
    raise AssertionError


def link_fits(root, rows):
    out = {}
    for hop in sorted({r["hop"] for r in rows}):
        rs = sorted([r for r in rows if r["hop"] == hop], key=lambda r: r["size"])
        pts = [(r["size"], r["time_s"]) for r in rs]
        regimes = link_fit(pts)
        one = link_fit(pts, max_regimes=1)
        scores = {}
        for label, maxr in (("selected", 3), ("one_regime", 1)):
            preds, _ = logo(rs, lambda tr: link_fit([(r["size"], r["time_s"]) for r in tr], max_regimes=maxr),
                            link_predict_row, group_of=lambda r: r["size"])
            scores[label] = (
                rnd(mape((preds[r["id"]], r["time_s"]) for r in rs if r["size"] >= 1 << 20), 4),
                rnd(mape((preds[r["id"]], r["time_s"]) for r in rs), 4), preds)
        preds = scores["selected"][2]
        reg_out = []
        for rg in regimes:
            bw = 1.0 / rg["inv_bw"] if rg["inv_bw"] > 0 else None
            se_bw = rg["se_inv_bw"] / rg["inv_bw"] ** 2 if bw and rg["se_inv_bw"] is not None else None
            reg_out.append({"from_bytes": rg["from_bytes"], "to_bytes": rg["to_bytes"],
                            "probes": [rg["first_probe"], rg["last_probe"]],
                            "latency_s": rnd(rg["latency_s"]), "se_latency_s": rnd(rg["se_latency_s"], 3),
                            "bandwidth_bytes_per_s": rnd(bw), "se_bandwidth_bytes_per_s": rnd(se_bw, 3)})
        plateau = max(r["size"] / r["time_s"] for r in rs)
        out[hop] = {
            "gpu": rs[0]["gpu"], "rows": len(rs), "regimes": reg_out,
            "one_regime": [{"latency_s": rnd(one[0]["latency_s"]), "bandwidth_bytes_per_s": rnd(1 / one[0]["inv_bw"])}],
            "largest_measured_bytes_per_s": rnd(plateau),
            "loso_mape_pct_ge_1MB": scores["selected"][0], "loso_mape_pct_all": scores["selected"][1],
            "one_regime_loso_mape_pct_ge_1MB": scores["one_regime"][0],
            "one_regime_loso_mape_pct_all": scores["one_regime"][1],
            "fitted_rows": [{"src": r["src"], "size_bytes": r["size"], "measured_s": rnd(r["time_s"]),
                             "fit_s": rnd(link_predict(regimes, r["size"])), "held_out_s": rnd(preds[r["id"]])}
                            for r in rs],
        }
    return out


def link_predict_row(regimes, r):
    return link_predict(regimes, r["size"])


# ----------------------------------------------------------------------------------------------


def run(root):
    krows, excluded = kernel_rows(root)
    lrows = link_rows(root)
    return {
        "generated_by": "python3 scripts/fit_components.py",
        "note": "Component fits for issue 25; not yet read by the C++ cost model. Kernel times: relative-error "
                "bounded least squares per (family, GPU) on that GPU's rows only; held-out = leave-one-shape-group-out "
                "(group = seqlen for the charts, (sq, skv) for the single-GPU profile). Links: leave-one-size-out. "
                "Standard errors from the Jacobian at the optimum (s^2 = RSS / (n - p)); None where a parameter sits at a bound.",
        "bars": {"kernel_logo_mape_pct": 8.0, "link_mape_pct_ge_1MB": 10.0},
        "kernels": kernel_fits(root, krows),
        "kernel_rows_excluded": excluded,
        "links": link_fits(root, lrows),
    }


def summary(res):
    lines = ["Kernel-time fits (held-out = leave-one-shape-group-out MAPE; bar 8 %)"]
    for key, k in res["kernels"].items():
        ps = ", ".join(f"{n}={v['value']:.4g}" + (f"±{v['se']:.2g}" if v["se"] is not None else "(at bound)")
                       for n, v in k["parameters"].items())
        lo = ", ".join(f"{p} {v:.1f}%" for p, v in k["logo_mape_pct"].items())
        ins = ", ".join(f"{p} {v:.1f}%" for p, v in k["in_sample_mape_pct"].items())
        lines.append(f"  {key:22s} rows {k['rows']:3d} groups {k['groups']:2d} ({k['grouping']}): held-out {lo}"
                     f" | in-sample {ins}")
        lines.append(f"      {ps}")
    lines.append("Link fits (leave-one-size-out MAPE; bar 10 % over >= 1 MB)")
    for hop, l in res["links"].items():
        regs = "; ".join(f"[{r['probes'][0]}..{r['probes'][1]}] {r['latency_s'] * 1e6:.1f} us + size / "
                         f"{(r['bandwidth_bytes_per_s'] or 0) / 1e9:.2f} GB/s" for r in l["regimes"])
        lines.append(f"  {hop:28s} >=1MB {l['loso_mape_pct_ge_1MB']:.1f}%  all {l['loso_mape_pct_all']:.1f}%"
                     f"  (one regime: {l['one_regime_loso_mape_pct_ge_1MB']:.1f}% / {l['one_regime_loso_mape_pct_all']:.1f}%)")
        lines.append(f"      {regs}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--out", default=None, help="default: ROOT/data/components/fit.json")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    res = run(a.root)
    out = a.out or os.path.join(a.root, "data", "components", "fit.json")
    with open(out, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    if not a.quiet:
        print(summary(res))
        print(f"wrote {os.path.relpath(out, a.root) if out.startswith(a.root) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
