"""Section 2 of docs/validation.md: the component fits (link probes, kernel curves, host terms), the
ring-level tables they predict with every held-out grouping, the derived profiles' cost, and USP's
Ulysses and hybrid rows. scripts/validation.py calls write_flash with what validation_fits computed."""
import os
import re

import fit_collective_host as collective_host
import t1_consistency as consistency
from validation_fits import (CUDNN, FA3_CHART, FLASH_IMPLS, FLASH_KEEP, FLASH_KEEP_CYCLES, HOST, KERNELS,
                             KERNEL_MIN_S, KERNEL_ONLY, KERNEL_ONLY_FA2_FREE, KERNEL_ONLY_FREE, PROBES,
                             PROBE_GPUS, TMP, covered, mape, pct, read_csv)


def score_table(w, text, head, head_row, group, group_row):
    """Rows of a markdown table from calibrate's score lines: `head` starts a summary line ("... time
    MAPE x% (n points), ratio MAPE y% (m ratios)"), `group` matches an indented group name."""
    for l in text.splitlines():
        m = re.match(head + r" ([\d.]+)% \((\d+) points\), ratio MAPE ([\d.]+)% \((\d+) ratios\)", l)
        if m:
            w(head_row % m.groups())
        g = re.match(r"^\s+" + group + r"\s+time\s+([\d.]+)% \(\s*(\d+)\), ratio\s+([\d.]+)% \(\s*(\d+)\)", l)
        if g:
            w(group_row % g.groups())


def component_lines(text):
    """The parameter and held-out lines of a `calibrate --from-kernels` or `--from-probes` output."""
    return [l.rstrip() for l in text.splitlines()[1:] if l.strip()]


def write_fit(w, commands, text):
    """A component fit on the page: its command lines, then its parameter and held-out lines."""
    for c in commands:
        w("    " + c)
    w("")
    for l in component_lines(text):
        w("    " + l)
    w("")


def config_key(r):
    """A ring-table row's configuration without its layout: the rows a layout ratio compares."""
    return (r["table"], r["hardware"], r["impl"], r["cp"], r["pass"], r["heads"], r["batch"], r["n_seq"], r["packing"])


def without_mid(rep):
    """Time and layout-ratio MAPE of the ring-table rows (component predictions, nothing fitted) with
    USP T1's 4k-tokens-per-GPU group left out: (time %, rows, ratio %, ratios)."""
    keep = [r for r in rep if r["layout"] != "single" and not (r["table"] == "usp-t1" and r["n_seq"] == "32768")]
    time, rows = mape((float(r["fitted_s"]), float(r["seconds"])) for r in keep)
    base = {config_key(r): r for r in keep if r["layout"] == "contiguous"}
    ratios = [(float(base[config_key(r)]["fitted_s"]) / float(r["fitted_s"]),
               float(base[config_key(r)]["seconds"]) / float(r["seconds"]))
              for r in keep if r["layout"] != "contiguous" and config_key(r) in base]
    ratio, n = mape(ratios)
    return "%.1f%%" % time, rows, "%.1f%%" % ratio, n


