#!/usr/bin/env python3
"""Regenerate every fitted and derived profile and docs/validation.md from the published data.

Usage: python3 scripts/validation.py [path/to/ringsim]   (default build/cli/ringsim)

Every number in docs/validation.md comes from a `ringsim` command this script runs:
  1. the Striped Attention paper's speedups   -> configs/profiles/jax-blockwise/{a100-80gb,tpu-v4}.json
     (tpu-v3, tpu-v5e, tpu-v5p derived from tpu-v4);
  2. ring-flash-attention's README table and the ring-only rows of YunChang/USP's table T1
     (data/cp_attention_times.csv, made by scripts/normalize-cp-tables.py)
                                              -> configs/profiles/ring-flash-attn/{a100-80gb,h800}.json
     (other GPUs, and te-p2p, derived);
  3. SCFA's published times                  -> configs/profiles/scfa/a100-40gb.json;
then the per-row tables, leave-one-group-out figures, intervals and the SCFA bucket grid.
Standard library only. Takes about ten minutes on two cores (the leave-one-group-out refits).
"""
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "cli", "ringsim")
DATE = "2026-11-23"
TMP = tempfile.mkdtemp(prefix="ringsim-validation-")

# The fitted parameters of each profile (docs/validation.md says why each is physical).
PAPER_FREE = {"a100-80gb": "masked_tile_penalty,skipped_tile_cost",
              "tpu-v4": "masked_tile_penalty,skipped_tile_cost,round_bytes_per_element"}
RFA_PER_GPU = "attention_efficiency,attention_bwd_efficiency"
RFA_SHARED = "softmax_overlap,p2p_bandwidth_bytes_per_s"
KERNEL_KEEP = "attention_efficiency,attention_bwd_efficiency,softmax_overlap,p2p_bandwidth_bytes_per_s"


def run(args, capture=True):
    r = subprocess.run(args, cwd=ROOT, capture_output=capture, text=True)
    if r.returncode != 0:
        sys.stderr.write(" ".join(args) + "\n" + (r.stdout or "") + (r.stderr or ""))
        sys.exit(1)
    return r.stdout


def ringsim(*args):
    return run([BIN] + list(args))


def read_csv(path_or_text, is_text=False):
    f = io.StringIO(path_or_text) if is_text else open(path_or_text, newline="")
    lines = [l for l in f if l.strip() and not l.startswith("#")]
    return list(csv.DictReader(lines))


def pct(x):
    return "%+.1f%%" % (100 * x)


