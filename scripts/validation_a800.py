"""The A800 cluster's ring calls (UltraAttn's 528 runs, data/a800_ring_times.csv): the path from
components to whole ring calls, scored, then the one thing components cannot tell fitted on them.

The derived a800 profile (the A800 kernel fit through ring-flash-attn/a100-80gb, the A800 link probes
of configs/links/a800.json, the measured H100 VM's host terms) scores them as it is; then the four
host terms of ring-flash-attention's loop (per step and per call, forward and backward) are fitted on
these rows, held out by node count, and written into configs/profiles/ring-flash-attn/a800.json: the
cluster's host (CPU, PyTorch and driver) is not measured by any component file. `overlap` freed as
well is reported, not shipped: ring-flash-attention posts its send/recv before the flash call and
waits after it, so a fitted overlap below 1 stands for a mechanism (NCCL's kernel beside the flash
kernel) that no component here measures. scripts/validation.py calls fit_a800 after the derived
profiles exist and write_a800 inside section 2."""
import json
import os

from validation_fits import DATE, ROOT, TMP, read_csv, ringsim

ROWS = "data/a800_ring_times.csv"
HOST_FREE = "host_step_s,host_call_s,host_bwd_step_s,host_bwd_call_s"
BIG_S = 0.02  # calls of at least 20 ms: the kernels', not the host's, time
KEEP_NOTE = (" Everything else as the derived profile it replaced: kernel curves from ring-flash-attn/a100-80gb"
             " (the A800 kernel fit), links and hardware from configs/links/a800.json and configs/hardware/a800.json;"
             " the host terms are the A800 cluster's (UltraAttn's runs), fitted on its ring calls because no"
             " component file measures that host.")


def fit_a800():
    profile = os.path.join(ROOT, "configs", "profiles", "ring-flash-attn", "a800.json")
    score_csv, fit_csv = os.path.join(TMP, "a800_score.csv"), os.path.join(TMP, "a800_fit.csv")
    out = {"score": ringsim("calibrate", "--from-times", ROWS, "--impl", "ring-flash-attn", "--free", "none",
                            "--base-profiles", "configs/profiles", "--report", score_csv)}
    out["overlap"] = ringsim("calibrate", "--from-times", ROWS, "--impl", "ring-flash-attn", "--free",
                             "overlap," + HOST_FREE, "--holdout", "sp", "--base-profiles", "configs/profiles")
    derived_notes = json.load(open(profile))["provenance"]["notes"]
    out["fit"] = ringsim("calibrate", "--from-times", ROWS, "--impl", "ring-flash-attn", "--free", HOST_FREE,
                         "--holdout", "sp", "--base-profiles", "configs/profiles", "--date", DATE,
                         "--profiles-dir", "configs/profiles", "--report", fit_csv)
    p = json.load(open(profile))
    p["provenance"]["notes"] += KEEP_NOTE
    with open(profile, "w") as f:
        json.dump(p, f, indent=2)
        f.write("\n")
    out["derived_notes"] = derived_notes
    out["score_rows"] = by_nodes(read_csv(score_csv), "fitted_s")
    out["fit_rows"] = by_nodes(read_csv(fit_csv), "held_out_sp_s")
    return out


