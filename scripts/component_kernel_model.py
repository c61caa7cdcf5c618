"""The kernel-time model of the component fits (scripts/fit_components.py): the published kernel rows
turned into seconds, each GPU's figures and tiles from configs/, and the CTA schedule of a call (tiles
visited, waves, the causal tail, split-KV) as makespan coefficients of the fitted parameters."""
import csv
import heapq
import json
import math
import os


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
