"""The A800 cluster's ring calls (UltraAttn's 528 runs, data/a800_ring_times.csv): the path from
components to whole ring calls, scored, then the one thing components cannot tell fitted on them.

The calls ran UltraAttn's copy of ring-flash-attention (configs/implementations/ultraattn-ring.json:
eager merges, a no-op zigzag forward merge, K and V as separate messages), so its profile
(configs/profiles/ultraattn-ring/a800.json) starts as the derived ring-flash-attn/a800 one (the A800 kernel
fit through ring-flash-attn/a100-80gb, the A800 link probes of configs/links/a800.json, the measured H100
VM's host terms) and is scored as it is; then the host terms of the loop (per step, per call and per
counted eager operation forward; per step and per call backward) are fitted on these rows, held out by
node count, and written into it: the cluster's host (CPU, PyTorch and driver) is not measured by any
component file. `overlap` freed as well is reported, not shipped: the loop posts its send/recv before the
flash call and waits after it, so a fitted overlap below 1 stands for a mechanism (NCCL's kernel beside
the flash kernel) that no component here measures. scripts/validation.py calls fit_a800 after the derived
profiles exist and write_a800 inside section 2."""
import json
import math
import os

from validation_fits import DATE, FLASH_KEEP, FLASH_KEEP_CYCLES, HOST_KEEP, ROOT, TMP, derive, read_csv, ringsim

ROWS = "data/a800_ring_times.csv"
IMPL = "ultraattn-ring"
HOST_FREE = "host_step_s,host_call_s,host_op_s,host_bwd_step_s,host_bwd_call_s"
NO_OPS_FREE = "host_step_s,host_call_s,host_bwd_step_s,host_bwd_call_s"
BIG_S = 0.02  # calls of at least 20 ms: the kernels', not the host's, time
KEEP_NOTE = (" Everything else as ring-flash-attn/a800 (derived): kernel curves from ring-flash-attn/a100-80gb"
             " (the A800 kernel fit), links and hardware from configs/links/a800.json and configs/hardware/a800.json;"
             " the host terms are the A800 cluster's (UltraAttn's runs), fitted on its ring calls because no"
             " component file measures that host.")
DERIVE_NOTE = ("UltraAttn's copy of ring-flash-attention calls the same FlashAttention-2 kernels (v2.5.7) as"
               " ring-flash-attn/a800, whose kernel curves and host terms it starts from; its merges and messages"
               " are its own (configs/ring_steps/ultraattn-ring.json).")


def fit_a800():
    profile = os.path.join(ROOT, "configs", "profiles", IMPL, "a800.json")
    os.makedirs(os.path.dirname(profile), exist_ok=True)
    derive("ring-flash-attn/a800", "a800", FLASH_KEEP + "," + HOST_KEEP, DERIVE_NOTE, IMPL, FLASH_KEEP_CYCLES)
    score_csv, fit_csv = os.path.join(TMP, "a800_score.csv"), os.path.join(TMP, "a800_fit.csv")
    out = {"score": ringsim("calibrate", "--from-times", ROWS, "--impl", IMPL, "--free", "none",
                            "--base-profiles", "configs/profiles", "--report", score_csv)}
    out["overlap"] = ringsim("calibrate", "--from-times", ROWS, "--impl", IMPL, "--free",
                             "overlap," + HOST_FREE, "--holdout", "sp", "--base-profiles", "configs/profiles")
    # The same fit without the counted operations (host_op_s stays the derived profile's 0): one cost per step
    # and per call, as the upstream library's measured host terms are.
    out["no_ops"] = ringsim("calibrate", "--from-times", ROWS, "--impl", IMPL, "--free", NO_OPS_FREE, "--holdout", "sp",
                            "--base-profiles", "configs/profiles")
    derived_notes = json.load(open(profile))["provenance"]["notes"]
    out["fit"] = ringsim("calibrate", "--from-times", ROWS, "--impl", IMPL, "--free", HOST_FREE,
                         "--holdout", "sp", "--base-profiles", "configs/profiles", "--date", DATE,
                         "--profiles-dir", "configs/profiles", "--report", fit_csv)
    p = json.load(open(profile))
    p["provenance"]["notes"] += KEEP_NOTE
    with open(profile, "w") as f:
        json.dump(p, f, indent=2)
        f.write("\n")
    out["derived_notes"] = derived_notes
    out["score_rows"] = by_nodes(read_csv(score_csv), "fitted_s")
    fit_rows = read_csv(fit_csv)
    out["fit_rows"] = by_nodes(fit_rows, "held_out_sp_s")
    out["step_rows"] = by_step_size(fit_rows, "held_out_sp_s")
    out["layout_rows"] = layout_ratios(fit_rows, "held_out_sp_s")
    return out