def main():
    out = []
    w = out.append
    run([sys.executable, os.path.join(ROOT, "scripts", "normalize-cp-tables.py")])

    # ---------------------------------------------------------------- 1. the Striped paper
    paper_fit = {}
    for hw in ("a100-80gb", "tpu-v4"):
        paper_fit[hw] = ringsim("calibrate", "--from-speedups", "data/striped_paper_calibration.csv",
                                "--hardware", hw, "--free", PAPER_FREE[hw], "--date", DATE,
                                "-o", "configs/profiles/jax-blockwise/%s.json" % hw,
                                "--report", os.path.join(TMP, hw + ".csv"),
                                "--plot", "docs/images/validation%s.svg" % ("" if hw == "a100-80gb" else "-tpu-v4"))
    for hw in ("tpu-v3", "tpu-v5e", "tpu-v5p"):
        ringsim("calibrate", "--derive-from", "jax-blockwise/tpu-v4", "--hardware", hw, "--keep",
                "masked_tile_penalty,skipped_tile_cost,round_bytes_per_element,attention_efficiency,"
                "matmul_efficiency,memory_efficiency,link_efficiency,overlap", "--date", DATE, "--note",
                "The paper ran the same JAX code on TPU v3 and v4 with 2048 x 2048 chunks; later TPUs run it unchanged.",
                "-o", "configs/profiles/jax-blockwise/%s.json" % hw)
    scen = read_csv(ringsim("predict", "--scenarios", "data/striped_paper_calibration.csv", "--format", "csv"), True)

    # ---------------------------------------------------------------- 2. ring-flash-attention
    os.makedirs(os.path.join(ROOT, "configs", "profiles", "ring-flash-attn"), exist_ok=True)
    rfa_text = ringsim("calibrate", "--from-times", "data/cp_attention_times.csv", "--impl", "ring-flash-attn",
                       "--free", RFA_PER_GPU, "--shared", RFA_SHARED, "--date", DATE,
                       "--profiles-dir", "configs/profiles/ring-flash-attn",
                       "--report", os.path.join(TMP, "rfa.csv"))
    note_rfa = ("FlashAttention-2 runs the same sm80 code on this GPU; its efficiencies are the measured ones of the "
                "GPU named in the source profile.")
    for src, targets in (("ring-flash-attn/a100-80gb", ["a100-40gb"]),
                         ("ring-flash-attn/h800", ["h100-sxm", "h200-sxm", "b200"])):
        for hw in targets:
            ringsim("calibrate", "--derive-from", src, "--hardware", hw, "--keep", KERNEL_KEEP, "--date", DATE,
                    "--note", note_rfa + (" The H800 is the H100 SXM die (same SMs and clocks)." if hw != "b200" else
                                          " Blackwell runs flash-attn 2's sm80 code too; its efficiency there is unmeasured."),
                    "-o", "configs/profiles/ring-flash-attn/%s.json" % hw)
    os.makedirs(os.path.join(ROOT, "configs", "profiles", "te-p2p"), exist_ok=True)
    for src, targets in (("ring-flash-attn/a100-80gb", ["a100-80gb", "a100-40gb"]),
                         ("ring-flash-attn/h800", ["h800", "h100-sxm", "h200-sxm", "b200"])):
        for hw in targets:
            ringsim("calibrate", "--derive-from", src, "--impl", "te-p2p", "--hardware", hw, "--keep", KERNEL_KEEP,
                    "--date", DATE, "--note",
                    "TransformerEngine's p2p calls FlashAttention-2 on A100 and cuDNN's fused attention on Hopper and "
                    "later (not public): the kernel parameters are ring-flash-attention's fitted FlashAttention-2 ones, "
                    "an assumption on Hopper and later; its merges and messages are its own (configs/implementations/te-p2p.json).",
                    "-o", "configs/profiles/te-p2p/%s.json" % hw)

    # ---------------------------------------------------------------- 3. SCFA
    scfa_text = ringsim("calibrate", "--from-scfa", "data/scfa_calibration.csv", "--hardware", "a100-40gb",
                        "--name", "scfa/a100-40gb", "--impl", "scfa", "--date", DATE,
                        "-o", "configs/profiles/scfa/a100-40gb.json", "--report", os.path.join(TMP, "scfa.csv"))

    def scfa_speedup(mask, n, hardware_file=None, profile=None):
        args = ["predict", "--impl", "scfa", "--model", "attn:48:48:64", "--mesh", "1x1", "--batch", "4",
                "--tile", "128x128", "--layout", "contiguous", "--seq", str(n), "--mask", mask, "--compare-mask", "causal"]
        args += ["--hardware-file", hardware_file] if hardware_file else ["--hardware", "a100-40gb"]
        if profile:
            args += ["--profile", profile]
        line = [l for l in ringsim(*args).splitlines() if l.startswith("contiguous")][-1].split()
        return float(line[3].rstrip("x")), float(line[-1].rstrip("x"))

    # The same GPU with loop steps that cost nothing, and a profile without the sort and gathers:
    # what the buckets-independent work does to the curve.
    hw = json.load(open(os.path.join(ROOT, "configs", "hardware", "a100-40gb.json")))
    hw["compute_units"]["memory_latency_s"]["value"] = 1e-15
    free_scans = os.path.join(TMP, "a100-40gb-free-scans.json")
    json.dump(hw, open(free_scans, "w"))
    prof = json.load(open(os.path.join(ROOT, "configs", "profiles", "scfa", "a100-40gb.json")))
    prof["sparse_prep_bytes_per_element"] = 0
    prof["hash_sort_bytes_per_token"] = 0
    no_prep = os.path.join(TMP, "scfa-no-prep.json")
    json.dump(prof, open(no_prep, "w"))
    buckets = [2, 4, 8, 16, 32, 64, 128, 256]
    grid = {n: [scfa_speedup("hash:%d" % b, n) for b in buckets] for n in (8192, 16384, 32768)}
    grid_free = [scfa_speedup("hash:%d" % b, 16384, free_scans, no_prep) for b in buckets]

    unmeasured = read_csv(ringsim("predict", "--scenarios", "data/paper_unmeasured_configs.csv", "--format", "csv"), True)

    write_doc(w, paper_fit, scen, rfa_text, scfa_text, grid, grid_free, buckets, unmeasured)
    with open(os.path.join(ROOT, "docs", "validation.md"), "w") as f:
        f.write("\n".join(out) + "\n")


def fitted_lines(text):
    return [l.strip() for l in text.splitlines() if l.startswith("  ")]


