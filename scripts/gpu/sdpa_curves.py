#!/usr/bin/env python3
"""Single-kernel forward and backward times of PyTorch's attention backends on this GPU.

Two kernel families that context-parallel libraries call per ring step:
  flash  - PyTorch's SDPA FLASH_ATTENTION backend, FlashAttention-2's sm80 kernels vendored in
           aten/src/ATen/native/transformers/cuda/flash_attn (what ring-flash-attention's
           flash_attn._flash_attn_forward/_backward run, at PyTorch's vendored version);
  cudnn  - the CUDNN_ATTENTION backend, cuDNN's fused SDPA (the family TransformerEngine's
           FusedAttention calls on Hopper).
Output: one row per (backend, shape) in the columns of data/components/kernels/ultraattn_*.csv
(what `ringsim calibrate --from-kernels` reads): median microseconds of fwd and bwd, timed with
CUDA events, over rotating input sets (several copies so repeated calls do not hit L2), after
warm-up. Inputs are random normal, never zeros. Shapes: the FlashAttention charts' grid (16k tokens
per batch, hidden 2048) and ring-step shapes (8192-token blocks, 32 query / 8 KV heads, and the
zigzag half blocks, non-causal where q and k lengths differ: PyTorch's is_causal aligns the mask
top-left where flash_attn aligns it bottom-right, so unequal causal calls would not be the same work).
Also writes the kernel names each backend launched (torch.profiler), to show which family ran.
"""
import argparse
import csv
import datetime
import json
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}


