#!/usr/bin/env python3
"""MagiAttention's Hopper kernel benchmark as a chart for `ringsim calibrate --from-kernels`.

Reads data/components/kernels/magiattn_hopper_fa3_cudnn_fa2_flex_sdpa.csv (a byte-for-byte copy of the
handed-over file; its '#' header gives the source, SandAI-org/MagiAttention @ bb1434d) and writes
data/components/kernels/magiattn_hopper_chart.csv: the full-mask rows of FlashAttention-3, cuDNN's fused
attention and FlashAttention-2, forward and backward, in the chart columns the command reads (gpu, method,
pass, causal, head_dim, n_heads, kv_heads, seqlen, batch, tflops). The varlen rows are left out: their
document lengths are not published, so no call's shape, hence no time, can be rebuilt from them.

The TFLOP/s were computed by the authors as FLOPs / time with FLOPs(fwd) = 4 x seqlen^2 x batch x
q_heads x head_dim and bwd = 2.5 x fwd: FlashAttention's own rule, which the command inverts. Which
query-head count ran is uncertain (README 64, the benchmark script at the same commit 48; 8 K/V heads
either way): --heads picks one (default the script's 48, the code that wrote the CSVs). At batch 1 and
4k-128k tokens every call launches hundreds of CTAs per SM's worth of work, so the rate, which is what is
compared, moves little between the two (docs/components.md gives both).

Standard library and scripts/ringsim_util.py only; deterministic. Usage: python3 scripts/normalize-magiattn.py [--heads 48|64]
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ringsim_util import read_csv  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SRC = "data/components/kernels/magiattn_hopper_fa3_cudnn_fa2_flex_sdpa.csv"
OUT = "data/components/kernels/magiattn_hopper_chart.csv"
METHODS = {"fa3": "FlashAttention-3", "cudnn": "cuDNN", "fa2": "FlashAttention-2"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heads", choices=("48", "64"), default="48",
                    help="query heads: the benchmark script's 48 (default) or the README's 64")
    ap.add_argument("-o", "--output", default=OUT)
    args = ap.parse_args()
    column = "q_heads_script" if args.heads == "48" else "q_heads_doc"
    out = []
    for r in read_csv(os.path.join(ROOT, SRC)):
        if r["mask"] != "full" or r["kernel"] not in METHODS or not r["tflops"]:
            continue
        out.append({"gpu": "Hopper", "method": METHODS[r["kernel"]], "pass": r["pass"], "causal": "0",
                    "head_dim": r["head_dim"], "n_heads": r[column], "kv_heads": r["kv_heads"], "seqlen": r["seqlen"],
                    "batch": r["batch"], "dtype": r["dtype"], "tflops": r["tflops"], "source": r["source_ref"] + " " + r["file"]})
    out.sort(key=lambda x: (x["method"], x["pass"], int(x["seqlen"])))
    with open(os.path.join(ROOT, args.output), "w", newline="") as f:
        f.write("# generated-by: python3 scripts/normalize-magiattn.py --heads %s (standard library, deterministic); do not edit by hand\n"
                % args.heads)
        f.write("# source: %s (byte-for-byte copy; its header names SandAI-org/MagiAttention @ bb1434d and the caveats)\n" % SRC)
        f.write("# the full-mask rows of FlashAttention-3, cuDNN (via TransformerEngine) and FlashAttention-2 on 'Hopper GPUs'\n"
                "# (H100 per the blog; SKU not stated), bf16, batch 1, head dim 128, %s query heads (%s) and 8 K/V heads;\n"
                "# tflops as the authors computed them (FlashAttention's FLOP rule, causal 0: the full mask)\n"
                % (args.heads, "the benchmark script's" if args.heads == "48" else "the README's"))
        w = csv.DictWriter(f, fieldnames=list(out[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(out)
    print("%d rows -> %s" % (len(out), args.output))


if __name__ == "__main__":
    main()
