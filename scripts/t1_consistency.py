#!/usr/bin/env python3
"""Whether USP table T1's 4k-tokens-per-GPU rows agree with its own 1k and 16k rows, under any link.

Table T1 (data/usp_t1_a100_nvlink.csv) times the same calls on one 8 x A100 node at 8K, 32K and 128K
tokens. The component model misses its 32K ring rows by 47-69 % (docs/validation.md) while the 8K
and 128K rows land within about 25 %; a slow ring hop (a transfer staged through host memory)
would explain the ring rows alone. This check asks the table itself, with as little model as
possible, whether any transport explains the 32K rows together with the others.

What it assumes, each a property of the code or the hardware:
- A call's GPU work is serialised by its data dependencies (USP's forward runs all-to-all, kernel,
  all-to-all: yunchang/hybrid/attn_layer.py @b93c30e), so a call lasts at least its transfers plus
  its kernel; and at most those plus the host's own work, which does not grow with the tokens and
  is bounded by the whole 8K call (T8).
- The kernel is FlashAttention-2's forward at head dim 32 on the same die at 32K and 128K; its rate
  (FLOP/s) is about the same at both (the A800 profile's causal 32-head calls at those lengths, printed).
- An all-to-all (dist.all_to_all_single, yunchang/comm/all_to_all.py @b93c30e) is NCCL's grouped
  send/receive to every peer (PyTorch's all2all_single_equal_split, torch/csrc/cuda/nccl.cpp @0033e77,
  for NCCL before 2.28), the same transport as the ring's
  batch_isend_irecv; it takes no longer than its seven messages sent one after another at the
  probed per-pair rate of an 8-GPU A100 ring (data/components/links/, all GPUs sending at once).

Two branches, one for each kind of transport:
- flat (staged through host memory, or any path whose time per byte does not fall with size):
  the 128K all-to-alls take at least 4 x the 32K ones, which bounds the 32K kernel from above,
  k32 <= (T128 - 4 T32 + 4 T8) / 12, i.e. its rate from below;
- probed NVLink: the 32K kernel takes at least T32 - T8 - (all-to-alls at the probed rate), its
  rate bounded from above, while the 128K call bounds the rate from below (F128 / T128).
The ring-only rows give the second branch's bound too (a contiguous causal ring's critical path is
7.5 blocks; its hops move K and V, one message each).

    python3 scripts/t1_consistency.py
"""
import bisect
import math
import os

import ringsim_util as util
from component_kernel_model import fwd_flops

T1 = os.path.join(util.ROOT, "data", "usp_t1_a100_nvlink.csv")
LINKS = os.path.join(util.ROOT, "data", "components", "links", "ultraattn_p2p_a800_h800_a100.csv")
KERNELS = os.path.join(util.ROOT, "data", "components", "kernels", "ultraattn_fa2_a800_h800.csv")
RING_PROBE = "intra-node, 8-GPU ring"
BYTES = 2  # bf16
GPUS = 8


def probe_rate(rows, size):
    """Per-pair bytes/s of the A100 8-GPU ring probe at a message size (log-log interpolation)."""
    pts = sorted((int(r["size_bytes"]), float(r["gbps_per_directed_pair"]) * 1e9)
                 for r in rows if r["hardware"].startswith("A100") and r["pattern"].startswith(RING_PROBE))
    if not pts:
        raise ValueError("%s: no A100 8-GPU ring probe rows" % LINKS)
    sizes = [p[0] for p in pts]
    i = bisect.bisect_left(sizes, size)
    if i < len(pts) and sizes[i] == size:
        return pts[i][1]
    if i == 0 or i == len(pts):
        raise ValueError("message of %d bytes is outside the probed sizes %d-%d" % (size, sizes[0], sizes[-1]))
    (s0, b0), (s1, b1) = pts[i - 1], pts[i]
    w = math.log(size / s0) / math.log(s1 / s0)
    return math.exp(math.log(b0) + w * (math.log(b1) - math.log(b0)))


def forward_rate(r):
    """FLOP/s of one kernel-profile row's forward (causal square calls count half)."""
    sq, skv = int(r["sq"]), int(r["skv"])
    flop = fwd_flops(int(r["batch"]), sq, skv, int(r["heads_q"]), int(r["head_dim"]), r["causal"] == "true" and sq == skv)
    return flop / (float(r["fwd_us"]) * 1e-6)


def length_rates(rows, hardware="A800", heads=32):
    """The forward's FLOP/s at 32K and 128K tokens in the profile's causal square calls of `heads` heads:
    how much the rate itself moves between the two lengths."""
    got = {}
    for r in rows:
        if (r["hardware"] == hardware and r["causal"] == "true" and r["sq"] == r["skv"]
                and int(r["heads_q"]) == heads and int(r["batch"]) == 1 and int(r["sq"]) in (32768, 131072)):
            got[int(r["sq"])] = forward_rate(r)
    if len(got) != 2:
        raise ValueError("%s: no %s causal %d-head calls at 32K and 128K" % (KERNELS, hardware, heads))
    return got[32768], got[131072]


def best_fa2_forward(rows, hardware="A800"):
    """The highest FLOP/s FlashAttention-2's forward reaches on the A100 die in the kernel profile
    (any head dim; a smaller head dim does more softmax per FLOP, so it is an upper bound for 32)."""
    return max((forward_rate(r) for r in rows if r["hardware"] == hardware), default=0.0)