def chart_shapes():
    for d, h in ((64, 32), (128, 16), (256, 8)):
        for s in (512, 1024, 2048, 4096, 8192, 16384):
            for causal in (False, True):
                yield dict(group="chart", sq=s, skv=s, batch=16384 // s, hq=h, hkv=h, d=d, causal=causal)


def ring_shapes():
    # 8192 tokens per GPU (ring-flash-attention README), 4096 and 16384, with zigzag's half blocks.
    for c in (2048, 4096, 8192, 16384):
        for sq, skv, causal in ((c, c, True), (c, c, False), (c, c // 2, False), (c // 2, c, False)):
            yield dict(group="ring", sq=sq, skv=skv, batch=1, hq=32, hkv=8, d=128, causal=causal)


def ring_small_head_shapes():
    # YunChang/USP's T1 shapes (data/usp_t1_a100_nvlink.csv): batch 2, 32 heads of 32 dims, 1k-16k
    # tokens per GPU; and head dim 64 at 8 KV heads.
    for c in (1024, 4096, 16384):
        for sq, skv, causal in ((c, c, True), (c, c, False), (c, c // 2, False), (c // 2, c, False)):
            yield dict(group="ring_d32", sq=sq, skv=skv, batch=2, hq=32, hkv=32, d=32, causal=causal)
            yield dict(group="ring_d64", sq=sq, skv=skv, batch=1, hq=32, hkv=8, d=64, causal=causal)


def decode_shapes():
    # One new token per sequence over a cache (models/inference/decode.cpp): forward only.
    for b, lens in ((1, (4096, 32768, 131072, 524288, 1048576)), (8, (4096, 32768, 131072)), (32, (4096, 32768))):
        for L in lens:
            yield dict(group="decode", sq=1, skv=L, batch=b, hq=32, hkv=8, d=128, causal=False)


GROUPS = {"chart": chart_shapes, "ring": ring_shapes, "ring_small": ring_small_head_shapes, "decode": decode_shapes}


def make_inputs(shape, dtype, copies, gqa_native):
    b, sq, skv, hq, hkv, d = (shape[k] for k in ("batch", "sq", "skv", "hq", "hkv", "d"))
    kvh = hkv if gqa_native else hq
    sets = []
    for _ in range(copies):
        # flash_attn's [batch, seq, heads, dim] memory, seen as SDPA's [batch, heads, seq, dim].
        q = torch.randn(b, sq, hq, d, device="cuda", dtype=dtype).transpose(1, 2)
        k = torch.randn(b, skv, kvh, d, device="cuda", dtype=dtype).transpose(1, 2)
        v = torch.randn(b, skv, kvh, d, device="cuda", dtype=dtype).transpose(1, 2)
        for t in (q, k, v):
            t.requires_grad_(True)
        sets.append((q, k, v))
    return sets


def call(backend, q, k, v, causal, gqa):
    with sdpa_kernel([BACKENDS[backend]]):
        if gqa:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def time_fwd_bwd(backend, shape, dtype, reps, warmup, copies):
    gqa_native = True
    try:
        sets = make_inputs(shape, dtype, copies, True)
        gqa = shape["hkv"] != shape["hq"]
        outs = [call(backend, q, k, v, shape["causal"], gqa) for q, k, v in sets]
    except RuntimeError as e:  # also "no available kernel" for a shape the backend refuses
        if shape["hkv"] == shape["hq"]:
            raise
        # The backend refused grouped K/V: time it with K/V heads repeated (recorded as such).
        print(f"  {backend}: GQA refused ({str(e).splitlines()[0][:120]}); K/V heads expanded", file=sys.stderr)
        gqa_native, gqa = False, False
        sets = make_inputs(shape, dtype, copies, False)
        outs = [call(backend, q, k, v, shape["causal"], gqa) for q, k, v in sets]
    douts = [torch.randn_like(o) for o in outs]
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]

    def run(fn):
        for i in range(warmup):
            fn(i % copies)
        torch.cuda.synchronize()
        for i in range(reps):
            start[i].record()
            fn(i % copies)
            end[i].record()
        torch.cuda.synchronize()
        return statistics.median(s.elapsed_time(e) for s, e in zip(start, end)) * 1e3  # us

    def fwd(i):
        with torch.no_grad():
            q, k, v = sets[i]
            call(backend, q, k, v, shape["causal"], gqa)

    def bwd(i):
        q, k, v = sets[i]
        torch.autograd.grad(outs[i], (q, k, v), douts[i], retain_graph=True)

    f_us = run(fwd)
    b_us = run(bwd) if shape["group"] != "decode" else float("nan")
    # Repeat the forward once: the spread between two medians is the noise floor of this row.
    f2_us = run(fwd)
    return f_us, b_us, f2_us, gqa_native


def kernel_names(backend, shape, dtype):
    sets = make_inputs(shape, dtype, 1, True)
    q, k, v = sets[0]
    gqa = shape["hkv"] != shape["hq"]
    out = call(backend, q, k, v, shape["causal"], gqa)
    g = torch.randn_like(out)
    torch.cuda.synchronize()
    names = {}
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        with torch.no_grad():
            call(backend, q, k, v, shape["causal"], gqa)
        torch.cuda.synchronize()
        torch.autograd.grad(out, (q, k, v), g, retain_graph=True)
        torch.cuda.synchronize()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            names[e.name] = names.get(e.name, 0) + 1
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--kernels", required=True, help="JSON file for the kernel names per backend")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--backends", default="flash,cudnn")
    ap.add_argument("--groups", default="chart,ring", help="shape groups: " + ",".join(GROUPS))
    args = ap.parse_args()
    dtype = torch.bfloat16
    dev = torch.cuda.get_device_properties(0)
    meta = dict(date=datetime.date.today().isoformat(), device=dev.name, sms=dev.multi_processor_count,
                torch=torch.__version__, cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                dtype="bf16", reps=args.reps, warmup=args.warmup, copies=args.copies)
    kernels = {"meta": meta}
    shapes = [x for g in args.groups.split(",") for x in GROUPS[g]()]
    with open(args.output, "w", newline="") as fh:
        fh.write(f"# Measured by scripts/gpu/sdpa_curves.py on {meta['device']} ({meta['sms']} SMs), {meta['date']}; "
                 f"torch {meta['torch']}, CUDA {meta['cuda']}, cuDNN {meta['cudnn']}; bf16; median of {args.reps} "
                 f"CUDA-event-timed calls after {args.warmup} warm-ups over {args.copies} rotating input sets\n")
        fh.write("# fwd_us: the forward under no_grad; bwd_us: torch.autograd.grad of the output (the backend's "
                 "backward kernels and their pre/post-processing); fwd2_us: the forward timed again (noise floor)\n")
        w = csv.writer(fh)
        w.writerow(["source_ref", "hardware", "backend", "group", "sq", "skv", "batch", "heads_q", "heads_kv",
                    "head_dim", "causal", "gqa_native", "fwd_us", "bwd_us", "fwd2_us"])
        for backend in args.backends.split(","):
            try:
                kernels[backend] = {} if args.groups == "decode" else {
                    "chart_d128_causal": kernel_names(backend, dict(batch=2, sq=4096, skv=4096, hq=16, hkv=16, d=128, causal=True), dtype),
                    "ring_gqa_half": kernel_names(backend, dict(batch=1, sq=8192, skv=4096, hq=32, hkv=8, d=128, causal=False), dtype),
                }
            except Exception as e:  # noqa: BLE001 - a backend the build lacks is recorded, not fatal
                kernels[backend] = {"error": repr(e)[:400]}
            for shape in shapes:
                try:
                    f_us, b_us, f2_us, native = time_fwd_bwd(backend, shape, dtype, args.reps, args.warmup, args.copies)
                except Exception as e:  # noqa: BLE001
                    print(f"{backend} {shape}: {repr(e)[:200]}", file=sys.stderr)
                    torch.cuda.empty_cache()
                    continue
                w.writerow([f"ringsim scripts/gpu/sdpa_curves.py {meta['date']}", meta["device"], backend, shape["group"],
                            shape["sq"], shape["skv"], shape["batch"], shape["hq"], shape["hkv"], shape["d"],
                            "true" if shape["causal"] else "false", "true" if native else "false",
                            f"{f_us:.2f}", "" if b_us != b_us else f"{b_us:.2f}", f"{f2_us:.2f}"])
                fh.flush()
                print(f"{backend:5} {shape['group']:5} b{shape['batch']:<2} {shape['sq']:>5}x{shape['skv']:<5} "
                      f"h{shape['hq']}/{shape['hkv']} d{shape['d']} causal={int(shape['causal'])}  "
                      f"fwd {f_us:9.1f} us  bwd {b_us:9.1f} us  (again {f2_us:9.1f})", flush=True)
                torch.cuda.empty_cache()
    with open(args.kernels, "w") as fh:
        json.dump(kernels, fh, indent=1)


if __name__ == "__main__":
    main()
