#!/usr/bin/env python3
"""The GPU work of ring-flash-attention's ring steps, emulated on one GPU: what a rank runs besides
its FlashAttention calls, measured.

ring-flash-attention (zhuzilin/ring-flash-attention @ 8996282) runs per ring step one or two
FlashAttention-2 calls (flash_attn._flash_attn_forward / _backward) and merges each call's output
into an fp32 running output with its log-sum-exp (ring_flash_attn/utils.py update_out_and_lse,
whose arithmetic is a torch.jit.script function); the backward accumulates dq, dk, dv in fp32
(zigzag_ring_flash_attn.py: dq_buffer.to(float32) at step 0, `dq += dq_buffer` and sliced adds
after). This script reproduces that op sequence for one rank of an N-rank ring (ring, zigzag,
stripe), with the flash kernels reached through PyTorch's vendored FlashAttention-2
(aten._scaled_dot_product_flash_attention and its backward) and the merge written the same way
(the same tensor expressions, scripted the same way), and no communication: every step gets its
own K/V buffers, as received blocks would be. It reports per step: the flash kernels' GPU time,
the rest of the step's GPU time (merge, casts, accumulations), the number of kernels each
launched (does TorchScript fuse the merge?), and, at a tiny shape, the host time per step (the
Python loop and launches, a GPU that waits on the host).
"""
import argparse
import datetime
import json
import statistics
import sys
from typing import Tuple

import torch
import torch.nn.functional as F


@torch.jit.script
def _merge(out: torch.Tensor, lse: torch.Tensor, block_out: torch.Tensor,
           block_lse: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    # The expressions of ring_flash_attn/utils.py _update_out_and_lse (sigmoid form).
    block_out = block_out.to(torch.float32)
    block_lse = block_lse.transpose(-2, -1).unsqueeze(dim=-1)
    out = out - F.sigmoid(block_lse - lse) * (out - block_out)
    lse = lse - F.logsigmoid(lse - block_lse)
    return out, lse


def merge(out, lse, block_out, block_lse, slice_=None):
    # update_out_and_lse: first call casts, later ones merge, sliced ones copy back.
    if out is None:
        return block_out.to(torch.float32), block_lse.transpose(-2, -1).unsqueeze(dim=-1)
    if slice_ is not None:
        so, sl = _merge(out[slice_], lse[slice_], block_out, block_lse)
        out[slice_], lse[slice_] = so, sl
        return out, lse
    return _merge(out, lse, block_out, block_lse)


def flash_fwd(q, k, v, causal):
    # q, k, v in flash_attn's [b, s, h, d]; returns block_out [b, s, h, d] and lse [b, h, s].
    r = torch.ops.aten._scaled_dot_product_flash_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), 0.0, causal, False)
    return r[0].transpose(1, 2), r[1], r


def flash_bwd(dout, q, k, v, causal, saved):
    out, lse, cq, ck, mq, mk, seed, offset = saved[0], saved[1], saved[2], saved[3], saved[4], saved[5], saved[6], saved[7]
    g = torch.ops.aten._scaled_dot_product_flash_attention_backward(
        dout.transpose(1, 2), q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), out, lse, cq, ck, mq, mk,
        0.0, causal, seed, offset)
    return g[0].transpose(1, 2), g[1].transpose(1, 2), g[2].transpose(1, 2)


def calls(layout, rank, step, c):
    """The flash calls of one step: (q slice, k slice, causal, out slice) per ring-flash-attention."""
    whole = slice(None)
    if layout == "ring":  # ring_flash_attn.py: step 0 causal, earlier ranks' blocks full, later skipped
        if step == 0:
            return [(whole, whole, True, None)]
        return [(whole, whole, False, None)] if step <= rank else []
    if layout == "zigzag":  # zigzag_ring_flash_attn.py
        h = c // 2
        if step == 0:
            return [(whole, whole, True, None)]
        if step <= rank:
            return [(whole, slice(0, h), False, None)]
        return [(slice(h, None), whole, False, slice(h, None))]
    if layout == "stripe":  # stripe_flash_attn.py
        if step <= rank:
            return [(whole, whole, True, None)]
        return [(slice(1, None), slice(0, c - 1), True, slice(1, None))]
    raise ValueError(layout)


