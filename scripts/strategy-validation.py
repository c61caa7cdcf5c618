#!/usr/bin/env python3
"""Out-of-sample check of ringsim's context-parallel strategies against published throughput.

Reads data/usp_t1_a100_nvlink.csv (YunChang/USP table T1: Ulysses-only, hybrid and ring-only rows)
and data/ringflash_readme_varlen.csv (ring-flash-attention's varlen table: ring, zigzag, llama3), asks
`ringsim predict` for the attention time of each configuration, and prints the markdown tables of
docs/validation.md's strategy section. Nothing is fitted: the profiles are whatever configs/ holds.

usage: scripts/strategy-validation.py [path/to/ringsim]   (default build/cli/ringsim)
"""
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RINGSIM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "cli", "ringsim")


def rows(path):
    with open(os.path.join(ROOT, path)) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def attention_s(hardware, model, n_seq, batch, cp, impl, layout, docs=""):
    cmd = [RINGSIM, "predict", "--hardware", hardware, "--model", model, "--mesh", "1x8", "--seq", str(n_seq),
           "--batch", str(batch), "--cp", cp, "--impl", impl, "--layout", layout, "--format", "json"]
    if docs:
        cmd += ["--docs", docs]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    r = out["results"][0]
    return r["attention_fwd_s"], r["attention_bwd_s"]


def usp_t1():
    ring_layout = {"basic": "contiguous", "zigzag": "zigzag", "stripe": "striped"}
    data = [r for r in rows("data/usp_t1_a100_nvlink.csv") if r["qkv_layout"] == "no_packed" and r["value"] != "OOM"]
    groups = {}
    for r in data:
        key = (int(r["n_seq_total"]), int(r["heads_q"]), int(r["heads_kv"]), int(r["head_dim"]), r["method_label"].split("/")[0])
        groups.setdefault(key, {})[(int(r["ring_degree"]), int(r["ulysses_degree"]))] = float(r["value"])
    print("| n_seq | heads q/kv, dim | ring method | split (ring x Ulysses) | measured it/s | predicted it/s "
          "| measured / ring-only | predicted / ring-only | error |")
    print("|---|---|---|---|---|---|---|---|---|")
    errors = {"ulysses": [], "hybrid": []}
    by_method = {}
    ranking_hits, ranking_total = 0, 0
    for (n, hq, hkv, d, method), splits in sorted(groups.items()):
        if (8, 1) not in splits:
            continue
        model = f"attn:{hq}:{hkv}:{d}"
        pred = {}
        for (r, u) in splits:
            fwd, _ = attention_s("a100-80gb", model, n, 2, f"usp:{u}x{r}", "usp", ring_layout[method])
            pred[(r, u)] = 1.0 / fwd
        base_m, base_p = splits[(8, 1)], pred[(8, 1)]
        for (r, u) in sorted(splits, key=lambda x: -x[0]):
            if (r, u) == (8, 1):
                continue
            mr, pr = splits[(r, u)] / base_m, pred[(r, u)] / base_p
            err = (pr - mr) / mr
            errors["ulysses" if r == 1 else "hybrid"].append(abs(err))
            by_method.setdefault((method, n), []).append(abs(err))
            print(f"| {n} | {hq}/{hkv}, {d} | {method} | {r} x {u} | {splits[(r, u)]:.2f} | {pred[(r, u)]:.2f} "
                  f"| {mr:.2f} | {pr:.2f} | {100 * err:+.0f}% |")
        best_m = max(splits, key=lambda k: splits[k])
        best_p = max(pred, key=lambda k: pred[k])
        ranking_total += 1
        ranking_hits += best_m == best_p
    print()
    for kind, e in errors.items():
        if e:
            print(f"- {kind} rows: mean absolute error of the ratio to ring-only {100 * sum(e) / len(e):.0f}% over {len(e)} rows, "
                  f"max {100 * max(e):.0f}%")
    for (method, n), e in sorted(by_method.items()):
        print(f"- ring method {method}, n_seq {n}: mean absolute error {100 * sum(e) / len(e):.0f}% over {len(e)} rows")
    print(f"- fastest split predicted correctly in {ranking_hits} of {ranking_total} groups")


def varlen():
    packings = [[65536], [2048, 59136, 4352], [32768, 32768], [24832, 25600, 12800, 1280, 1024]]
    runs = {"ring": ("ring", "ringsim-tiles", "contiguous"), "zigzag": ("ring", "ringsim-tiles", "doc-zigzag"),
            "llama3": ("allgather", "rfa-llama3", "contiguous")}
    pred = {}
    tmp = os.path.join(ROOT, "build", "varlen_docs")
    os.makedirs(tmp, exist_ok=True)
    for name, (cp, impl, layout) in runs.items():
        fwd_sum, all_sum = 0.0, 0.0
        for i, lengths in enumerate(packings):
            path = os.path.join(tmp, f"packing{i}.csv")
            with open(path, "w") as f:
                f.write("\n".join(str(x) for x in lengths) + "\n")
            fwd, bwd = attention_s("a100-80gb", "attn:32:8:128", 65536, 1, cp, impl, layout, path)
            fwd_sum += fwd
            all_sum += fwd + bwd
        # The benchmark cycles the four packings: iterations per second over the cycle.
        pred[name] = (4 / fwd_sum, 4 / all_sum)
    print("| 8 x A100, pass | measured llama3 / zigzag | predicted | measured llama3 / ring | predicted |")
    print("|---|---|---|---|---|")
    for r in rows("data/ringflash_readme_varlen.csv"):
        if r["gpus"] != "8xA100":
            continue
        i = 0 if r["pass"] == "fwd" else 1
        m_z = float(r["llama3"]) / float(r["zigzag"])
        m_r = float(r["llama3"]) / float(r["ring"])
        p_z = pred["llama3"][i] / pred["zigzag"][i]
        p_r = pred["llama3"][i] / pred["ring"][i]
        print(f"| {r['pass']} | {m_z:.2f} | {p_z:.2f} ({100 * (p_z - m_z) / m_z:+.0f}%) | {m_r:.2f} | {p_r:.2f} "
              f"({100 * (p_r - m_r) / m_r:+.0f}%) |")


if __name__ == "__main__":
    print("### USP / YunChang table T1 (8 x A100 NVLink, forward, no_packed)\n")
    usp_t1()
    print("\n### ring-flash-attention varlen (packed documents, 8 x A100)\n")
    varlen()