def write_doc(w, paper_fit, scen, rfa_text, scfa_text, grid, grid_free, buckets, unmeasured):
    w("# Validation: predictions against published measurements")
    w("")
    w("Everything on this page, and every fitted or derived profile it cites, is regenerated by one script:")
    w("")
    w("    python3 scripts/validation.py build/cli/ringsim")
    w("")
    w("It runs the `ringsim calibrate` and `ringsim predict` commands shown in each section. Accuracy figures")
    w("say which rows were fitted and which were scored; a row is never scored by a fit that saw it.")
    w("Intervals are 90 % prediction intervals (`_lo`/`_hi` columns of `predict`): the fitted parameters'")
    w("covariance carried through the model (delta method) and the held-out residual spread")
    w("(models/interval.hpp).")
    w("")

    # ---------------------------------------------------------------- paper
    w("## 1. Striped vs Ring Attention speedups (the paper's JAX code, `jax-blockwise`)")
    w("")
    w("Data: Brandon et al., arXiv 2311.09431 (data/striped_paper_calibration.csv; its `impl` column runs every")
    w("row on `jax-blockwise`, whatever the GPU default). Predicted speedup = ring training-step time /")
    w("striped step time of the analytic model.")
    w("")
    w("    ringsim calibrate --from-speedups data/striped_paper_calibration.csv --hardware a100-80gb \\")
    w("        --free %s -o configs/profiles/jax-blockwise/a100-80gb.json" % PAPER_FREE["a100-80gb"])
    w("    ringsim calibrate --from-speedups data/striped_paper_calibration.csv --hardware tpu-v4 \\")
    w("        --free %s -o configs/profiles/jax-blockwise/tpu-v4.json" % PAPER_FREE["tpu-v4"])
    w("    ringsim predict --scenarios data/striped_paper_calibration.csv --format csv")
    w("")
    w("What the model needs, from the code (docs/implementations.md):")
    w("")
    w("- `masked_tile_penalty` (per element of a tile holding masked pairs) and `skipped_tile_cost` (per")
    w("  element of a skipped tile: bpt.py's backward returns zero dK/dV chunks for skipped chunks and")
    w("  accumulates `dk + dk_part` for every query chunk). On A100 the two explain why striped is slower")
    w("  at the smallest blocks (equal tiles, every striped tile masked).")
    w("- `round_bytes_per_element`, the per-round work over the whole block that does not depend on which")
    w("  tiles are visited (bpt.py's `moveaxis`/reshape of q, k, v and the running output, the output")
    w("  normalisation per query chunk): O(c) per round against O(c^2) tiles, so it amortises as blocks")
    w("  grow. The previous TPU fit had only fractions of a tile's compute, which never amortise, and its")
    w("  residuals trended with n_seq. With the per-round term the TPU fit puts `masked_tile_penalty` at")
    w("  its bound 0, as the code says (bpt.py builds and adds the causal bias for every visited chunk,")
    w("  masked or not), and the trend is gone. On A100 the term is not identified by the rows (standard")
    w("  error larger than the value) and is left out: two free parameters, as before.")
    w("- Block rematerialisation and the TPU's 128-wide matrix unit are physics, not fitted (profiles' notes).")
    w("")
    w("Fits (from the commands above):")
    w("")
    for hw in ("a100-80gb", "tpu-v4"):
        w("- **%s**: %s" % (hw, "; ".join(fitted_lines(paper_fit[hw]))))
        for l in paper_fit[hw].splitlines():
            if l.startswith("residual") or l.startswith("leave-one"):
                w("  %s" % l.strip())
    w("")
    rows = scen
    err = [abs(float(r["pred_speedup"]) - float(r["speedup"])) for r in rows]
    w("All %d rows through `predict --scenarios` (fitted rows): MAE **%.4f** (target <= 0.02), max %.4f;"
      % (len(rows), sum(err) / len(err), max(err)))
    for hw in ("a100-80gb", "tpu-v4"):
        e = [abs(float(r["pred_speedup"]) - float(r["speedup"])) for r in rows if r["hardware"] == hw]
        w("%s %.4f over %d rows." % (hw, sum(e) / len(e), len(e)))
    w("")
    reports = {hw: read_csv(os.path.join(TMP, hw + ".csv")) for hw in ("a100-80gb", "tpu-v4")}
    w("**The TPU trend.** Leave-one-n_seq-out residuals on TPU v4 (each row predicted by a fit without its")
    w("n_seq), now: " + ", ".join("%s: %+.3f" % (r["n_seq"], float(r["held_out_n_seq"]) - float(r["speedup"]))
                                  for r in reports["tpu-v4"]) + ".")
    lono = [abs(float(r["held_out_n_seq"]) - float(r["speedup"])) for r in reports["tpu-v4"]]
    w("Leave-one-n_seq-out MAE %.4f (0.0311 with the fraction-of-tile terms alone, whose held-out residuals" % (sum(lono) / len(lono)))
    w("ran from -0.110 at 32768 to +0.026 and back to -0.026 at 786432). Seven rows on one mesh: the per-round")
    w("term is identified by their n_seq dependence alone; whether it also fixes the larger models' TPU")
    w("speedups (the open out-of-sample question) is for the independent check.")
    w("")
    w("![speedup vs n_seq per A100 mesh: predicted lines, published points](images/validation.svg)")
    w("")
    w("![TPU v4](images/validation-tpu-v4.svg)")
    w("")
    w("Every row (fitted; held out = predicted by a fit without that mesh / that n_seq; interval = 90 %):")
    w("")
    w("| hardware | mp x sp | n_seq | TMS | published | predicted | error | 90 % interval | held out (mesh) | held out (n_seq) |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    by_key = {(r["hardware"], r["mp"], r["sp"], r["n_seq"]): r for r in rows}
    for hw in ("a100-80gb", "tpu-v4"):
        for r in reports[hw]:
            s = by_key[(r["hardware"], r["mp"], r["sp"], r["n_seq"])]
            interval = ("%.3f-%.3f" % (float(s["pred_speedup_lo"]), float(s["pred_speedup_hi"]))
                        if s["pred_speedup_lo"] else "-")
            w("| %s | %sx%s | %s | %s | %s | %.4f | %+.4f | %s | %s | %s |" % (
                hw, r["mp"], r["sp"], r["n_seq"], r["tms"], r["speedup"], float(s["pred_speedup"]),
                float(s["pred_speedup"]) - float(r["speedup"]), interval, r["held_out_mesh"] or "n/a", r["held_out_n_seq"]))
    w("")
    w("TPU v3, v5e and v5p profiles are derived from the TPU v4 fit (same JAX code and chunk sizes, their own")
    w("specs) and marked uncalibrated.")
    w("")

    # ---------------------------------------------------------------- ring-flash-attention
    rep = read_csv(os.path.join(TMP, "rfa.csv"))
    w("## 2. Ring libraries on GPUs (`ring-flash-attn`): ring-flash-attention's README and USP's table T1")
    w("")
    w("Data: the ring-flash-attention README table (8 x A100 and 8 x H800, forward and forward + backward, with")
    w("the single-GPU flash_attn call) and the ring-only rows (Ulysses degree 1) of YunChang/USP's table T1")
    w("(8 x A100 NVLink, forward, head shapes 2/2/32 to 64/8/32 and 8/8/128, 1k to 16k tokens per GPU), both")
    w("running ring-flash-attention's code (data/SOURCES.md; USP's Ulysses and hybrid rows belong to the")
    w("Ulysses/hybrid strategies and are not used here). `scripts/normalize-cp-tables.py` turns them into")
    w("data/cp_attention_times.csv (seconds per call). The README's \"8xA100\" is taken as A100 80GB SXM")
    w("(the USP table's GPU). The H800 rows calibrate an `h800` hardware of their own (the H100 SXM die with")
    w("NVLink cut to 400 GB/s): the H100, H200 and B200 profiles are derived from it.")
    w("")
    w("    ringsim calibrate --from-times data/cp_attention_times.csv --impl ring-flash-attn \\")
    w("        --free %s --shared %s --profiles-dir configs/profiles/ring-flash-attn" % (RFA_PER_GPU, RFA_SHARED))
    w("")
    w("Model (models/kernel_time.hpp, attention family `flash`): per ring step, the library's calls on the")
    w("step's shapes (docs/implementations.md), each timed from FlashAttention-2's CTA tiles: CTAs per SM")
    w("from registers and shared memory, the greedy list schedule of the CTAs over the SMs (wave")
    w("quantisation, the causal tail), per tile the matrix FLOPs at the fitted efficiency, the exponentials")
    w("on the special-function unit and the fp32 softmax work (both from the GPU's specs), partly overlapped;")
    w("then the fp32 merges at HBM bandwidth; each step lasts max(compute, K/V transfer). Fitted, with")
    w("their physical reasons: the matrix units' efficiency forward and backward per GPU (flash-attn 2 runs")
    w("its sm80 `mma.sync` code on H800, far from Hopper's peak); how much of the softmax overlaps the")
    w("matrix work (shared: the same kernel); and the most one point-to-point K/V transfer reaches")
    w("(shared: the same NCCL send/recv).")
    w("")
    w("Fit (all rows):")
    w("")
    for l in rfa_text.splitlines():
        if l.startswith("  "):
            w("    " + l.strip())
        elif l.startswith("in-sample") or l.startswith("90 %") or l.startswith("held-out"):
            w("")
            w(l)
    w("")
    w("Leave-one-group-out (the scores that count; single-GPU rows always stay in the fit and are never")
    w("scored: they are each GPU's kernel measurement). MAPE = mean |predicted / measured - 1|; ratio = a")
    w("layout's throughput over the contiguous ring's on the same configuration:")
    w("")
    w("| held out | group | time MAPE | points | ratio MAPE | ratios |")
    w("|---|---|---|---|---|---|")
    for l in rfa_text.splitlines():
        if l.startswith("leave-one-"):
            by = l.split(":")[0].replace("leave-one-", "").replace("-out", "")
            parts = l.split("time MAPE ")[1]
            t, rest = parts.split("% (")
            npts = rest.split(" ")[0]
            rr = l.split("ratio MAPE ")[1].split("% (")
            w("| by %s | **all** | **%s%%** | %s | **%s%%** | %s |" % (by, t, npts, rr[0], rr[1].split(" ")[0]))
        elif l.startswith("    ") and "time" in l and "ratio" in l:
            g = l.split()
            w("| | %s | %s | %s | %s | %s |" % (g[0], g[2], g[3].strip("()"), g[5], g[6].strip("()")))
    w("")
    w("Targets (issue 15): ratio MAPE <= 10 %, time MAPE <= 15 % per grouping. Where a figure misses, the")
    w("physical reason:")
    w("")
    w("- **Transfers.** The USP rows at 1k and 4k tokens per GPU are bound by the K/V transfer, not the")
    w("  kernel: about 0.5 ms per step for 8.4 MB and 2 ms for 34 MB, i.e. 15-20 GB/s per ring hop, far")
    w("  below NVLink (300 GB/s per direction on A100; nccl-tests' sendrecv reaches 70-80 GB/s between two")
    w("  A100s or H100s, NVIDIA/nccl-tests issues #331 and #268). The fitted point-to-point limit")
    w("  (`p2p_bandwidth_bytes_per_s`) carries it; no other table has rows in that regime, so holding the")
    w("  USP table out leaves the limit to the README's compute-bound rows, which cannot pin it: the")
    w("  leave-one-table-out time and ratio figures for the USP group are the model extrapolating a")
    w("  regime it has never seen.")
    w("- **Replicates disagree.** The USP table measured every ring row twice (qkvpacked and no_packed, the")
    w("  same ring code): the two differ by up to 46 % (8/8/128 contiguous: 7.77 vs 11.33 iter/s) and by")
    w("  20-30 % on the 4k-per-GPU rows, more than the targets allow; one prediction serves both.")
    w("- **Protocol.** In ring-flash-attention's backward dK/dV travel in fp32 on a communicator of their own")
    w("  (`messages.dkv_own_communicator`); where transfers are limited per transfer, not per link, K/V and")
    w("  dK/dV then overlap. Both solvers today send them over one shared hop: the simulator's protocol work")
    w("  (issue 15, item 7) consumes the recorded message facts.")
    w("")
    w("Every row (fitted = the fit to all rows; held out by hardware / table / head configuration):")
    w("")
    w("| table | GPU | layout | pass | heads | batch | tokens | packing | measured | fitted | error | 90 % interval | by GPU | by table | by heads |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rep:
        m, f = float(r["seconds"]), float(r["fitted_s"])
        ho = []
        for k in ("held_out_hardware_s", "held_out_table_s", "held_out_heads_s"):
            ho.append(pct(float(r[k]) / m - 1) if r.get(k) else "fitted (single GPU)")
        interval = "%.3g-%.3g" % (float(r["fitted_s_lo"]), float(r["fitted_s_hi"])) if r.get("fitted_s_lo") else "-"
        w("| %s | %s | %s | %s | %s | %s | %s | %s | %.4g s | %.4g s | %s | %s | %s | %s | %s |" % (
            r["table"], r["hardware"], r["layout"], r["pass"], r["heads"], r["batch"], r["n_seq"], r["packing"],
            m, f, pct(f / m - 1), interval, ho[0], ho[1], ho[2]))
    w("")
    w("Layout throughput ratios (contiguous time / layout time; measured, fitted, held out by table):")
    w("")
    w("| table | GPU | pass | heads | tokens | packing | layout | measured | fitted | by GPU | by table | by heads |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    key = lambda r: (r["table"], r["hardware"], r["pass"], r["heads"], r["batch"], r["n_seq"], r["packing"])
    base = {key(r): r for r in rep if r["layout"] == "contiguous"}
    for r in rep:
        if r["layout"] in ("contiguous", "single") or key(r) not in base:
            continue
        b = base[key(r)]
        meas = float(b["seconds"]) / float(r["seconds"])
        fit = float(b["fitted_s"]) / float(r["fitted_s"])
        cols = []
        for k in ("held_out_hardware_s", "held_out_table_s", "held_out_heads_s"):
            cols.append("%.3f" % (float(b[k]) / float(r[k])) if b.get(k) and r.get(k) else "-")
        w("| %s | %s | %s | %s | %s | %s | %s | %.3f | %.3f | %s | %s | %s |" % (
            r["table"], r["hardware"], r["pass"], r["heads"], r["n_seq"], r["packing"], r["layout"], meas, fit, *cols))
    w("")
    w("Profiles without measurements (derived, marked uncalibrated; `calibrate --derive-from`): ring-flash-attn")
    w("on a100-40gb (from a100-80gb), h100-sxm, h200-sxm and b200 (from h800); te-p2p everywhere (its")
    w("FlashAttention-2 kernel parameters from ring-flash-attn's fits; no te-p2p timings were handed over).")
    w("MI300X runs ring-flash-attention only through ROCm's flash-attention port, whose kernels differ: spec")
    w("defaults, uncalibrated.")
    w("")

    # ---------------------------------------------------------------- SCFA
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
    w("**Speedup over dense causal attention vs the number of buckets** (forward + backward, batch 4, 48 heads")
    w("of dim 64, sort, gathers and scatter included; `ringsim predict --impl scfa --mask hash:K --compare-mask")
    w("causal ...`):")
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
    w("number of buckets (models/attention_cost.cpp, ScfaCost; docs/implementations.md):")
    w("")
    w("- the forward's bucket-range scan: every 128-query tile's program loads every key tile's bucket ids,")
    w("  one tile per loop step, before its first multiply (hsparse_attn.py, `_fwd_kernel`): (n/128)^2 loop")
    w("  steps per head, each waiting on a load;")
    w("- the backward's: one program per (batch, head) scans all query tiles for each of its key tiles, in")
    w("  sequence (`_bwd_kernel`, grid (Z*H,)); its compute also fills only batch x heads of the GPU's slots;")
    w("- the sort by bucket and the gathers and scatter around the kernels.")
    w("")
    w("A loop step is costed at the GPU's `memory_latency_s` (400 ns, an estimate from the 200-800 cycles a")
    w("global load takes; configs/hardware). Only the hash row at 8 buckets was handed over, so the level of")
    w("the plateau is not fitted: it scales with that per-step cost (Triton's two reductions per step, min")
    w("and max over the tile, come on top of the load), and a kernel timing of the backward's scan would pin it.")
    w("")

    # ---------------------------------------------------------------- out of sample
    w("## 4. Predictions for the paper's configurations that are not in the data file")
    w("")
    w("Predictions only (the published values are kept outside the repository and checked independently);")
    w("input data/paper_unmeasured_configs.csv, `ringsim predict --scenarios ... --format csv`. Every row runs")
    w("the paper's code (the file's impl column: %s); TPU v3 uses the profile derived from the TPU v4 fit." % unmeasured[0]["pred_impl"])
    w("")
    w("| hardware | model | mp x sp | n_seq | implementation | pred_tms | pred_speedup | 90 % interval |")
    w("|---|---|---|---|---|---|---|---|")
    for r in unmeasured:
        interval = "%.2f-%.2f" % (float(r["pred_speedup_lo"]), float(r["pred_speedup_hi"])) if r["pred_speedup_lo"] else "- (uncalibrated)"
        w("| %s | %s | %sx%s | %s | %s | %.2f | %.2f | %s |" % (r["hardware"], r["model"], r["mp"], r["sp"], r["n_seq"],
                                                            r["pred_impl"], float(r["pred_tms"]), float(r["pred_speedup"]), interval))


if __name__ == "__main__":
    main()