def by_nodes(rep, column):
    """Per node count (sp / 8): MAPE and mean signed error over all rows and over the >= 20 ms rows."""
    groups = {}
    for r in rep:
        m, p = float(r["seconds"]), float(r[column])
        for key in ((int(r["sp"]) // 8, "all"), (int(r["sp"]) // 8, "big" if m >= BIG_S else "small")):
            groups.setdefault(key, []).append(p / m - 1)
    return {k: (len(v), sum(abs(e) for e in v) / len(v), sum(v) / len(v)) for k, v in groups.items()}


def pct(x):
    return "%.1f%%" % (100 * x)


def lines_of(text):
    return [l.rstrip() for l in text.splitlines() if l.startswith("  ") or l.startswith("leave-") or
            l.startswith("out of sample") or l.startswith("in-sample")]


def write_a800(w, res):
    w("### The A800 cluster's ring calls (UltraAttn, 528 rows, 1 to 8 nodes)")
    w("")
    w("UltraAttn's ring-flash-attention calls on the A800 cluster whose kernels (above) and NCCL probes")
    w("(configs/links/a800.json) are the components of this section: 8 to 64 GPUs (1 to 8 nodes of 8),")
    w("1 and 32 heads of 128, 2k to 512k tokens, causal and full masks, forward and backward apart, one")
    w("replicate table of the 4-node causal runs (data/systems/ultraattn_ring_runs_a800.csv, normalized by")
    w("scripts/normalize-cp-tables.py into %s). **From components alone** (the derived a800 profile:" % ROWS)
    w("the A800 kernel fit, the A800 probes, the H100 VM's host terms), nothing fitted:")
    w("")
    w("    ringsim calibrate --from-times %s --impl ring-flash-attn --free none --base-profiles configs/profiles" % ROWS)
    w("")
    for l in lines_of(res["score"])[:3]:
        w("    " + l)
    w("")
    w_nodes(w, res["score_rows"], "predicted")
    w("The small calls are the host's: a call of a few milliseconds is ring steps of tens of microseconds of")
    w("kernel each, paced by the loop's Python and NCCL calls, and that cluster's host is not the measured")
    w("VM's. **The host terms fitted on these rows** (per step and per call, forward and backward: what no")
    w("component file measures for this cluster), held out one node count at a time, written into")
    w("configs/profiles/ring-flash-attn/a800.json:")
    w("")
    w("    ringsim calibrate --from-times %s --impl ring-flash-attn --free %s --holdout sp \\" % (ROWS, HOST_FREE))
    w("        --base-profiles configs/profiles --profiles-dir configs/profiles")
    w("")
    for l in lines_of(res["fit"]):
        w("    " + l)
    w("")
    w_nodes(w, res["fit_rows"], "held out by node count")
    w("`overlap` freed with them (not shipped; ring-flash-attention overlaps the transfer by construction):")
    w("")
    for l in lines_of(res["overlap"])[:7]:
        w("    " + l)
    w("")
    w("What is left: the calls of at least 20 ms are predicted 9-17 % too fast (mean signed error above),")
    w("more across nodes than within one; the bars (10 % within a node, 15 % across nodes) are not met, and")
    w("the overlap fit closes little of it. NCCL's send/receive kernel beside the flash kernel is modelled")
    w("(docs/transport.md: 16 of an A800's 108 SMs while a transfer runs inside one node) and accounts for")
    w("about 1.5 points of the single node's bias; a communicator that reaches another node holds 2 SMs, so")
    w("it is not what slows the multi-node calls. No component file here times those calls' transfers as")
    w("the ring runs them (a GPU's last rank sending to the next node's first, on another NIC rail); the")
    w("probes time pairs i <-> i + 8, each on its own rail.")
    w("")


def w_nodes(w, groups, what):
    w("| nodes | rows | time MAPE (%s) | mean signed | calls >= 20 ms | MAPE | mean signed |" % what)
    w("|---|---|---|---|---|---|---|")
    for nodes in sorted({k[0] for k in groups}):
        n, m, b = groups[(nodes, "all")]
        big = groups.get((nodes, "big"))
        w("| %d | %d | %s | %+.1f%% | %s | %s | %s |" % (
            nodes, n, pct(m), 100 * b, big[0] if big else 0, pct(big[1]) if big else "-",
            "%+.1f%%" % (100 * big[2]) if big else "-"))
    w("")


def write_transport_changes(w):
    """The NVLink-only outputs the transport (docs/transport.md) changed against the per-hop model it
    replaced (commit 2a0138b): measured once with both binaries, kept here as the record the issue asks for."""
    w("### What the transport changed on NVLink-only scenarios")
    w("")
    w("Against the per-hop model it replaced (commit 2a0138b, the same configs), `ringsim predict` on NVSwitch")
    w("machines changes only where a rule of docs/transport.md applies: collectives as NCCL runs them, and NCCL's")
    w("kernel beside every GPU-bound ring step. Ulysses inside a node and the data-parallel gradient")
    w("synchronisation of these cases come out the same:")
    w("")
    w("| scenario | rule | step before | step after |")
    w("|---|---|---|---|")
    w("| h100-sxm llama3-8b, mesh 16x1 over nodes:2x8, 32k tokens | TP all-reduce across nodes over the 8 NIC rails (NCCL's ring channels), not one link | 2.095 s | 0.677 s |")
    w("| a100-80gb llama3-8b, te-all-gather, all-gather CP 1x8, 128k | the all-gather as NCCL's ring with its latency constants | 13.853 s | 13.880 s |")
    w("| h100-sxm llama3-8b, ring-flash-attn zigzag 1x8, 128k | NCCL's kernel beside each step (32 of 132 SMs while K/V moves) | 7.882 s | 7.923 s |")
    w("| h100-sxm llama3-8b, ring-flash-attn zigzag 1x16 over nodes:2x8, 256k | the same, 2 SMs (the group reaches another node) | 14.519 s | 14.568 s |")
    w("| a100-80gb ringattn-3b 2x4, 256k, full recomputation (the README's run): contiguous / striped | NCCL's kernel beside each step (32 of 108 SMs) | 73.77 / 44.97 s | 73.95 / 45.16 s |")
    w("| h100-sxm llama3-8b, usp:2x8 over nodes:2x8, 256k, striped | both rules: the ring steps and the all-to-alls | 14.153 s | 14.176 s |")
    w("| USP T1 hybrid rows 4 x 2 (this page, section 2), e.g. 32/32/32 basic no_packed at 128k | the all-to-all of 4 ranks priced by the fluid with NCCL's latency, and the ring's steps as above | 0.1341 s | 0.1348 s |")
    w("")
    w("(`ringsim predict --hardware HW --model MODEL --mesh MESH --seq N [--topology nodes:2x8] [--impl IMPL --cp CP]")
    w("--layout L`, with each binary.)")
    w("")