def write_flash(w, comps, text, t1, vl):
    rep = read_csv(os.path.join(TMP, "flash.csv"))
    w("## 2. FlashAttention-2 ring libraries on GPUs (`ring-flash-attn`, `usp`): components, then systems")
    w("")
    w("The profiles of this section are **calibrated on components only** (kernels and links measured, systems")
    w("predicted); the ring tables score them and fit nothing. Data: data/components/ (its README gives each")
    w("file's source; docs/components.md describes both models and every fit).")
    w("")
    w("**Links** (configs/links/HARDWARE.json; a ring hop of a probed type takes the probe's latency and")
    w("bandwidth, others the link spec at `link_efficiency`; no profile caps a transfer):")
    w("")
    write_fit(w, ["ringsim calibrate --from-probes %s --as %s --links-dir configs/links" % (PROBES, PROBE_GPUS)],
              comps["links"])
    w("**Kernel curves** (the flash family's parameters per GPU, fitted on single-kernel timings only,")
    w("held out by shape group). A100 80GB: the A800 kernel profile (the same GA100 die, SMs and clocks) on the")
    w("A100 chart's fit, which alone has two head dims and so tells the softmax overlap; H800: its kernel")
    w("profile on the H100 charts' fit (the same GH100 die):")
    w("")
    w("    ringsim calibrate --from-kernels %s/flash_fa2_a100.csv --as A100=a100-80gb --profiles-dir KB" % KERNELS)
    w("    ringsim calibrate --from-kernels %s/flash_fa2_h100.csv,%s/flash_fa3_h100.csv --as H100=h800 --profiles-dir KB"
      % (KERNELS, KERNELS))
    w("    ringsim calibrate --from-kernels %s/ultraattn_fa2_a800_h800.csv --as A800=a100-80gb \\" % KERNELS)
    w("        --profile KB/ring-flash-attn/a100-80gb.json --profiles-dir KFIT")
    w("    ringsim calibrate --from-kernels %s/ultraattn_fa2_a800_h800.csv --as H800=h800 \\" % KERNELS)
    w("        --profile KB/ring-flash-attn/h800.json --profiles-dir KFIT")
    w("")
    for key in ("a100-chart", "h100-charts", "A800", "H800"):
        w("%s:" % key)
        w("")
        for l in component_lines(comps[key]):
            w("    " + l)
        w("")
    w("H100 SXM (this project's measurement: PyTorch 2.11's vendored FlashAttention-2 kernels, data/components/")
    w("kernels/h100_sdpa_flash.csv, docs/gpu-campaign.md). It has no ring rows, so its ring-flash-attn and usp")
    w("profiles are this fit with the host terms below, and their 90 % interval is the ring-level spread the")
    w("same method measured on a100-80gb and h800 (below); H100 PCIe, H200 and B200 derive from it. Each call")
    w("was timed alone from Python, so each pays PyTorch's dispatch before its kernel starts: fitted as a")
    w("per-call constant over all 152 rows (the --free list below and `kernel_launch_s`) it comes to 42.6 us")
    w("(fwd 5.6 %, bwd 5.8 % held out), where the H800's")
    w("kernel profile puts a launch at 4.5 us. A ring's back-to-back calls do not pay it, so the fit keeps")
    w("the calls of at least 0.5 ms (where it is under 8 %); what they cannot tell, the launch and a lone")
    w("CTA's gain (`kernel_launch_s`, `solo_cta_gain`), comes from the H800's kernel profile (the same die).")
    w("Its backward rows span head dims 32 to 256, whose tiles move 1.35 x apart in shared-memory bytes per FLOP,")
    w("so they also tell the backward's shared-memory rate (`bwd_shared_memory_efficiency`, docs/components.md),")
    w("and its forward tiles 2 x apart (head dim 32's 128 x 128 against 256's 64 x 64, the tile the launch code")
    w("picks where an SM holds two of them) tell the forward's (`shared_memory_efficiency`) instead of the H800's;")
    w("the A800, H800 and chart rows (one head dim, or backward tiles 64 to 256 at 1.17 x) cannot tell the")
    w("backward's, which keeps the forward's rate there:")
    w("")
    w("    ringsim calibrate --from-kernels %s/h100_sdpa_flash.csv --as \"NVIDIA H100=h100-sxm\" \\" % KERNELS)
    w("        --profile KFIT/ring-flash-attn/h800.json --min-seconds %s --free %s --profiles-dir KFIT"
      % (KERNEL_MIN_S, KERNEL_ONLY_FA2_FREE))
    w("")
    for hw in KERNEL_ONLY:
        for l in component_lines(comps[hw]):
            w("    " + l)
    w("")
    w("**The Hopper kernels** (configs/kernels/cudnn-fused.json, flash-attn-3.json). TransformerEngine's")
    w("libraries call cuDNN's fused attention from compute capability 9.0 (`kernel_model_from_compute_capability`,")
    w("from TE's get_attention_backend), so their Hopper profiles are the cuDNN kernel's fit on this project's")
    w("H100 measurement (PyTorch SDPA's cuDNN backend: the sm90 wgmma kernels TE's FusedAttention runs; the same")
    w("0.5 ms floor), from spec defaults; the H800, H100 PCIe, H200 and B200 derive from it. No te-* ring rows")
    w("exist, so their interval is the ring-level spread measured on a100-80gb and h800:")
    w("")
    write_fit(w, ["ringsim calibrate --from-kernels %s/%s --impl te-p2p --as \"%s=%s\" \\" % (KERNELS, CUDNN[0], CUDNN[1], CUDNN[2]),
                  "    --min-seconds %s --free %s --profiles-dir KFIT" % (KERNEL_MIN_S, KERNEL_ONLY_FREE)], comps["cudnn"])
    w("FlashAttention-3's forward on its chart: what the serving stack `cp-serve` calls on Hopper for prefill")
    w("and decode (docs/inference.md); no training library here calls it by default:")
    w("")
    write_fit(w, ["ringsim calibrate --from-kernels %s/%s --method FlashAttention-3 --impl cp-serve --as H100=h100-sxm \\"
                  % (KERNELS, FA3_CHART), "    --profiles-dir KFIT"], comps["fa3"])
    w("**The systems, predicted.** Data: ring-flash-attention's README table (8 x A100 and 8 x H800, forward")
    w("and forward + backward, with the single-GPU flash_attn call; implementation `ring-flash-attn`) and the")
    w("ring-only rows (Ulysses degree 1) of YunChang/USP's table T1 (8 x A100 NVLink, forward, head shapes 2/2/32")
    w("to 64/8/32 and 8/8/128, 1k to 16k tokens per GPU; implementation `usp`, strategy `usp:1x8`, whose ring")
    w("is ring-flash-attention's code). `scripts/normalize-cp-tables.py` turns them into")
    w("data/cp_attention_times.csv (seconds per call). The README's \"8xA100\" is taken as A100 80GB SXM (the")
    w("USP table's GPU). The two libraries call the same kernel, so the kernel fit of a GPU serves both. Nothing")
    w("is fitted on these rows (`--free none`): every figure below is out of sample. The")
    w("transfer overlaps the compute (`overlap` 1): ring-flash-attention posts the step's send/recv before its")
    w("flash call and waits after it (zhuzilin/ring-flash-attention@0fc25b4 ring_flash_attn/ring_flash_attn.py,")
    w("`ring_flash_attn_forward`: `comm.send_recv`, `comm.commit()`, `_flash_attn_forward`, `comm.wait()`).")
    w("")
    w("    ringsim calibrate --from-times data/cp_attention_times.csv --impl %s --free none \\" % FLASH_IMPLS)
    w("        --keep %s,%s --base-profiles KFIT --profiles-dir configs/profiles" % (FLASH_KEEP, FLASH_KEEP_CYCLES))
    w("")
    w("Model (models/families/kernel_time.hpp, attention family `flash`): per ring step the library's calls on the")
    w("step's shapes (configs/ring_steps/ring-flash-attn.json, docs/implementations.md), each timed from")
    w("FlashAttention-2's CTA tiles (configs/kernels/flash-attn-2.json): CTAs per SM from registers and shared")
    w("memory, the greedy list schedule of the CTAs over the SMs (wave quantisation, the causal tail), per")
    w("tile the matrix FLOPs at the kernel-fitted efficiency, the exponentials on the special-function unit and")
    w("the fp32 softmax work (both from the GPU's specs), partly overlapped; then the fp32 merges at HBM")
    w("bandwidth; each step lasts max(compute, K/V transfer over the probed hop), and at least the host's")
    w("time to issue it.")
    w("")
    w("**The host's time per step** (`host_step_s`, `host_call_s` and the backward's pair): a step lasts at")
    w("least the host's time for the loop and the communicator plus, per attention call, the call and its")
    w("merge. Measured on ring-flash-attention's step loop at 128 tokens per rank, where the kernels take tens")
    w("of microseconds (data/components/host/, from the H100 campaign: that VM's Xeon host, PyTorch 2.11), and")
    w("written into both GPUs' profiles: their own hosts are unmeasured, so these are the measured host's:")
    w("")
    w("    ringsim calibrate --from-host-steps %s --impl ring-flash-attn --hardware HW \\" % HOST)
    w("        --profile KFIT/ring-flash-attn/HW.json -o KFIT/ring-flash-attn/HW.json")
    w("")
    for l in component_lines(comps["host"]):
        w("    " + l)
    w("")
    w("A contiguous ring's ranks make 1 to 8 calls in 8 steps, which tells the step's term from the call's;")
    w("zigzag and stripe call once every step, so without the contiguous runs the two are not identified.")
    w("")
    w("**USP's collective calls.** USP wraps its attention in four all-to-alls forward (Q, K, V, out) and four")
    w("backward (`SeqAllToAll4D` -> `all_to_all_4D`, yunchang/comm/all_to_all.py at")
    w("feifeibear/long-context-attention@b93c30e, the same function both ways and at a Ulysses degree of 1 too):")
    w("reshapes, two transposing copies, and one NCCL call that enqueues a send and a receive per peer and")
    w("starts when the group's last rank has issued it. A call lasts at least `host_collective_s` +")
    w("(g - 1) x `host_collective_peer_s`. No component data time it (the host CSV above is the ring's loop), so")
    w("the two terms are fitted on the rows of USP's table T1 where they are the only unknown: the no_packed rows")
    w("up to 8192 tokens, all four splits, whose all-to-alls move at most 4 MB per call (tens of microseconds on")
    w("NVLink) while the calls take 3-6 ms. The qkvpacked rows are left out: their class packs Q, K and V into")
    w("one call (`LongContextAttentionQKVPacked`), which the program does not model. Written into every usp")
    w("profile (the host's, not the GPU's):")
    w("")
    w("    python3 scripts/fit_collective_host.py build/cli/ringsim")
    w("")
    for l in comps["collective-host"][2]:
        w("    " + l)
    w("")
    w("The per-peer term is identified (the splits send to 1, 3 and 7 peers); the per-call term is not (its")
    w("standard error is most of its value). Held out by length the fit holds (512 from 8192 and back); held")
    w("out by split it must extrapolate the per-peer line past the splits it saw, and misses by 24-60 % at the")
    w("ends (Ulysses degree 8 from 1, 2 and 4): what a user's own trace of an all-to-all would settle")
    w("(docs/traces.md).")
    w("")
    for l in text.splitlines():
        if l.startswith("out of sample") or l.startswith("90 % intervals around") or l.startswith("held-out"):
            w(l)
            w("")
    w("**Scores by group** (MAPE = mean |predicted / measured - 1|; ratio = a layout's throughput over the")
    w("contiguous ring's on the same configuration; the single-GPU rows are scored in the row table only). With")
    w("nothing fitted the three groupings hold the same predictions; they say where the error sits. The")
    w("coverage line of each grouping judges 90 % intervals whose spread comes from the other groups only:")
    w("")
    w("| grouping | group | time MAPE | points | ratio MAPE | ratios |")
    w("|---|---|---|---|---|---|")
    score_table(w, text, r"leave-one-(\w+)-out: time MAPE", "| by %s | **all** | **%s%%** | %s | **%s%%** | %s |",
                r"(\S+)", "| | %s | %s%% | %s | %s%% | %s |")
    w("")
    by = None
    for l in text.splitlines():
        m = re.match(r"leave-one-(\w+)-out", l)
        by = m.group(1) if m else by
        if "spread of the other groups only" in l:
            w("- by %s: %s" % (by, l.strip()))
    w("")
    w("**Derived profiles** (every GPU and library below without kernel measurements of its own copies the")
    w("kernel parameters of a component-fitted GPU, `calibrate --derive-from`). What that copying costs is")
    w("measured where both exist: each GPU's ring rows predicted with the other GPU's kernel parameters. A")
    w("derived profile's 90 % interval uses that spread (`time_derived`, `ratio_derived` in the source")
    w("profile's uncertainty):")
    w("")
    w("| derived | time MAPE | points | ratio MAPE | ratios |")
    w("|---|---|---|---|---|")
    score_table(w, text, r"derived from another GPU's fit .*: time MAPE", "| **all** | **%s%%** | %s | **%s%%** | %s |",
                r"(\S+ from \S+)", "| %s | %s%% | %s | %s%% | %s |")
    for l in text.splitlines():
        if l.startswith("derived from another GPU's fit") or l.startswith("90 % intervals of derived"):
            w("")
            w(l)
    w("")
    w("Where the components fall short, from the rows below:")
    w("")
    err = lambda r: float(r["fitted_s"]) / float(r["seconds"]) - 1
    rings = [err(r) for r in rep if r["table"] == "ringflash-readme" and r["layout"] != "single"]
    sliced = [err(r) for r in rep if r["table"] == "ringflash-readme" and r["layout"] in ("zigzag", "striped")]
    w("- **README rows** (head dim 128, 8k tokens per GPU): the single-GPU calls land within a few per cent;")
    w("  the rings come out %s to %s. The sliced merges' cost is measured, not assumed: ranks 2 and up run" % (pct(min(rings)), pct(max(rings))))
    w("  them unfused (TorchScript's specialisation, measured on an H100 one process per rank:")
    w("  docs/gpu-campaign.md); with that cost zigzag and striped come out %s to %s. The kernel model is" % (pct(min(sliced)), pct(max(sliced))))
    w("  not what misses: the H800 kernel profile's 32-head calls of the same shapes (8192 x 8192, 8192 x 4096,")
    w("  4096 x 8192) are predicted within 3 %. Fitting `overlap` on these rows drives it to 0 (a fully")
    w("  exposed transfer), which the code contradicts (it posts the transfer first), so it is not fitted.")
    short = [err(r) for r in rep if r["table"] == "usp-t1" and r["n_seq"] == "8192"]
    mid = [err(r) for r in rep if r["table"] == "usp-t1" and r["n_seq"] == "32768"]
    w("- **USP T1, 1k tokens per GPU**: host-bound. Measured 0.5-0.73 ms per ring step; the measured host's")
    w("  loop takes 0.73 ms per step with a call, and USP's four all-to-all calls around the ring (groups of")
    w("  one) about 0.09 ms each (fitted below), so these rows come out %s to %s (USP's host was faster than" % (pct(min(short)), pct(max(short))))
    w("  the campaign's VM; without host terms they were 75-83 % fast).")
    w("- **USP T1, 4k tokens per GPU**: predicted %s to %s. Measured 2-2.5 ms per step for 34 MB, i.e. 15-17" % (pct(min(mid)), pct(max(mid))))
    w("  GB/s per hop, where the probed NVLink ring of an 8 x A100 node moves 213 GB/s. A hop staged through")
    w("  host memory would explain these ring rows alone (docs/components.md), but not the same table's")
    w("  Ulysses-only rows: their all-to-alls are NCCL's grouped sends and receives, the ring's transport.")
    w("  Bounds from the table, the A100 link probes and the A800 kernel profile only, nothing modelled")
    w("  beyond a call lasting at least its transfers plus its kernel and at most those plus the 8K call")
    w("  (`python3 scripts/t1_consistency.py`):")
    w("")
    for line in consistency.report_lines():
        w("      " + line)
    w("")
    w("  Under the probed NVLink the 32K kernel would run at two thirds of its 128K rate or less (under half")
    w("  for the no_packed calls and the ring), where the A800 profile's causal 32-head calls (first line)")
    w("  move by a few per cent between those lengths; under any transport whose time per byte does not fall")
    w("  with size, the no_packed Ulysses calls would need a head-dim-32 kernel faster than FlashAttention-2's")
    w("  best forward on this die at head dim 128. No transport explains the 32K rows with")
    w("  the 8K and 128K rows: they carry a cost the table does not record, which no component can predict;")
    w("  nothing is fitted to it, and the catalog keeps the probed NVLink hop. Scored without that group's %d" % len(mid))
    w("  ring rows, the two tables come to %s time MAPE over %d rows and %s layout-ratio MAPE over %d ratios" % without_mid(rep))
    w("  (with them: the table above); the bullets below say where the rest sits.")
    w("- **USP T1, head dim 32**: no kernel data cover head dim 32 (the charts have 64 and 128, the kernel")
    few = [err(r) for r in rep if r["table"] == "usp-t1" and r["n_seq"] == "131072" and r["heads"] in ("2/2/32", "4/4/32", "8/8/32")]
    w("  profile 128); its softmax share comes from the A100 chart's one `softmax_overlap`, and the 16k-token")
    w("  rows with few heads (2 to 8) come out %s to %s." % (pct(min(few)), pct(max(few))))
    w("- **Replicates disagree.** T1 measured every ring row twice (qkvpacked and no_packed, the same ring")
    w("  code): the two differ by up to 46 % (8/8/128 contiguous: 7.77 vs 11.33 iter/s) and by 20-30 % on")
    w("  the 4k-per-GPU rows; one prediction serves both, so the pairs alone put a floor of %.1f %% under" % consistency.replicate_floor())
    w("  any prediction's time MAPE over T1's ring rows (each pair's best single value, the faster or the slower).")
    w("")
    w("Every row (predicted = from the component profiles; the three held-out columns are the same")
    w("predictions, nothing being fitted):")
    w("")
    w("| table | GPU | impl | layout | pass | heads | batch | tokens | packing | measured | predicted | error | 90 % interval | by GPU | by table | by heads |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    inside, scored = 0, 0
    half_widths = []  # each scored interval's half width relative to its prediction
    for r in rep:
        m, f = float(r["seconds"]), float(r["fitted_s"])
        ho = []
        for k in ("held_out_hardware_s", "held_out_table_s", "held_out_heads_s"):
            ho.append(pct(float(r[k]) / m - 1) if r.get(k) else "- (single GPU)")
            if r.get(k) and r.get("fitted_s_lo"):
                scored += 1
                inside += covered(m, float(r["fitted_s_lo"]) * float(r[k]) / f, float(r["fitted_s_hi"]) * float(r[k]) / f)
                half_widths.append((float(r["fitted_s_hi"]) - float(r["fitted_s_lo"])) / (2 * f))
        interval = "%.3g-%.3g" % (float(r["fitted_s_lo"]), float(r["fitted_s_hi"])) if r.get("fitted_s_lo") else "-"
        w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.4g s | %.4g s | %s | %s | %s | %s | %s |" % (
            r["table"], r["hardware"], r["impl"], r["layout"], r["pass"], r["heads"], r["batch"], r["n_seq"],
            r["packing"], m, f, pct(f / m - 1), interval, ho[0], ho[1], ho[2]))
    w("")
    w("Interval coverage: the profile's 90 %% interval around each prediction covers %d of %d"
      % (inside, scored))
    half_widths.sort()
    median = half_widths[len(half_widths) // 2] if len(half_widths) % 2 else \
        0.5 * (half_widths[len(half_widths) // 2 - 1] + half_widths[len(half_widths) // 2]) if half_widths else 0.0
    w("leave-one-group-out points (%.1f %%; target >= 85 %%), with a median half width of %.0f %% of the"
      % (100.0 * inside / max(1, scored), 100.0 * median))
    w("prediction (target <= 25 %: the two together say whether an interval can separate plans).")
    w("")
    w("Layout throughput ratios (contiguous time / layout time; measured, predicted, held out):")
    w("")
    w("| table | GPU | pass | heads | tokens | packing | layout | measured | predicted | by GPU | by table | by heads |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    base = {config_key(r): r for r in rep if r["layout"] == "contiguous"}
    for r in rep:
        if r["layout"] in ("contiguous", "single") or config_key(r) not in base:
            continue
        b = base[config_key(r)]
        cols = []
        for k in ("held_out_hardware_s", "held_out_table_s", "held_out_heads_s"):
            cols.append("%.3f" % (float(b[k]) / float(r[k])) if b.get(k) and r.get(k) else "-")
        w("| %s | %s | %s | %s | %s | %s | %s | %.3f | %.3f | %s | %s | %s |" % (
            r["table"], r["hardware"], r["pass"], r["heads"], r["n_seq"], r["packing"], r["layout"],
            float(b["seconds"]) / float(r["seconds"]), float(b["fitted_s"]) / float(r["fitted_s"]), *cols))
    w("")
    w("### USP's Ulysses and hybrid rows (T1)")
    w("")
    w("The same table's Ulysses-only (ring degree 1) and hybrid rows, predicted with the usp profile of the")
    w("components above (`ringsim predict --impl usp --cp usp:UxR --format json`, the forward")
    w("attention of one call; interval: the step's relative 90 % interval). The ring method does not matter")
    w("without a ring (the Ulysses-only rows differ only by measurement). The no_packed rows up to 8192 tokens")
    w("fitted USP's host time per collective call (above; their held-out scores are there): the scores below")
    w("leave them and their configurations out, every row they count is out of sample.")
    w("")
    # The rows that fitted USP's collective host time are scored by their held-out fits (above), not here.
    fitted_row = lambda x: x["packing"] == "no_packed" and x["n"] <= collective_host.MAX_SEQ
    t1_all, t1 = t1, [x for x in t1 if not fitted_row(x)]
    groups = {}
    for x in t1:
        groups.setdefault(("ulysses" if x["r"] == 1 else "hybrid" if x["u"] > 1 else "ring (scored above)"), []).append(x)
    w("| rows | time MAPE | points | 90 % interval covers |")
    w("|---|---|---|---|")
    for g in ("ulysses", "hybrid", "ring (scored above)"):
        xs = groups.get(g, [])
        if not xs:
            continue
        mp, n = mape([(x["predicted"], x["measured"]) for x in xs])
        cov = [covered(x["measured"], x["predicted"] * x["rel"][0], x["predicted"] * x["rel"][1]) for x in xs if x["rel"]]
        w("| %s | %.1f%% | %d | %s |" % (g, mp, n, "%d of %d" % (sum(cov), len(cov)) if cov else "-"))
    w("")
    # Ratios to the ring-only split of the same configuration (same length, heads, method, packing).
    ring_only = {(x["n"], x["heads"], x["method"], x["packing"]): x for x in t1 if x["u"] == 1}
    ratio_err = {"ulysses": [], "hybrid": []}
    hits, near, total = 0, 0, 0
    by_cfg = {}
    for x in t1:
        by_cfg.setdefault((x["n"], x["heads"], x["method"], x["packing"]), []).append(x)
    for cfg, xs in by_cfg.items():
        b = ring_only.get(cfg)
        if b is None or len(xs) < 2:
            continue
        total += 1
        best, pick = min(xs, key=lambda x: x["measured"]), min(xs, key=lambda x: x["predicted"])
        hits += best is pick
        near += pick["measured"] <= 1.05 * best["measured"]
        for x in xs:
            if x["u"] == 1:
                continue
            m, p = b["measured"] / x["measured"], b["predicted"] / x["predicted"]
            ratio_err["ulysses" if x["r"] == 1 else "hybrid"].append(abs(p / m - 1))
    for k, v in ratio_err.items():
        if v:
            w("- %s rows: throughput over the ring-only split of the same configuration, MAPE %.1f%% over %d rows" %
              (k, 100 * sum(v) / len(v), len(v)))
    w("- the fastest split of a configuration predicted in %d of %d configurations; the split predicted fastest"
      % (hits, total))
    w("  measures within 5 %% of the fastest in %d of %d (in many configurations the splits measure within a few"
      % (near, total))
    w("  per cent of each other: at 128k tokens the Ulysses-only and 2 x 4 splits differ by under 2 %)")
    w("")
    long_u = [x["predicted"] / x["measured"] - 1 for x in t1 if x["r"] == 1 and x["n"] >= 131072]
    w("What the Ulysses rows show: up to 8k tokens the measured forward takes 3-3.5 ms whatever the split")
    w("(no_packed): the host's four all-to-all calls and its ring loop, and the benchmark's")
    w("`torch.cuda.synchronize()` after every call. The qkvpacked rows, two calls by their code, scatter from")
    w("1.8 to 5.3 ms between configurations that run the same code (512 tokens, Ulysses only): there the")
    w("choice of split is within the measurement's own noise.")
    w("At 128k tokens the single full-sequence call is predicted %s to %s. The" %
      (pct(min(long_u)), pct(max(long_u))))
    w("all-to-alls run at the links' share of the spec NVLink bandwidth (no probe measures an all-to-all);")
    w("the ring hops of the hybrid rows take the probed point-to-point hop. The hybrid rows sit between the two.")
    w("")
    w("Every row (fitted: the row fitted USP's collective host time, its error in sample):")
    w("")
    w("| n_seq | heads | method | packing | ring x Ulysses | measured | predicted | error | 90 % interval |")
    w("|---|---|---|---|---|---|---|---|---|")
    for x in sorted(t1_all, key=lambda x: (x["n"], x["heads"], x["method"], x["packing"], -x["r"])):
        if x["u"] == 1:
            continue
        iv = "%.3g-%.3g s" % (x["predicted"] * x["rel"][0], x["predicted"] * x["rel"][1]) if x["rel"] else "-"
        w("| %d | %s | %s | %s | %d x %d | %.4g s | %.4g s | %s%s | %s |" % (
            x["n"], x["heads"], x["method"], x["packing"], x["r"], x["u"], x["measured"], x["predicted"],
            pct(x["predicted"] / x["measured"] - 1), " (fitted)" if fitted_row(x) else "", iv))
    w("")
    pred, rows = vl
    w("### Out of sample: ring-flash-attention's varlen table (packed documents, 8 x A100, not fitted)")
    w("")
    w("data/ringflash_readme_varlen.csv: the ring and zigzag varlen functions (`ring-flash-attn`, contiguous")
    w("and doc-zigzag layouts over `--docs`, one varlen call per step timed from the block's tiles) and the")
    w("llama3 all-gather (`rfa-llama3`), cycling four packings of 65536 tokens; throughput ratios:")
    w("")
    w("| pass | measured llama3 / zigzag | predicted | measured llama3 / ring | predicted | measured zigzag / ring | predicted |")
    w("|---|---|---|---|---|---|---|")
    for r in rows:
        i = 0 if r["pass"] == "fwd" else 1
        mz, mr = float(r["llama3"]) / float(r["zigzag"]), float(r["llama3"]) / float(r["ring"])
        pz, pr = pred["llama3"][i] / pred["zigzag"][i], pred["llama3"][i] / pred["ring"][i]
        mzr, pzr = float(r["zigzag"]) / float(r["ring"]), pred["zigzag"][i] / pred["ring"][i]
        w("| %s | %.2f | %.2f (%s) | %.2f | %.2f (%s) | %.2f | %.2f (%s) |" % (
            r["pass"], mz, pz, pct(pz / mz - 1), mr, pr, pct(pr / mr - 1), mzr, pzr, pct(pzr / mzr - 1)))
    w("")