class SelfComm:
    """RingComm's host calls (ring_flash_attn/utils.py): send_recv_kv posts isend/irecv of two
    tensors as one batch_isend_irecv, wait() waits on every request. On a one-rank NCCL group the
    peer is the rank itself (NCCL copies locally), so the host cost of the calls is real and the
    GPU moves each block once through HBM instead of over a link."""

    def __init__(self):
        import torch.distributed as dist
        self.dist = dist
        self.reqs = None

    def send_recv_kv(self, k, v):
        d = self.dist
        nk, nv = torch.empty_like(k), torch.empty_like(v)
        ops = [d.P2POp(d.isend, k, 0), d.P2POp(d.irecv, nk, 0), d.P2POp(d.isend, v, 0), d.P2POp(d.irecv, nv, 0)]
        self.reqs = d.batch_isend_irecv(ops)
        return nk, nv

    def wait(self):
        for r in self.reqs or []:
            r.wait()
        self.reqs = None


def init_self_comm():
    import os
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))


class Rank:
    def __init__(self, layout, n, rank, c, hq, hkv, d, dtype, comm=None, dkv_comm=None):
        self.layout, self.n, self.rank, self.c = layout, n, rank, c
        self.comm, self.dkv_comm = comm, dkv_comm
        mk = lambda s, h: torch.randn(1, s, h, d, device="cuda", dtype=dtype)  # noqa: E731
        self.q = mk(c, hq)
        self.dout = mk(c, hq)
        self.kv = [(mk(c, hkv), mk(c, hkv)) for _ in range(n)]  # a fresh K/V block per step
        self.saved = {}
        for step in range(n):
            for qs, ks, causal, _ in calls(layout, rank, step, c):
                k, v = self.kv[step]
                key = (qs.start, ks.start, ks.stop, causal)
                if key not in self.saved:  # forward outputs the backward of this shape reads
                    self.saved[key] = flash_fwd(self.q[:, qs], k[:, ks], v[:, ks], causal)[2]

    def forward(self, marks):
        out = lse = None
        for step in range(self.n):
            k, v = self.kv[step]
            marks.append(("step", step))
            if self.comm and step + 1 != self.n:
                self.comm.send_recv_kv(k, v)
            for qs, ks, causal, sl in calls(self.layout, self.rank, step, self.c):
                marks.append(("flash", step))
                bo, bl, _ = flash_fwd(self.q[:, qs], k[:, ks], v[:, ks], causal)
                marks.append(("merge", step))
                out, lse = merge(out, lse, bo, bl, (slice(None), sl) if sl is not None else None)
            if self.comm and step + 1 != self.n:
                marks.append(("wait", step))
                self.comm.wait()
        marks.append(("end", self.n))
        return out.to(self.q.dtype)

    def backward(self, marks):
        dq = dk = dv = None
        dkb = dvb = None  # the fp32 dK/dV of the block held (received from the previous rank in the library)
        for step in range(self.n):
            k, v = self.kv[step]
            marks.append(("step", step))
            if self.comm and step + 1 != self.n:
                self.comm.send_recv_kv(k, v)
            for qs, ks, causal, sl in calls(self.layout, self.rank, step, self.c):
                marks.append(("flash", step))
                saved = self.saved[(qs.start, ks.start, ks.stop, causal)]
                gq, gk, gv = flash_bwd(self.dout[:, qs], self.q[:, qs], k[:, ks], v[:, ks], causal, saved)
                marks.append(("merge", step))
                if dq is None:  # step 0: .to(float32) of the buffers
                    dq, dk, dv = gq.to(torch.float32), gk.to(torch.float32), gv.to(torch.float32)
                    continue
                if sl is None:
                    dq += gq
                else:
                    dq[:, sl] += gq
                if dkb is None:
                    dkb = torch.zeros(k.shape, device="cuda", dtype=torch.float32)
                    dvb = torch.zeros(v.shape, device="cuda", dtype=torch.float32)
                dkb[:, ks] += gk
                dvb[:, ks] += gv
            if self.comm:  # zigzag_ring_flash_attn_backward: d_kv_comm.wait(), kv_comm.wait(), d_kv send
                marks.append(("wait", step))
                if step > 0:
                    self.dkv_comm.wait()
                if step + 1 != self.n:
                    self.comm.wait()
                self.dkv_comm.send_recv_kv(*((dkb, dvb) if dkb is not None else (dk, dv)))
        if self.comm and self.dkv_comm.reqs is not None:
            self.dkv_comm.wait()
        marks.append(("end", self.n))
        return dq, dk, dv


