#!/usr/bin/env python3
"""Regenerate every fitted and derived profile and docs/validation.md from the published data.

Usage: python3 scripts/validation.py [path/to/ringsim]   (default build/cli/ringsim)

Every number in docs/validation.md comes from a `ringsim` command this script runs:
  1. the Striped Attention paper's speedups  -> configs/profiles/jax-blockwise/{a100-80gb,tpu-v4}.json
     (the paper's JAX code on the other TPUs and GPUs derived from them);
  2. components: NCCL point-to-point probes -> configs/links/{a800,a100-80gb,h800}.json; the
     FlashAttention-2 kernel curves (data/components/kernels) -> the flash family's parameters of
     configs/profiles/ring-flash-attn/{a100-80gb,h800}.json and usp/a100-80gb.json; then
     ring-flash-attention's README table and the ring-only rows of YunChang/USP's table T1
     (data/cp_attention_times.csv, made by scripts/normalize-cp-tables.py) score them, nothing
     fitted on those rows (every other library calling FlashAttention-2, and every other GPU,
     derived from them);
     the A800 cluster's 528 ring calls (data/a800_ring_times.csv) score the derived a800 profile, then
     fit its host terms (scripts/validation_a800.py) -> configs/profiles/ring-flash-attn/a800.json;
  3. SCFA's published times                  -> configs/profiles/scfa/a100-40gb.json (other GPUs derived);
then the per-row tables with leave-one-group-out predictions and 90 % intervals, the out-of-sample
checks (USP's Ulysses and hybrid rows, ring-flash-attention's varlen table), the SCFA bucket
grid and the predictions for the paper's unmeasured configurations.
Standard library only. About two minutes on two cores (121 s on 2026-12-04).
"""
import os
import sys

from validation_fits import (PAPER_FREE, ROOT, TMP, covered, fit_components, fit_flash, fit_paper, fit_scfa,
                             pct, read_csv, ringsim, run, scfa_grid, scfa_leave_one_out, set_collective_host,
                             usp_t1, varlen)
from validation_a800 import fit_a800, write_a800, write_transport_changes
from validation_flash import write_flash
from validation_nemo import nemo_rows, write_nemo


def main():
    run([sys.executable, os.path.join(ROOT, "scripts", "normalize-cp-tables.py")])
    paper = fit_paper()
    comps, kfit = fit_components()
    flash = fit_flash(kfit)
    # The host's work per collective call is the library's and its host's, not the GPU's: every usp profile.
    a, b, _ = comps["collective-host"]
    for name in sorted(os.listdir(os.path.join(ROOT, "configs", "profiles", "usp"))):
        set_collective_host(os.path.join(ROOT, "configs", "profiles", "usp", name), a, b)
    a800 = fit_a800()
    scfa = fit_scfa()
    scen = read_csv(ringsim("predict", "--scenarios", "data/striped_paper_calibration.csv", "--format", "csv"), True)
    unmeasured = read_csv(ringsim("predict", "--scenarios", "data/paper_unmeasured_configs.csv", "--format", "csv"), True)
    t1 = usp_t1()
    vl = varlen()
    sg = scfa_grid()
    nemo = nemo_rows()
    out = []
    write_doc(out.append, paper, scen, comps, flash, t1, vl, scfa, sg, unmeasured, a800, nemo)
    with open(os.path.join(ROOT, "docs", "validation.md"), "w") as f:
        f.write("\n".join(out) + "\n")


# ---------------------------------------------------------------------------------- the page

def fitted_lines(text):
    return [l.strip() for l in text.splitlines() if l.startswith("  ")]