def layout_ratios(rep, column):
    """The host-paced forward calls (1 head, at most 8k tokens per GPU, main run): per node count, the
    geometric mean over sequence lengths of zigzag / contiguous and striped / contiguous, measured and
    predicted (held out)."""
    calls = {}
    for r in rep:
        if r["pass"] != "fwd" or r["heads"] != "1/1/128" or not r["table"].endswith("main"):
            continue
        if int(r["n_seq"]) // int(r["sp"]) > 8192:
            continue
        calls[(int(r["sp"]) // 8, int(r["n_seq"]), r["layout"])] = (float(r["seconds"]), float(r[column]))
    out = {}
    for (nodes, n, layout), (m, p) in calls.items():
        base = calls.get((nodes, n, "contiguous"))
        if layout == "contiguous" or not base:
            continue
        g = out.setdefault((nodes, layout), [0, 0.0, 0.0])
        g[0] += 1
        g[1] += math.log(m / base[0])
        g[2] += math.log(p / base[1])
    return {k: (v[0], math.exp(v[1] / v[0]), math.exp(v[2] / v[0])) for k, v in out.items()}


def kv_step_mb(r):
    """MB of K and V (bf16) one ring step moves: the local chunk's keys and values."""
    _, kv_heads, head_dim = (int(x) for x in r["heads"].split("/"))
    return 2 * int(r["batch"]) * int(r["n_seq"]) // int(r["sp"]) * kv_heads * head_dim * 2 / 1e6


def by_step_size(rep, column):
    """Mean signed error of the >= 20 ms calls by pass, K/V MB per step (powers of two) and node count."""
    groups = {}
    for r in rep:
        m, p = float(r["seconds"]), float(r[column])
        if m < BIG_S:
            continue
        mb = kv_step_mb(r)
        bucket = 2 ** round(math.log2(mb))
        groups.setdefault((r["pass"], bucket, int(r["sp"]) // 8), []).append(p / m - 1)
    return {k: (len(v), sum(v) / len(v)) for k, v in groups.items()}


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
    w("UltraAttn's ring calls (its copy of ring-flash-attention: implementation `%s`, docs/implementations.md)" % IMPL)
    w("on the A800 cluster whose kernels (above) and NCCL probes")
    w("(configs/links/a800.json) are the components of this section: 8 to 64 GPUs (1 to 8 nodes of 8),")
    w("1 and 32 heads of 128, 2k to 512k tokens, causal and full masks, forward and backward apart, one")
    w("replicate table of the 4-node causal runs (data/systems/ultraattn_ring_runs_a800.csv, normalized by")
    w("scripts/normalize-cp-tables.py into %s). **From components alone** (%s/a800 as derived from" % (ROWS, IMPL))
    w("ring-flash-attn/a800: the A800 kernel fit, the A800 probes, the H100 VM's host terms, no cost per")
    w("counted operation), nothing fitted:")
    w("")
    w("    ringsim calibrate --from-times %s --impl %s --free none --base-profiles configs/profiles" % (ROWS, IMPL))
    w("")
    for l in lines_of(res["score"])[:3]:
        w("    " + l)
    w("")
    w_nodes(w, res["score_rows"], "predicted")
    w("The small calls are the host's: a call of a few milliseconds is ring steps of tens of microseconds of")
    w("kernel each, paced by the loop's Python and NCCL calls, and that cluster's host is not the measured")
    w("VM's. **The host terms fitted on these rows** (forward: per step, per call and per eager operation")
    w("the copy's code dispatches, counted in configs/ring_steps/%s.json; backward: per step and per call;" % IMPL)
    w("what no component file measures for this cluster), held out one node count at a time, written into")
    w("configs/profiles/%s/a800.json:" % IMPL)
    w("")
    w("    ringsim calibrate --from-times %s --impl %s --free %s --holdout sp \\" % (ROWS, IMPL, HOST_FREE))
    w("        --base-profiles configs/profiles --profiles-dir configs/profiles")
    w("")
    for l in lines_of(res["fit"]):
        w("    " + l)
    w("")
    w_nodes(w, res["fit_rows"], "held out by node count")
    w("The counted operations are what tells the layouts apart where the host sets the pace: the copy's")
    w("zigzag forward merges nothing after its first step and sends one message a step, its stripe merges")
    w("slices through three more views, so at one head and at most 8k tokens per GPU (geometric mean over")
    w("the lengths of the main run, held out by node count):")
    w("")
    w("| nodes | lengths | zigzag / contiguous measured | predicted | striped / contiguous measured | predicted |")
    w("|---|---|---|---|---|---|")
    lr = res["layout_rows"]
    for nodes in sorted({k[0] for k in lr}):
        z, st = lr.get((nodes, "zigzag")), lr.get((nodes, "striped"))
        w("| %d | %d | %.2f | %.2f | %.2f | %.2f |" % (nodes, z[0], z[1], z[2], st[1], st[2]))
    w("")
    w("One cost per call and per step alone (`host_op_s` held at 0, as the upstream library's measured host")
    w("terms are) predicts 1.00 for both ratios, the same calls per step in every layout; fitted so, held out")
    w("by node count:")
    w("")
    w("    ringsim calibrate --from-times %s --impl %s --free %s --holdout sp \\" % (ROWS, IMPL, NO_OPS_FREE))
    w("        --base-profiles configs/profiles   # before the fit above writes host_op_s")
    w("")
    for l in lines_of(res["no_ops"]):
        if l.startswith("leave-") or l.startswith("    ") and "time" in l and "[" not in l:
            w("    " + l)
    w("")
    w("`overlap` freed with them (not shipped; the loop overlaps the transfer by construction):")
    w("")
    for l in lines_of(res["overlap"])[:7]:
        w("    " + l)
    w("")
    w("What is left: across nodes the held-out time error meets the 15 % bar; within one node it does not")
    w("(the bar is 10 %): held out, the one-node calls take the host's pace fitted on the multi-node ones,")
    w("whose small calls spend 1.5 to 2 times as long per step as the one-node calls at the same layout,")
    w("which no counted operation tells (a cross-node message's NCCL proxy work on the host is one")
    w("candidate, unmeasured). The calls of at least 20 ms are predicted 9-17 % too fast (mean signed error")
    w("above), more across nodes than within one, and the overlap fit closes little of it. NCCL's")
    w("send/receive kernel beside the flash kernel is modelled")
    w("(docs/transport.md: 16 of an A800's 108 SMs while a transfer runs inside one node) and accounts for")
    w("about 1.5 points of the single node's bias; a communicator that reaches another node holds 2 SMs, so")
    w("it is not what slows the multi-node calls. The same held-out errors by the K/V a step moves (mean")
    w("signed, calls >= 20 ms; MB rounded to a power of two; - where no call):")
    w("")
    w_steps(w, res["step_rows"])
    w("Across nodes the error does not grow with the node count (2, 4 and 8 nodes alike at one step size),")
    w("so it is not NIC sharing that grows with scale; and the 32-head calls whose steps are mostly transfer")
    w("(16 MB of K/V per step and less: compute a quarter of the transfer or less) are predicted within 5 %,")
    w("so the probed rate (configs/links/a800.json: 23.0 GB/s, 42 us per message, UltraAttn's i <-> i + 8")
    w("pairs) is the rate these transfers get. (The 8-node calls under 8 MB are 1-head calls whose steps")
    w("last a fraction of a millisecond: the host's pace, which the host terms fitted on every node count")
    w("leave too fast there.) The error peaks where a step's compute and its transfer are of one size, the")
    w("mark of a transfer that overlaps the flash kernel less than the model's max(compute, transfer). A")
    w("mechanism with a reason in the code: UltraAttn's copy of the loop (oliverYoung2001/UltraAttn,")
    w("comm_lib/comm_utils.py @ 3e56ea1, `RingComm = RingCommOld`) posts K and V as separate `isend` /")
    w("`irecv` calls on a send and a receive stream before the flash call, so each pair's stream queues a")
    w("second NCCL kernel behind the first; NCCL's CTAs do not share an SM with a compute kernel (NCCL's")
    w("maintainers, NVIDIA/nccl#689), and a kernel queued behind a running grid that fills every SM waits")
    w("for that grid's last wave (NVIDIA/nccl#1431). That rule alone (V's transfer after the flash kernel")
    w("where the kernel outlasts K's) still predicts more overlap than measured at compute ~ transfer (a")
    w("forward step on 8 nodes with 5.1 ms of compute and 5.9 ms of transfer took 10.7 ms, near their")
    w("sum). No component here times an `isend`/`irecv` beside a flash kernel of known length, which is")
    w("what would calibrate it; until one does, the rule is a finding, not a model term.")
    w("")


def w_steps(w, groups):
    nodes = sorted({k[2] for k in groups})
    w("| pass | K/V MB per step | " + " | ".join("%d node%s" % (n, "s" if n > 1 else "") for n in nodes) + " |")
    w("|---|---|" + "---|" * len(nodes))
    for pas in ("fwd", "bwd"):
        for mb in sorted({k[1] for k in groups if k[0] == pas}):
            cells = []
            for n in nodes:
                g = groups.get((pas, mb, n))
                cells.append("%+.0f%% (%d)" % (100 * g[1], g[0]) if g else "-")
            w("| %s | %s | %s |" % (pas, ("%g" % mb), " | ".join(cells)))
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