def timed(fn, reps):
    """Runs fn(marks) reps times; returns per-repeat lists of (label, step, ms since start) from CUDA
    events recorded at each mark, without synchronising inside a repeat."""
    results = []
    for _ in range(reps):
        events = []

        class Recorder(list):
            def append(self, m):
                e = torch.cuda.Event(enable_timing=True)
                e.record()
                events.append(e)
                super().append(m)

        rec = Recorder()
        fn(rec)
        torch.cuda.synchronize()
        t0 = events[0]
        results.append([(m[0], m[1], t0.elapsed_time(e)) for m, e in zip(rec, events)])
    return results


def wall_ms(fn, reps):
    """Host wall time of one pass (synchronised at its end, no events): the GPU's time where the GPU
    bounds the pass, the host's (Python loop and launches) where the kernels are tiny."""
    import time
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn([])
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t) * 1e3)
    return statistics.median(ts)


def split_times(run):
    """Per step: flash ms, other ms (merge, casts, adds, gaps) from one repeat's marks."""
    steps = {}
    for i, (label, step, t) in enumerate(run[:-1]):
        nxt = run[i + 1][2]
        s = steps.setdefault(step, {"flash_ms": 0.0, "other_ms": 0.0})
        s["flash_ms" if label == "flash" else "other_ms"] += nxt - t
    return steps


