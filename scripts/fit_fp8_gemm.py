#!/usr/bin/env python3
"""FP8 GEMMs against BF16 GEMMs on Hopper: the relative efficiency configs/hardware calls
fp8_gemm_relative_efficiency (docs/components.md, "FP8 GEMMs").

r = (FP8 TFLOPS / FP8 peak) / (BF16 TFLOPS / BF16 peak) = (BF16 time / FP8 time) / 2 on Hopper
(its dense FP8 peak is twice its BF16 peak, whatever the part's clocks). Fitted on
TransformerEngine's own GEMM-profiling guide (per-tensor FP8 through cuBLASLt beside cuBLAS BF16,
the GEMMs alone: its "pre-quantized" rows), one r over its three phases (Fprop, Dgrad, Wgrad: the
ratio of the summed times), each phase held out in turn; the other sources are printed as
out-of-sample checks (other libraries, scalings and GPUs).

Standard library only. Usage: scripts/fit_fp8_gemm.py [data/components/gemm/hopper_gemm_bf16_fp8.csv]
"""
import csv
import sys

PATH = sys.argv[1] if len(sys.argv) > 1 else "data/components/gemm/hopper_gemm_bf16_fp8.csv"


def rows():
    with open(PATH, newline="") as f:
        return list(csv.DictReader(f))


def te_phases(data):
    """{phase: (bf16 us, fp8 us)} of TE's pre-quantized table (FP8Current: tex.generic_gemm)."""
    out = {}
    for r in data:
        if "gemm_profiling.rst" not in r["source_ref"] or not r["note"].startswith("pre-quantized mode"):
            continue
        phase = r["note"].split("per-layer ")[1].split(" GEMM time")[0]
        if r["dtype"] == "bf16":
            out.setdefault(phase, [None, None])[0] = float(r["time_us"])
        elif r["dtype"] == "fp8_e4m3" and "generic_gemm" in r["library"]:
            out.setdefault(phase, [None, None])[1] = float(r["time_us"])
    return {p: tuple(v) for p, v in out.items() if None not in v}


def main():
    data = rows()
    phases = te_phases(data)
    parts = {p: v for p, v in phases.items() if p in ("Fprop", "Dgrad", "Wgrad")}
    if len(parts) != 3:
        sys.exit(f"{PATH}: TransformerEngine's pre-quantized Fprop, Dgrad and Wgrad rows not found")
    fit = sum(b for b, _ in parts.values()) / sum(f for _, f in parts.values()) / 2
    print(f"TransformerEngine, H200 NVL, per-tensor FP8 (cuBLASLt) vs BF16 (cuBLAS), 12 GEMMs of a 5B layer:")
    print(f"  r = {fit:.4f} (fitted: summed BF16 time / summed FP8 time / 2)")
    errs = []
    for p, (b, f) in sorted(parts.items()):
        others = [v for q, v in parts.items() if q != p]
        r_other = sum(x for x, _ in others) / sum(y for _, y in others) / 2
        predicted = b / (2 * r_other)  # FP8 time of the held-out phase from the others' r
        err = predicted / f - 1
        errs.append(abs(err))
        print(f"  held out {p}: r of the others {r_other:.4f}, FP8 time {predicted:.0f} us predicted, {f:.0f} us measured ({100 * err:+.2f} %)")
    print(f"  leave-one-phase-out MAPE {100 * sum(errs) / len(errs):.2f} %")
    if "Per-layer total" in phases:
        b, f = phases["Per-layer total"]
        print(f"  the published layer total: r = {b / f / 2:.4f}")
    print("out of sample (not fitted: other libraries, scalings or GPUs; r = speedup / 2):")
    paired = {}
    for r in data:
        if r["dtype"] not in ("bf16", "fp16", "fp8_e4m3") or not r["m"] or not r["tflops"]:
            continue
        if "FBGEMM" not in r["library_version"] and "tilelang" not in r["source_ref"]:
            continue
        key = (r["source_ref"].split("#")[0].split("@")[0], r["m"], r["n"], r["k"])
        paired.setdefault(key, {}).setdefault(r["dtype"] if r["dtype"] != "fp16" else "bf16", []).append(
            (float(r["tflops"]), r["scaling"], r["note"]))
    for key, v in sorted(paired.items()):
        if "bf16" not in v or "fp8_e4m3" not in v:
            continue
        base = max(t for t, _, _ in v["bf16"])
        for t, scaling, note in v["fp8_e4m3"]:
            # FBGEMM's rows with the scaling timed in, and its blockwise kernel, are not a GEMM alone.
            if scaling == "blockwise" or "scale + " in note:
                continue
            run = " (first FP8 run)" if "first version" in note else ""
            print(f"  {key[0].split('/')[-1][:24]} {key[1]}x{key[2]}x{key[3]} {scaling.split(' ')[0]}{run}: r = {t / base / 2:.3f}")


if __name__ == "__main__":
    main()
