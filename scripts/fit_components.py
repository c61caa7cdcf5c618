#!/usr/bin/env python3
"""Component fits for issue 25: a kernel-time model per (kernel family, GPU) and a link model per hop
type, fitted on the published component measurements copied into data/components/ (see its
README.md) and scored out of sample (leave-one-shape-group-out for kernels, leave-one-size-out for
links). Writes data/components/fit.json and prints a readable summary. Standard library only
(numpy/scipy are not installed on the project's machines); deterministic (no clocks, no randomness,
sorted keys).

usage: python3 scripts/fit_components.py [--root DIR] [--out PATH] [--quiet]

These fits are an independent cross-check: the C++ cost model is fitted by `ringsim calibrate --from-kernels`
and `--from-probes` through models/families/kernel_time.cpp and models/hardware/point_to_point.cpp (the same
kernels: configs/kernels/flash-attn-2.json, flash-attn-3.json, cudnn-fused.json); docs/components.md compares
the two.

Kernel model (the physical form of models/families/kernel_time.cpp, simplified where the data cannot tell
the extra terms apart):
  * A call of (batch, heads, q_len, k_len, head_dim) launches one CTA per (query block, batch, head)
    forward and one per (key block, batch, head) backward; the block sizes Br x Bc come from the
    kernel's launch code (configs/kernels/flash-attn-2.json for FlashAttention-2; FA3_TILES below for
    FlashAttention-3).
  * A CTA visits the key (forward) or query (backward) tiles its causal bounds allow; a tile that
    straddles the diagonal costs a whole tile: the kernel computes the full Br x Bc products and
    masks element-wise afterwards (flash_fwd_kernel.h, n_masking_steps). The charts' FLOP convention
    (causal counts half the square) is only used to turn TFLOP/s into seconds, never as the work.
  * Tile time = 4 * Br * Bc * d (x 2.5 backward: five products against two) / (e * peak per SM);
    e is the sustained tensor-core efficiency per direction and head dim (the softmax's exp and fp32
    work per element is a larger share at small head dims, so e depends on d).
  * CTA work = c_cta + visited tiles x tile time (c_cta: prologue, loading the first Q/K/V tiles,
    epilogue writing O / dK dV: a fixed cost per CTA, SM-seconds).
  * CTAs that share an SM (FA2: registers allow 2 forward CTAs of 4 warps, 1 backward CTA of 8
    warps; models/families/kernel_time.cpp ctas_per_sm) each run k times slower; CTAs are dispatched in launch
    order to the first free slot (greedy list schedule: wave quantisation and the causal tail), exact
    up to 32 x slots CTAs, beyond that a fluid bulk and an exact tail of the last 8 x slots, as
    models/families/kernel_time.cpp list_schedule_makespan does. FlashAttention-3 is persistent: one CTA per
    SM takes tiles tile_idx, tile_idx + 132, ... (static round robin, hopper/tile_scheduler.hpp).
  * A call adds a per-call fixed cost L (launch, grid start and drain), per direction; the
    backward also adds its memory-bound pre/post kernels (bytes per query element from
    configs/kernels/flash-attn-2.json) at the GPU's HBM bandwidth (not fitted).
Link model: time(size) = latency + size / bandwidth per regime; a regime boundary (NCCL protocol or
channel change) is only kept where the probes show a knee (segmented least squares on relative
error, 1-3 regimes chosen by BIC).
"""
import argparse
import json
import os
import sys

from component_kernel_model import kernel_rows
from component_kernel_fit import kernel_fits
from component_links import link_fits, link_rows

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


# ----------------------------------------------------------------------------------------------


def run(root):
    krows, excluded = kernel_rows(root)
    lrows = link_rows(root)
    return {
        "generated_by": "python3 scripts/fit_components.py",
        "note": "Component fits for issue 25; not yet read by the C++ cost model. Kernel times: relative-error "
                "bounded least squares per (family, GPU) on that GPU's rows only; held-out = leave-one-shape-group-out "
                "(group = seqlen for the charts, (sq, skv) for the single-GPU profile). Links: leave-one-size-out. "
                "Standard errors from the Jacobian at the optimum (s^2 = RSS / (n - p)); None where a parameter sits at a bound.",
        "bars": {"kernel_logo_mape_pct": 8.0, "link_mape_pct_ge_1MB": 10.0},
        "kernels": kernel_fits(root, krows),
        "kernel_rows_excluded": excluded,
        "links": link_fits(root, lrows),
    }


def summary(res):
    lines = ["Kernel-time fits (held-out = leave-one-shape-group-out MAPE; bar 8 %)"]
    for key, k in res["kernels"].items():
        ps = ", ".join(f"{n}={v['value']:.4g}" + (f"±{v['se']:.2g}" if v["se"] is not None else "(at bound)")
                       for n, v in k["parameters"].items())
        lo = ", ".join(f"{p} {v:.1f}%" for p, v in k["logo_mape_pct"].items())
        ins = ", ".join(f"{p} {v:.1f}%" for p, v in k["in_sample_mape_pct"].items())
        lines.append(f"  {key:22s} rows {k['rows']:3d} groups {k['groups']:2d} ({k['grouping']}): held-out {lo}"
                     f" | in-sample {ins}")
        lines.append(f"      {ps}")
    lines.append("Link fits (leave-one-size-out MAPE; bar 10 % over >= 1 MB)")
    for hop, l in res["links"].items():
        regs = "; ".join(f"[{r['probes'][0]}..{r['probes'][1]}] {r['latency_s'] * 1e6:.1f} us + size / "
                         f"{(r['bandwidth_bytes_per_s'] or 0) / 1e9:.2f} GB/s" for r in l["regimes"])
        lines.append(f"  {hop:28s} >=1MB {l['loso_mape_pct_ge_1MB']:.1f}%  all {l['loso_mape_pct_all']:.1f}%"
                     f"  (one regime: {l['one_regime_loso_mape_pct_ge_1MB']:.1f}% / {l['one_regime_loso_mape_pct_all']:.1f}%)")
        lines.append(f"      {regs}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--out", default=None, help="default: ROOT/data/components/fit.json")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    res = run(a.root)
    out = a.out or os.path.join(a.root, "data", "components", "fit.json")
    with open(out, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    if not a.quiet:
        print(summary(res))
        print(f"wrote {os.path.relpath(out, a.root) if out.startswith(a.root) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