def kernel_list(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn([])
        torch.cuda.synchronize()
    ks = []
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            ks.append((e.name, e.time_range.elapsed_us()))
    return ks


def measure(layout, n, rank, c, hq, hkv, d, dtype, reps, comm=False):
    r = Rank(layout, n, rank, c, hq, hkv, d, dtype, *((SelfComm(), SelfComm()) if comm else ()))
    rows = []
    for passname, fn in (("fwd", r.forward), ("bwd", r.backward)):
        try:
            for _ in range(3):  # warm-up: TorchScript profiles twice before it optimises
                fn([])
            torch.cuda.synchronize()
            runs = timed(fn, reps)
            per = [split_times(x) for x in runs]
            steps = [{k: statistics.median(p[s][k] for p in per if s in p) for k in ("flash_ms", "other_ms")}
                     for s in range(n)]
            total = statistics.median(x[-1][2] for x in runs)
            wall = wall_ms(fn, reps)
            try:
                ks = kernel_list(fn)
            except Exception as e:  # noqa: BLE001 - the kernel list is a detail; keep the timings
                print(f"  kernel list: {repr(e)[:200]}", file=sys.stderr)
                ks = []
            names = {}
            for name, us in ks:
                a = names.setdefault(name, [0, 0.0])
                a[0] += 1
                a[1] += us
            rows.append(dict(layout=layout, rank=rank, tokens=c, heads_q=hq, heads_kv=hkv, head_dim=d, pass_=passname, comm=comm,
                             total_ms=total, wall_ms=wall, steps=steps, kernel_count=len(ks),
                             kernels={k: {"count": v[0], "us": round(v[1], 2)} for k, v in names.items()}))
            other = sum(s["other_ms"] for s in steps)
            flash = sum(s["flash_ms"] for s in steps)
            print(f"{layout:6} rank {rank} c={c:5} h{hq}/{hkv} {passname}: events {total:8.3f} ms  wall {wall:8.3f}  "
                  f"flash {flash:8.3f}  other {other:7.3f}  kernels {len(ks)}", flush=True)
        except Exception as e:  # noqa: BLE001 - a failed backward keeps the forward
            if passname == "fwd":
                raise
            print(f"  {layout} rank {rank} c={c} bwd: {repr(e)[:300]}", file=sys.stderr, flush=True)
            rows.append(dict(layout=layout, rank=rank, tokens=c, pass_="bwd", error=repr(e)[:300]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--trace", help="Kineto trace (json) of one zigzag forward+backward of the last rank")
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--tokens", default="8192,4096")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--comm", action="store_true", help="also issue RingComm's calls on a one-rank NCCL group")
    ap.add_argument("--layouts", default="ring,zigzag,stripe")
    ap.add_argument("--ranks", default="", help="ranks to emulate (default 0, n/2, n-1); one per process reproduces "
                    "a rank's own TorchScript history")
    ap.add_argument("--no-trace-tokens", action="store_true", help="skip the 128-token (host-bound) runs")
    args = ap.parse_args()
    dtype = torch.bfloat16
    dev = torch.cuda.get_device_properties(0)
    res = {"meta": dict(date=datetime.date.today().isoformat(), device=dev.name, sms=dev.multi_processor_count,
                        torch=torch.__version__, cuda=torch.version.cuda, n=args.n, reps=args.reps,
                        heads_q=32, heads_kv=8, head_dim=128, dtype="bf16",
                        source="zhuzilin/ring-flash-attention@8996282 ring_flash_attn/{utils,ring_flash_attn,"
                               "zigzag_ring_flash_attn,stripe_flash_attn}.py (op sequence)"),
           "runs": []}
    torch.manual_seed(0)
    if args.comm:
        init_self_comm()
    ranks = [int(x) for x in args.ranks.split(",")] if args.ranks else [0, args.n // 2, args.n - 1]
    for c in [int(x) for x in args.tokens.split(",")] + ([] if args.no_trace_tokens else [128]):
        hq, hkv, d = (32, 8, 128) if c > 128 else (1, 1, 64)
        for layout in args.layouts.split(","):
            for rank in ranks:
                try:
                    res["runs"] += measure(layout, args.n, rank, c, hq, hkv, d, dtype, args.reps, args.comm)
                except Exception as e:  # noqa: BLE001
                    print(f"{layout} rank {rank} c={c}: {repr(e)[:300]}", file=sys.stderr, flush=True)
                    res["runs"].append(dict(layout=layout, rank=rank, tokens=c, error=repr(e)[:300]))
                    if hkv != hq:  # grouped K/V refused: the same with K/V heads repeated
                        try:
                            rows = measure(layout, args.n, rank, c, hq, hq, d, dtype, args.reps, args.comm)
                            for x in rows:
                                x["gqa_expanded_from"] = hkv
                            res["runs"] += rows
                        except Exception as e2:  # noqa: BLE001
                            print(f"  expanded: {repr(e2)[:300]}", file=sys.stderr, flush=True)
                torch.cuda.empty_cache()
                with open(args.output, "w") as fh:  # rewritten after each rank: a killed run keeps its rows
                    json.dump(res, fh, indent=1)
    if args.trace:
        trace(args.trace, args.n, dtype)


def trace(path, n, dtype):
    try:
        r = Rank("zigzag", n, n - 1, 8192, 32, 8, 128, dtype)
        r.forward([])
        r.backward([])
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                torch.profiler.ProfilerActivity.CUDA]) as prof:
            with torch.profiler.record_function("ProfilerStep#1"):
                r.forward([])
                r.backward([])
            torch.cuda.synchronize()
        prof.export_chrome_trace(path)
    except Exception as e:  # noqa: BLE001
        print(f"trace: {repr(e)[:300]}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
