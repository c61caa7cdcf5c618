#!/usr/bin/env python3
"""Prefill's pass-KV / pass-Q crossover against the cache-hit rate, per GQA ratio (docs/inference.md).

For each setting (a ring of H100s and a fixed context L = P + T) and each model attn:32:KV:128
(one attention layer, 32 query heads, KV heads 32, 8, 4 and 1), ringsim predicts both variants at
new-token shares T/L from 1 down to 1/1024 (`ringsim sweep --phase prefill`, one sweep per (T, P)
pair, the rows joined into one CSV per setting), and `ringsim plot --kind crossover` draws pass-Q's
time over pass-KV's with the closed form's crossover marked. The table (markdown, on stdout) gives
per setting and model the closed form's crossover hit rate and ringsim's, two ways: where pass-KV's
exposed communication equals pass-Q's (the closed form's criterion, from `ringsim predict --phase
prefill --format json` at each point) and where the predicted TTFT ratio crosses 1 (the chart's
crossing); each is the highest hit rate where it happens, interpolated in log2 of the share
between the grid points around it.

The closed form (docs/inference.md, "When each wins"): with the kernel's rate R and the hop's
bandwidth B, lambda = R b / (4 B) tokens (b = 2 bytes), k = h_kv / h, l = L / N tokens per device
and eps = 4 / (d b) (the log-sum-exp beside each returned output), and a the all-to-all's time over
that of its N - 1 blocks at B (1 inside an NVSwitch node; (N - G) / (N - 1) across full nodes of G
GPUs, where each GPU's NIC carries only the blocks for other nodes), pass-KV's exposed hop equals
pass-Q's exposed queries and all-to-all where

    hit* = 1 - 2 k / (a (1 + eps) + max(1, l / lambda)).

B is the ring hop, a the all-to-all over the returned bytes at B, and R the kernel model's rate, all read from
`ringsim predict --phase prefill --format json`: R at the full prefill (P = 0: the largest blocks),
and again at the grid point nearest ringsim's exposed-equal crossing (the smaller blocks there).

Standard library only. Usage (from the repository root, after building):

    scripts/inference-crossover.py [--ringsim build/cli/ringsim] [--out docs/images] [--work DIR]
"""
import argparse
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile

HEADS, HEAD_DIM, WIRE_BYTES = 32, 128, 2
KV_HEADS = [32, 8, 4, 1]
SETTINGS = [
    # name, title, hardware, ring devices, context L = P + T
    ("h100-32x-4nodes-1m", "32 x H100, 4 nodes (ring crosses nodes), context 1M", "h100-sxm", 32, 1 << 20),
    ("h100-8x-nvlink-128k", "8 x H100, one node (NVLink), context 128k", "h100-sxm", 8, 1 << 17),
]
# New-token shares T/L: 1, 3/4, 1/2, 3/8, ... down to 1/1024.
SHARES = sorted({2.0 ** -k for k in range(11)} | {3 * 2.0 ** -(k + 2) for k in range(9)}, reverse=True)


def model(kv):
    return f"attn:{HEADS}:{kv}:{HEAD_DIM}"


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def predict(ringsim, hardware, n, new, cached, name):
    out = run([ringsim, "predict", "--phase", "prefill", "--hardware", hardware, "--model", name,
               "--mesh", f"1x{n}", "--seq", str(new), "--cached-tokens", str(cached), "--format", "json"])
    return json.loads(out)


def kernel_rate(j):
    """R in FLOP/s: the busiest device's pairs x 4 d h over the time the kernel model gives them (pass-Q: no merges in the rounds)."""
    q = next(v for v in j["variants"] if v["variant"] == "pass-Q")
    return q["pairs_per_device_max"] * 4 * HEAD_DIM * HEADS * j["batch"] / q["attention_compute_s"]


def all_to_all_factor(j):
    """a: pass-Q's all-to-all (one layer: these models have one) over its returned bytes at the hop's bandwidth."""
    q = next(v for v in j["variants"] if v["variant"] == "pass-Q")
    return q["all_to_all_s"] / (q["returned_bytes"] / j["hop"]["bandwidth_bytes_per_s"])


def closed_form(rate, bandwidth, kv, n, context, a):
    lam = rate * WIRE_BYTES / (4 * bandwidth)
    eps = 4 / (HEAD_DIM * WIRE_BYTES)
    return 1 - 2 * (kv / HEADS) / (a * (1 + eps) + max(1.0, context / n / lam)), lam