def write_paper(w, paper_fit, scen):
    w("## 1. Striped vs Ring Attention speedups (the paper's JAX code, `jax-blockwise`)")
    w("")
    w("Data: Brandon et al., arXiv 2311.09431 (data/striped_paper_calibration.csv; its `impl` column runs every")
    w("row on `jax-blockwise`, whatever the GPU default). Predicted speedup = ring training-step time /")
    w("striped step time of the analytic model.")
    w("")
    for hw in ("a100-80gb", "tpu-v4"):
        w("    ringsim calibrate --from-speedups data/striped_paper_calibration.csv --hardware %s --impl jax-blockwise \\" % hw)
        w("        --free %s%s -o configs/profiles/jax-blockwise/%s.json"
          % (PAPER_FREE[hw], " --mesh-spread-from jax-blockwise/a100-80gb" if hw == "tpu-v4" else "", hw))
    w("    ringsim predict --scenarios data/striped_paper_calibration.csv --format csv")
    w("")
    w("What the model needs, from the code (exists-forall/striped_attention, bpt.py; docs/implementations.md):")
    w("")
    w("- `masked_tile_penalty`: extra cost per element of a tile holding masked pairs. At c = 4096 on A100")
    w("  with 2048 x 4096 tiles ring and striped visit the same tiles and move the same bytes, yet striped")
    w("  is slower (0.92-0.96): every striped tile is a triangle whose mask is built and applied")
    w("  element-wise, off the matrix units.")
    w("- `skipped_tile_cost`: cost per element of a skipped tile. Speedups saturate well below TMS (1.41 vs")
    w("  1.72): the backward returns zero dK/dV chunks for skipped chunks and accumulates `dk + dk_part` for")
    w("  every query chunk, so a skipped chunk is not free.")
    w("- `round_bytes_per_element` (TPU): the per-round work over the whole block that does not depend on")
    w("  which tiles are visited (`moveaxis`/reshape of q, k, v and the running output, the output")
    w("  normalisation per query chunk): O(c) per round against O(c^2) tiles, so it amortises as blocks")
    w("  grow. With fractions of a tile's compute alone the TPU residuals trended with n_seq (held out by")
    w("  n_seq: -0.110 at 32768 to +0.026 and back to -0.026 at 786432, MAE 0.031). With it the TPU fit puts")
    w("  `masked_tile_penalty` at its bound 0, as the code says (the causal bias is built for every visited")
    w("  chunk, masked or not). On A100 the term is not identified by the rows (standard error larger than")
    w("  the value): two free parameters there.")
    w("- Not fitted (physics with sources, in the profiles' notes): block rematerialisation (`recompute`, the")
    w("  Ring Attention code's `nothing_saveable` remat policy: the backward re-runs each layer's forward,")
    w("  the ring attention forward included) and the TPU's 128-wide matrix unit (`matrix_unit_width`:")
    w("  ringattn-3b's head dim 100 runs as 128).")
    w("- Tried and not shipped: `overlap` (not identifiable from speedups, whose ring and striped")
    w("  transfers are equal), `attention_efficiency` (runs to its bound), `round_overhead_s` (no gain held")
    w("  out). Speedups are ratios: absolute efficiencies keep their spec values.")
    w("")
    w("Fits (from the commands above; every row below is a fitted row, so the held-out columns are the")
    w("scores):")
    w("")
    for hw in ("a100-80gb", "tpu-v4"):
        w("- **%s**: %s" % (hw, "; ".join(fitted_lines(paper_fit[hw]))))
        for l in paper_fit[hw].splitlines():
            if l.startswith("residual") or l.startswith("leave-one"):
                w("  %s" % l.strip())
    w("")
    err = [abs(float(r["pred_speedup"]) - float(r["speedup"])) for r in scen]
    w("All %d rows through `predict --scenarios` (in-sample): MAE **%.4f** (target <= 0.02), max %.4f;"
      % (len(scen), sum(err) / len(err), max(err)))
    for hw in ("a100-80gb", "tpu-v4"):
        e = [abs(float(r["pred_speedup"]) - float(r["speedup"])) for r in scen if r["hardware"] == hw]
        w("%s %.4f over %d rows." % (hw, sum(e) / len(e), len(e)))
    w("")
    reports = {hw: read_csv(os.path.join(TMP, hw + ".csv")) for hw in ("a100-80gb", "tpu-v4")}
    lomo = [abs(float(r["held_out_mesh"]) - float(r["speedup"])) for r in reports["a100-80gb"] if r["held_out_mesh"]]
    lono = {hw: [abs(float(r["held_out_n_seq"]) - float(r["speedup"])) for r in reports[hw]] for hw in reports}
    w("Held out (the scores): A100 leave-one-mesh-out MAE **%.4f** over %d rows, leave-one-n_seq-out MAE %.4f;"
      % (sum(lomo) / len(lomo), len(lomo), sum(lono["a100-80gb"]) / len(lono["a100-80gb"])))
    w("TPU v4 (one mesh) leave-one-n_seq-out MAE **%.4f** over %d rows; its held-out residuals by n_seq: %s (no"
      % (sum(lono["tpu-v4"]) / len(lono["tpu-v4"]), len(lono["tpu-v4"]),
         ", ".join("%s: %+.3f" % (r["n_seq"], float(r["held_out_n_seq"]) - float(r["speedup"])) for r in reports["tpu-v4"])))
    w("trend with n_seq left).")
    inside = [covered(float(r["speedup"]), float(r["pred_speedup_lo"]), float(r["pred_speedup_hi"]))
              for r in scen if r["pred_speedup_lo"]]
    if inside:
        w("The 90 %% intervals of `predict` cover %d of the %d published speedups." % (sum(inside), len(inside)))
    w("")
    w("**Intervals.** A profile's 90 % interval is its held-out spread (log speedup, both groupings pooled)")
    w("with the fitted parameters' covariance. What a user changes must be in that spread: the TPU v4 rows")
    w("hold one mesh, so their own spread (7 points, one mesh) says nothing of another mesh, and the A100")
    w("fit's leave-one-mesh-out spread (six meshes) is added in quadrature (`--mesh-spread-from`). A profile")
    w("derived from a fit takes as its spread the error of that fit's parameters on the other fitted")
    w("hardware's rows (`ratio_derived`: the A100's on TPU v4's and back; GPU and TPU differ more than two")
    w("GPUs do, so it errs wide):")
    w("")
    for hw in ("a100-80gb", "tpu-v4"):
        for l in paper_fit[hw].splitlines():
            if l.startswith("held-out log spread") or l.startswith("90 % intervals of each held-out mesh") \
                    or l.startswith("one mesh:") or l.startswith("derived ("):
                w("- %s: %s" % (hw, l.strip()))
    w("")
    w("![speedup vs n_seq per A100 mesh: predicted lines, published points](images/validation.svg)")
    w("")
    w("![TPU v4](images/validation-tpu-v4.svg)")
    w("")
    w("Every row (fitted; held out = predicted by a fit without that mesh / that n_seq; interval = 90 %):")
    w("")
    w("| hardware | mp x sp | n_seq | TMS | published | predicted | error | 90 % interval | held out (mesh) | held out (n_seq) |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    by_key = {(r["hardware"], r["mp"], r["sp"], r["n_seq"]): r for r in scen}
    for hw in ("a100-80gb", "tpu-v4"):
        for r in reports[hw]:
            s = by_key[(r["hardware"], r["mp"], r["sp"], r["n_seq"])]
            interval = ("%.3f-%.3f" % (float(s["pred_speedup_lo"]), float(s["pred_speedup_hi"]))
                        if s["pred_speedup_lo"] else "-")
            w("| %s | %sx%s | %s | %s | %s | %.4f | %+.4f | %s | %s | %s |" % (
                hw, r["mp"], r["sp"], r["n_seq"], r["tms"], r["speedup"], float(s["pred_speedup"]),
                float(s["pred_speedup"]) - float(r["speedup"]), interval, r["held_out_mesh"] or "n/a", r["held_out_n_seq"]))
    w("")
    w("TPU v3, v5e and v5p profiles are derived from the TPU v4 fit, and the H100, H200, B200 and MI300X ones")
    w("from the A100 fit (the JAX loop's tile terms kept, the GPU's own spec efficiencies), all marked")
    w("uncalibrated (`calibrate --derive-from`); their intervals are their source's `ratio_derived`.")
    w("")


def write_scfa(w, scfa_text, sg):
    buckets, grid, grid_free, qk = sg
    w("## 3. Sparse Causal Flash Attention on one A100 40GB (`scfa`)")
    w("")
    w("    ringsim calibrate --from-scfa data/scfa_calibration.csv --hardware a100-40gb --name scfa/a100-40gb \\")
    w("        --impl scfa -o configs/profiles/scfa/a100-40gb.json")
    w("")
    for l in scfa_text.splitlines()[1:]:
        w("    " + l)
    w("")
    w("Five rows, three fitted parameters: the sparse rows are fitted almost exactly and are not a test.")
    w("")
    loo = scfa_leave_one_out()
    w("**Leave-one-row-out** (the score: each row predicted by the same three parameters fitted to the other")
    w("four; a row whose removal leaves a parameter without data shows how far the others carry it):")
    w("")
    w("| method | param | n_seq | measured | predicted | error |")
    w("|---|---|---|---|---|---|")
    errs = []
    for f, pred in loo:
        if pred is None:
            w("| %s | %s | %s | %s ms | fit failed | - |" % (f["method"], f["param"], f["n_seq"], f["ms"]))
            continue
        e = pred / float(f["ms"]) - 1
        errs.append(abs(e))
        w("| %s | %s | %s | %s ms | %.1f ms | %s |" % (f["method"], f["param"], f["n_seq"], f["ms"], pred, pct(e)))
    w("")
    if errs:
        w("Held-out MAPE %.1f%% over %d rows (in-sample above: not a score). The dense rows carry one another;" % (100 * sum(errs) / len(errs), len(errs)))
        w("each sparse row is the only one of its kind, so without it the sparse kernel's efficiency and the masking")
        w("penalty are fixed by the other sparse row alone: two sparse rows cannot check a three-parameter sparse")
        w("model, and these errors say how far one carries to the other. Their log spread (%s) is the profile's"
          % [l.split("held-out log spread ")[1].split(" ")[0] for l in scfa_text.splitlines()
             if "held-out log spread" in l][0])
        w("90 % interval spread, with the fitted parameters' covariance; the profiles derived for other GPUs")
        w("have no interval (one GPU measured: no error of copying its parameters to another is known).")
        w("")
    w("**Speedup over dense causal attention vs the number of buckets** (forward / forward + backward, batch 4,")
    w("48 heads of dim 64, sort, gathers and scatter included; `ringsim predict --impl scfa --mask hash:K")
    w("--compare-mask causal ...`; forward + backward):")
    w("")
    w("| tokens | " + " | ".join("%d" % b for b in buckets) + " |")
    w("|---|" + "---|" * len(buckets))
    for n in sorted(grid):
        w("| %d | " % n + " | ".join("%.2fx" % fb for (_, fb) in grid[n]) + " |")
    w("| 16384, scans and sort free | " + " | ".join("%.2fx" % fb for (_, fb) in grid_free) + " |")
    w("")
    s16 = [fb for (_, fb) in grid[16384]]
    w("The curve flattens: from %d to %d buckets the speedup grows %.2fx, from %d to %d only %.2fx; with the"
      % (buckets[2], buckets[4], s16[4] / s16[2], buckets[5], buckets[7], s16[7] / s16[5]))
    w("bucket-independent work removed (last row) it keeps growing. The work that does not shrink with the")
    w("number of buckets (models/families/scfa.cpp, ScfaCost; docs/implementations.md):")
    w("")
    w("- the forward's bucket-range scan: every 128-query tile's program loads every key tile's bucket ids,")
    w("  one tile per loop step, before its first multiply (hsparse_attn.py, `_fwd_kernel`): (n/128)^2 loop")
    w("  steps per head, each waiting on a load;")
    w("- the backward's: one program per (batch, head) scans all query tiles for each of its key tiles, in")
    w("  sequence (`_bwd_kernel`, grid (Z*H,)); its compute also fills only batch x heads of the GPU's slots;")
    w("- the sort by bucket and the gathers and scatter around the kernels.")
    w("")
    w("Query/key dropping at 16k tokens (forward + backward): " +
      ", ".join("drop %s: %.2fx" % (d, fb) for d, (_, fb) in qk.items()) + ".")
    w("")
    w("A loop step is costed at the GPU's `memory_latency_s` (400 ns, an estimate from the 200-800 cycles a")
    w("global load takes; configs/hardware). Only the hash row at 8 buckets was handed over, so the level of")
    w("the plateau is not fitted: it scales with that per-step cost, and a kernel timing of the backward's")
    w("scan would pin it. These predictions have not been compared with the published grid here.")
    w("")


def write_doc(w, paper_fit, scen, comps, flash_text, t1, vl, scfa_text, sg, unmeasured, a800, nemo):
    w("# Validation: predictions against published measurements")
    w("")
    w("Everything on this page, and every fitted or derived profile it cites, is regenerated by one script:")
    w("")
    w("    python3 scripts/validation.py build/cli/ringsim")
    w("")
    w("It runs the `ringsim calibrate` and `ringsim predict` commands shown in each section. Accuracy figures")
    w("say which rows were fitted and which were scored; a row is never scored by a fit that saw it.")
    w("Intervals are 90 % prediction intervals (`_lo`/`_hi` columns of `predict`, `sweep` and `plan`): the")
    w("fitted parameters' covariance carried through the model (delta method) and the held-out residual")
    w("spread (models/analytic/interval.hpp). A derived profile (no measurement on that hardware or library)")
    w("takes as its spread the error its source fit measured when one fitted GPU's parameters predict another")
    w("fitted GPU's rows (section 2); one derived from a fit that measured no such error (a single GPU, or the")
    w("speedup fits of section 1) carries no interval. tests/calibration/test_intervals.cpp checks on synthetic")
    w("data that 90 % intervals cover at least 85 % of points the fit never saw.")
    w("")
    write_paper(w, paper_fit, scen)
    write_flash(w, comps, flash_text, t1, vl)
    write_a800(w, a800)
    write_transport_changes(w)
    write_scfa(w, scfa_text, sg)
    w("## 4. Predictions for the paper's configurations that are not in the data file")
    w("")
    w("Predictions only (the published values are kept outside the repository and checked independently);")
    w("input data/paper_unmeasured_configs.csv, `ringsim predict --scenarios ... --format csv`. Every row runs")
    w("the paper's code (the file's impl column); TPU v3 uses the profile derived from the TPU v4 fit.")
    w("")
    w("| hardware | model | mp x sp | n_seq | implementation | pred_tms | pred_speedup | 90 % interval |")
    w("|---|---|---|---|---|---|---|---|")
    for r in unmeasured:
        interval = "%.2f-%.2f" % (float(r["pred_speedup_lo"]), float(r["pred_speedup_hi"])) if r["pred_speedup_lo"] else "- (uncalibrated)"
        w("| %s | %s | %sx%s | %s | %s | %.2f | %.2f | %s |" % (r["hardware"], r["model"], r["mp"], r["sp"], r["n_seq"],
                                                            r["pred_impl"], float(r["pred_tms"]), float(r["pred_speedup"]), interval))
    w("")
    write_nemo(w, nemo)


if __name__ == "__main__":
    main()
