#!/usr/bin/env python3
"""Host time of ring-flash-attention's step loop, one row per (layout, rank, pass), from the ring-step
emulation with its communicator (scripts/gpu/ring_steps.py --comm): the runs at TOKENS tokens per
rank, where the GPU's kernels take tens of microseconds against the host's hundreds, so a pass's
wall time is the host's. Writes data/components/host/h100_ring_flash_attn_host.csv.

usage: python3 scripts/gpu/host_rows.py [--tokens 128] [-o PATH]
"""
import argparse
import csv
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = "data/measurements/h100-2026-11-28/h100_ring_steps_comm.json"
LAYOUTS = {"ring": "contiguous", "zigzag": "zigzag", "stripe": "striped"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("-o", "--output", default=os.path.join(ROOT, "data", "components", "host",
                                                           "h100_ring_flash_attn_host.csv"))
    a = ap.parse_args()
    d = json.load(open(os.path.join(ROOT, SOURCE)))
    m = d["meta"]
    rows = [r for r in d["runs"] if r.get("comm") and r["tokens"] == a.tokens and "wall_ms" in r]
    if not rows:
        sys.exit("no runs with communication at %d tokens in %s" % (a.tokens, SOURCE))
    with open(a.output, "w", newline="") as f:
        f.write("# Host time of ring-flash-attention's step loop per pass (wall ms, median of %d), from %s\n" % (m["reps"], SOURCE))
        f.write("# by scripts/gpu/host_rows.py. Machine: the %s VM of that campaign (its Xeon host), PyTorch %s, CUDA %s;\n"
                % (m["device"], m["torch"], m["cuda"]))
        f.write("# op sequence of %s, %d ranks, %d tokens per rank, %d/%d heads of %d, %s, causal;\n"
                % (m["source"], m["n"], a.tokens, m["heads_q"], m["heads_kv"], m["head_dim"], m["dtype"]))
        f.write("# RingComm's batch_isend_irecv and wait on a one-rank NCCL group (self send/recv). At this size the\n"
                "# kernels take tens of microseconds, so the wall time is the host's (Python loop, communicator, launches).\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "impl", "layout", "devices", "rank", "tokens", "pass", "wall_ms"])
        for r in sorted(rows, key=lambda r: (r["pass_"], r["layout"], r["rank"])):
            w.writerow(["H100 VM host", "ring-flash-attn", LAYOUTS[r["layout"]], m["n"], r["rank"], a.tokens, r["pass_"],
                        "%.4f" % r["wall_ms"]])
    print("wrote %d rows to %s" % (len(rows), os.path.relpath(a.output, ROOT)))


if __name__ == "__main__":
    main()
