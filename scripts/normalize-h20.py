#!/usr/bin/env python3
"""The H20 kernel benchmark as a chart for `ringsim calibrate --from-kernels`.

Reads data/components/kernels/flash_h20_fa2_fa3_cudnn.csv (a byte-for-byte copy of the handed-over file;
its '#' header gives the source, Dao-AILab/flash-attention issue #1310, and how the head counts were
derived) and writes data/components/kernels/h20_chart.csv: the forward rows of FlashAttention-2,
FlashAttention-3 and cuDNN's fused attention (PyTorch-free calls through FlashAttention's
hopper/benchmark_attn.py), in the chart columns the command reads (gpu, method, pass, causal, head_dim,
n_heads, seqlen, batch, tflops). The varlen rows are left out: they time the same shapes through the
variable-length entry points (2-4 % slower), which no chart method names; docs/components.md gives the gap.

The TFLOP/s are the benchmark's own: FLOPs = 4 x batch x seqlen^2 x heads x head_dim, halved when causal
(FlashAttention's rule, which the command inverts).

Standard library and scripts/ringsim_util.py only; deterministic. Usage: python3 scripts/normalize-h20.py
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ringsim_util import read_csv  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC = "data/components/kernels/flash_h20_fa2_fa3_cudnn.csv"
OUT = "data/components/kernels/h20_chart.csv"
METHODS = {"Fav2": "FlashAttention-2", "Fav3": "FlashAttention-3", "CuDNN": "cuDNN"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default=OUT)
    args = ap.parse_args()
    out = []
    for r in read_csv(os.path.join(ROOT, SRC)):
        if r["kernel"] not in METHODS or r["mode"] != "fwd":
            continue
        out.append({"gpu": r["hardware"], "method": METHODS[r["kernel"]], "pass": "fwd",
                    "causal": "1" if r["causal"] == "True" else "0", "head_dim": r["head_dim"],
                    "n_heads": r["q_heads_derived"], "seqlen": r["seqlen"], "batch": r["batch"], "dtype": "bf16",
                    "tflops": r["tflops"], "source": r["source_ref"]})
    out.sort(key=lambda x: (x["method"], int(x["head_dim"]), x["causal"]))
    with open(os.path.join(ROOT, args.output), "w", newline="") as f:
        f.write("# generated-by: python3 scripts/normalize-h20.py (standard library, deterministic); do not edit by hand\n")
        f.write("# source: %s (byte-for-byte copy; its header names Dao-AILab/flash-attention issue #1310 and the caveats)\n"
                % SRC)
        f.write("# forward calls of FlashAttention-2, FlashAttention-3 and cuDNN on an NVIDIA H20, batch 2, 2048 tokens,\n"
                "# head dim 64 (32 heads) and 128 (16 heads, both derived), bf16 (the script's default; not printed);\n"
                "# tflops as printed (FlashAttention's FLOP rule, halved when causal); varlen rows left out\n")
        w = csv.DictWriter(f, fieldnames=list(out[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(out)


if __name__ == "__main__":
    main()