def sweep_rows(ringsim, hardware, n, context, work, name):
    """One sweep per (T, P) pair with every model; the rows joined under one header."""
    header, rows = None, []
    for share in SHARES:
        new = round(context * share)
        path = os.path.join(work, f"{name}-{new}.csv")
        run([ringsim, "sweep", "--phase", "prefill", "--hardware", hardware,
             "--model", ",".join(model(kv) for kv in KV_HEADS), "--mesh", f"1x{n}", "--seq", str(new),
             "--cached-tokens", str(context - new), "--layout", "zigzag", "--no-intervals", "--threads", "1",
             "-o", path])
        with open(path) as f:
            lines = [line for line in f if not line.startswith("#")]
        reader = csv.reader(lines)
        h = next(reader)
        if header is None:
            header = h
        rows += list(reader)
    merged = os.path.join(work, f"{name}.csv")
    with open(merged, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return merged, header, rows


def crossover(points, level):
    """The highest hit rate where the value crosses `level`, going down from the highest hit rate
    (interpolated in log2 of the share); (None, None) if it does not."""
    points = sorted(points)  # by share ascending = hit rate descending
    for (s0, r0), (s1, r1) in zip(points, points[1:]):
        if (r0 - level) * (r1 - level) <= 0 and r0 != r1:
            f = (level - r0) / (r1 - r0)
            share = 2 ** (math.log2(s0) + f * (math.log2(s1) - math.log2(s0)))
            return 1 - share, (s0, s1)
    return None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ringsim", default="build/cli/ringsim")
    ap.add_argument("--out", default="docs/images")
    ap.add_argument("--work", default="", help="where the sweep CSVs go (default: a temporary folder)")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="inference-crossover-")
    os.makedirs(work, exist_ok=True)
    table = io.StringIO()
    table.write("| setting | KV heads (h/h_kv) | lambda = R b / 4B | a | x\\*, R at P = 0 | x\\*, R at the crossing's blocks | "
                "ringsim: exposed equal | ringsim: TTFT equal | pass-Q / pass-KV at hit 0 | at hit 99.9 % |\n")
    table.write("|---|---|---|---|---|---|---|---|---|---|\n")
    pct = lambda v: "none" if v is None else f"{100 * v:.2f} %"
    for name, title, hardware, n, context in SETTINGS:
        merged, header, rows = sweep_rows(a.ringsim, hardware, n, context, work, name)
        col = {c: i for i, c in enumerate(header)}
        marks = []
        for kv in KV_HEADS:
            m = model(kv)
            points = [(int(r[col["n_seq"]]) / context, float(r[col["pass_q_ttft_s"]]) / float(r[col["pass_kv_ttft_s"]]))
                      for r in rows if r[col["model"]] == m and r[col["status"]] == "ok"]
            if len(points) != len(SHARES):
                sys.exit(f"{name} {m}: {len(points)} rows of {len(SHARES)} came back ok")
            # The closed form's own criterion in the model's full terms: pass-KV's exposed
            # communication minus pass-Q's (its query hops and all-to-all), from predict.
            exposed, preds = [], {}
            for share in SHARES:
                new = round(context * share)
                j = preds[share] = predict(a.ringsim, hardware, n, new, context - new, m)
                e = {v["variant"]: v["exposed_communication_s"] for v in j["variants"]}
                exposed.append((share, (e["pass-KV"] - e["pass-Q"]) / j["variants"][0]["ttft_s"]))
            bandwidth = preds[1.0]["hop"]["bandwidth_bytes_per_s"]
            factor = all_to_all_factor(preds[1.0])
            form, lam = closed_form(kernel_rate(preds[1.0]), bandwidth, kv, n, context, factor)
            hit_exposed, bracket = crossover(exposed, 0.0)
            form_local = None
            if bracket:
                # The kernel's rate at the blocks of the grid point nearest that crossing.
                share = min(bracket, key=lambda x: abs(math.log2(x) - math.log2(1 - hit_exposed)))
                form_local, _ = closed_form(kernel_rate(preds[share]), bandwidth, kv, n, context, factor)
            hit_ttft, _ = crossover(points, 1.0)
            marks.append((m, form))
            ratio = dict(points)
            table.write(f"| {title} | {kv} ({HEADS // kv}) | {lam:,.0f} | {factor:.3f} | {pct(form)} | {pct(form_local)} | "
                        f"{pct(hit_exposed)} | {pct(hit_ttft)} | {ratio[1.0]:.3f} | {ratio[min(ratio)]:.3f} |\n")
        cmd = [a.ringsim, "plot", merged, "--kind", "crossover",
               "--title", f"Prefill, attn:32:KV:128 on {title}: pass-Q / pass-KV",
               "--mark-label", "closed form (docs/inference.md)",
               "--svg", os.path.join(a.out, f"inference-crossover-{name}.svg"),
               "--png", os.path.join(a.out, f"inference-crossover-{name}.png")]
        for m, form in marks:
            cmd += ["--mark", f"{m}={form:.6f}"]
        run(cmd)
        print(f"wrote {a.out}/inference-crossover-{name}.svg and .png (rows: {merged})", file=sys.stderr)
    sys.stdout.write(table.getvalue())


if __name__ == "__main__":
    main()
