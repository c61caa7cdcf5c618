#!/usr/bin/env python3
"""Turn the two published context-parallel attention tables into one CSV of attention times.

Inputs (copied verbatim from their sources, see data/SOURCES.md):
  data/ringflash_readme_2024.csv  ring-flash-attention README: iter/s of one call, fwd and fwd+bwd
  data/usp_t1_a100_nvlink.csv     YunChang/USP table T1: iter/s, forward; its ring-only rows
                                  (ulysses degree 1: LongContextAttention, implementation usp,
                                  strategy usp:1x8). Its Ulysses-only and hybrid rows are not
                                  fitted: scripts/validation.py predicts them out of sample
Output (into data/, or the folder given as the one argument): data/cp_attention_times.csv, one row per measurement:
  source,table,hardware,impl,cp,layout,pass,heads,kv_heads,head_dim,batch,sp,n_seq,packing,iters_per_s,seconds
where layout is contiguous|zigzag|striped for the ring's variant, or single for one GPU running one flash_attn
call on the per-GPU shard (the README's "theoretic" column times 8: the README divides the
single-GPU throughput by the number of GPUs), and seconds = 1 / iters_per_s. OOM cells are left out.
and data/a800_ring_times.csv: UltraAttn's 528 A800 ring calls (data/systems/ultraattn_ring_runs_a800.csv)
in the same columns plus mask (causal|full) and nodes, pass fwd or bwd (the ring backward alone).
Standard library only; the output is deterministic.
"""
import csv
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def rows_of(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.strip() and not l.startswith("#")]
    return list(csv.DictReader(lines))


def readme(path):
    out = []
    # The README's benchmark: bf16, batch 1, 8192 tokens per GPU, 32 query and 8 K/V heads of
    # dim 128, causal, kvpacked (benchmark/benchmark_kvpacked_func.py at 556ddaa).
    hardware = {"8xA100": "a100-80gb", "8xH800": "h800"}
    for r in rows_of(path):
        hw = hardware[r["gpus"]]
        gpus = int(r["gpus"].split("x")[0])
        common = dict(source="ringflash_readme_2024", table="ringflash-readme", hardware=hw,
                      impl="ring-flash-attn", cp="ring", heads=32, kv_heads=8, head_dim=128, batch=1,
                      packing="kvpacked")
        single = float(r["theoretic"]) * gpus
        out.append(dict(common, layout="single", **{"pass": r["pass"]}, sp=1, n_seq=8192,
                        iters_per_s=single))
        for col, layout in (("ring", "contiguous"), ("zigzag", "zigzag"), ("stripe", "striped")):
            out.append(dict(common, layout=layout, **{"pass": r["pass"]}, sp=gpus, n_seq=8192 * gpus,
                            iters_per_s=float(r[col])))
    return out


def usp(path):
    out = []
    # The ring variant from method_label (basic = contiguous blocks, zigzag, stripe = striped).
    layouts = {"basic": "contiguous", "zigzag": "zigzag", "stripe": "striped", "strip": "striped"}
    for r in rows_of(path):
        if r["value"] == "OOM" or r["ulysses_degree"] != "1":
            continue
        assert r["unit"] == "iter/s" and r["pass"] == "fwd" and r["causal"] == "true"
        assert r["hardware"] == "A100-SXM4-80GB" and r["interconnect"].startswith("NVLink")
        u, ring = int(r["ulysses_degree"]), int(r["ring_degree"])
        out.append(dict(source="usp_t1_a100_nvlink", table="usp-t1", hardware="a100-80gb",
                        impl="usp", cp="usp:%dx%d" % (u, ring), layout=layouts[r["method_label"].split("/")[0]],
                        **{"pass": "fwd"},
                        heads=int(r["heads_q"]), kv_heads=int(r["heads_kv"]), head_dim=int(r["head_dim"]),
                        batch=int(r["batch"]), sp=u * ring, n_seq=int(r["n_seq_total"]),
                        packing=r["qkv_layout"], iters_per_s=float(r["value"])))
    return out


def ultraattn_a800(path):
    """The A800 ring calls of UltraAttn's logs (data/systems/ultraattn_ring_runs_a800.csv): one row per
    call, pass fwd or bwd (the ring backward function alone, fed the forward's out and lse), mask
    causal or full. Rows of the 'repeat' run stay: the replicate pairs are the measurement's own spread.
    K and V travel as two messages a step (RingCommOld), not kv-packed: packing 'separate'. The code is
    UltraAttn's copy of ring-flash-attention (implementation ultraattn-ring), not the upstream library."""
    out = []
    layouts = {"ring_contiguous": "contiguous", "zigzag": "zigzag", "striped": "striped"}
    for r in rows_of(path):
        assert r["unit"] == "s_per_call" and r["hardware"] == "A800" and r["dtype"] == "bf16"
        out.append(dict(source="ultraattn_ring_runs_a800", table="ultraattn-a800-%s" % r["run"], hardware="a800",
                        impl="ultraattn-ring", cp="ring", layout=layouts[r["method"]],
                        **{"pass": "bwd" if r["pass"] == "bwd_only" else r["pass"]},
                        mask="causal" if r["causal"] == "true" else "full",
                        heads=int(r["heads_q"]), kv_heads=int(r["heads_kv"]), head_dim=int(r["head_dim"]),
                        batch=int(r["batch"]), sp=int(r["gpus"]), n_seq=int(r["n_seq_total"]),
                        packing="separate", iters_per_s=1.0 / float(r["value"]), nodes=int(r["nodes"])))
    return out


def write(out, rows, cols, header):
    with open(out, "w", newline="") as f:
        for line in header:
            f.write("# " + line + "\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            r["seconds"] = 1.0 / r["iters_per_s"]
            w.writerow([("%.6g" % r[c]) if isinstance(r[c], float) else r[c] for c in cols])


def main():
    data = os.path.join(ROOT, "data")
    rows = readme(os.path.join(data, "ringflash_readme_2024.csv")) + usp(os.path.join(data, "usp_t1_a100_nvlink.csv"))
    cols = ["source", "table", "hardware", "impl", "cp", "layout", "pass", "heads", "kv_heads", "head_dim", "batch",
            "sp", "n_seq", "packing", "iters_per_s", "seconds"]
    out_dir = data if len(sys.argv) < 2 else sys.argv[1]
    write(os.path.join(out_dir, "cp_attention_times.csv"), rows, cols,
          ["Generated by scripts/normalize-cp-tables.py from data/ringflash_readme_2024.csv and",
           "the ring-only rows of data/usp_t1_a100_nvlink.csv; see data/SOURCES.md. seconds = 1 / iters_per_s per call."])
    a800 = ultraattn_a800(os.path.join(data, "systems", "ultraattn_ring_runs_a800.csv"))
    write(os.path.join(out_dir, "a800_ring_times.csv"), a800, cols[:7] + ["mask"] + cols[7:] + ["nodes"],
          ["Generated by scripts/normalize-cp-tables.py from data/systems/ultraattn_ring_runs_a800.csv (UltraAttn's",
           "A800 ring calls; see data/SOURCES.md): seconds per call; pass bwd = the ring backward function alone;",
           "table ultraattn-a800-main / -repeat (the 4-node causal replicate run); nodes = sp / 8; impl ultraattn-ring",
           "(UltraAttn's copy of ring-flash-attention). The path from component fits (kernels, NCCL probes) to ring",
           "calls is checked on it; only the cluster's host terms are fitted on it, held out by node count",
           "(scripts/validation_a800.py)."])


if __name__ == "__main__":
    main()