def ulysses_bounds(t8, t32, t128, batch, heads, head_dim, calls, rate):
    """Both branches for the Ulysses-only call (degree 8) at 32K and 128K tokens.
    calls: the per-peer message sizes of one forward's all-to-alls at 32K, in bytes (a list)."""
    f32 = fwd_flops(batch, 32768, 32768, heads // GPUS, head_dim, True)
    f128 = 16.0 * f32
    k32_flat = (t128 - 4.0 * t32 + 4.0 * t8) / 12.0
    a32_probed = sum((GPUS - 1) * m / rate(m) for m in calls)
    k32_probed = t32 - t8 - a32_probed
    return dict(flat_min_rate=f32 / k32_flat if k32_flat > 0 else math.inf,
                probed_a2a_s=a32_probed,
                probed_max_rate_32k=f32 / k32_probed if k32_probed > 0 else math.inf,
                min_rate_128k=f128 / t128)


def ring_bounds(t8, t32, t128, batch, heads_kv, heads, head_dim, rate):
    """The probed branch for a contiguous causal ring of 8 (7.5 full blocks on its critical path)."""
    block = lambda c: fwd_flops(batch, c, c, heads, head_dim, False)
    c32, c128 = 32768 // GPUS, 131072 // GPUS
    msg = batch * c32 * heads_kv * head_dim * BYTES   # K or V of one block: one message each
    hops = GPUS * 2 * msg / rate(msg)
    k_block = (t32 - t8 - hops) / 7.5
    return dict(probed_hops_s=hops,
                probed_max_rate_32k=block(c32) / k_block if k_block > 0 else math.inf,
                min_rate_128k=7.5 * block(c128) / t128)


def t1_rows():
    out = {}
    for r in util.read_csv(T1):
        if r["value"] == "OOM" or r["head_dim"] != "32" or r["heads_q"] != "32" or r["heads_kv"] != "32":
            continue
        key = (int(r["ulysses_degree"]), r["method_label"].split("/")[0], r["qkv_layout"], int(r["n_seq_total"]))
        out[key] = 1.0 / float(r["value"])
    return out


def floor_of(groups):
    """The least mean |p / m - 1| (a fraction) one value p per group can reach over every measurement
    m of the groups: piecewise linear in p, so least at one of the group's own measurements."""
    total = sum(min(sum(abs(p / m - 1) for m in v) for p in v) for v in groups)
    return total / max(1, sum(len(v) for v in groups))


def replicate_floor():
    """Per cent: T1 timed every ring-only configuration twice (qkvpacked and no_packed, the same ring
    code); one prediction serves both, so no model's time MAPE over those rows can go below this."""
    groups = {}
    for r in util.read_csv(T1):
        if r["ulysses_degree"] == "1" and r["value"] != "OOM":
            key = (r["n_seq_total"], r["heads_q"], r["heads_kv"], r["head_dim"], r["batch"], r["method_label"].split("/")[0])
            groups.setdefault(key, []).append(1.0 / float(r["value"]))
    return 100.0 * floor_of(list(groups.values()))


def report_lines():
    links = util.read_csv(LINKS)
    rate = lambda m: probe_rate(links, m)
    kernels = util.read_csv(KERNELS)
    best = best_fa2_forward(kernels)
    r32, r128 = length_rates(kernels)
    rows = t1_rows()
    lines = []
    w = lines.append
    batch, heads, d = 2, 32, 32
    peer = batch * (32768 // GPUS) * (heads // GPUS) * d * BYTES   # one tensor's slab for one peer
    w("A800 kernel profile (FlashAttention-2 forward, the A100 die): best %.0f TFLOP/s (head dim 128); "
      "causal 32-head calls %.0f TFLOP/s at 32K, %.0f at 128K" % (best / 1e12, r32 / 1e12, r128 / 1e12))
    for packing, calls in (("no_packed", [peer] * 4), ("qkvpacked", [3 * peer, peer])):
        for method in ("basic", "zigzag", "stripe"):
            t = [rows.get((8, method, packing, n)) for n in (8192, 32768, 131072)]
            if None in t:
                continue
            b = ulysses_bounds(*t, batch, heads, d, calls, rate)
            w("Ulysses 1 x 8 %s %s: measured %.2f / %.2f / %.2f ms at 8K / 32K / 128K; flat transport needs the "
              "kernel at >= %.0f TFLOP/s; probed NVLink (all-to-alls <= %.2f ms) needs <= %.0f TFLOP/s at 32K "
              "where 128K needs >= %.0f" % (packing, method, t[0] * 1e3, t[1] * 1e3, t[2] * 1e3,
                                            b["flat_min_rate"] / 1e12, b["probed_a2a_s"] * 1e3,
                                            b["probed_max_rate_32k"] / 1e12, b["min_rate_128k"] / 1e12))
    for packing in ("no_packed", "qkvpacked"):
        t = [rows.get((1, "basic", packing, n)) for n in (8192, 32768, 131072)]
        if None in t:
            continue
        b = ring_bounds(*t, batch, heads, heads, d, rate)
        w("ring 8 x 1 contiguous %s: measured %.2f / %.2f / %.2f ms; probed NVLink (hops <= %.2f ms) needs "
          "<= %.0f TFLOP/s at 32K where 128K needs >= %.0f" % (packing, t[0] * 1e3, t[1] * 1e3, t[2] * 1e3,
                                                             b["probed_hops_s"] * 1e3,
                                                             b["probed_max_rate_32k"] / 1e12,
                                                             b["min_rate_128k"] / 1e12))
    return lines


if __name__ == "__main__":
    print("\n".join(report_lines()))
